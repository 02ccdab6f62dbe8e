"""The write path's parts: what a write statement is and what becomes of it.

- ``tiers``: T0-T3, from the parsers (``classify``, ``is_write``);
- ``plan``: what a write will do before anyone approves it (row estimate, plain explanation, the reads behind it);
- ``card``: ``WriteCard``, the card every surface shows, its status, summary and JSON;
- ``audit``: the log of every attempt (who proposed, who decided, what ran) in a DuckDB file of its own.

Proposing and deciding (``state.writes``) sit above, with the state that keeps the audit log and the pending cards
(the local file or the shared Postgres): the state stores these cards and entries, so it imports this package, and
the workflow picks its store from the state.
"""
