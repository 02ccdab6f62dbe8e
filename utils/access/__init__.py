"""Who may do what on a shared server (``roles``): users with hashed API keys, their roles (reader, proposer,
approver, admin), four eyes, and each role's read allowlist (``ScopedDatabase``). It reads the database's
binder (``db.binder``, ``db.reads``) to know what a query reads; the server and ``knowledge.keep`` ask it.
"""
