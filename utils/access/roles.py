"""Who may do what on a shared duckask server: users with API keys, each with a role.

Roles, each able to do what the one before it can:

- ``reader``: ask questions, run read-only SQL;
- ``proposer``: also propose writes (a card waits for an approver);
- ``approver``: also approve or reject T1/T2 writes, others' included, and see every pending write;
- ``admin``: everything an approver can (the one shared ``--api-key`` is a single admin user).

Keys are never stored: the users file (``users_file``, YAML) holds each key's sha256 (keys are random
32-byte tokens, so a plain hash is enough; ``duckask users add`` makes one, prints it once, stores its
hash). A role may have a table allowlist for reads; a question that needs another table is refused with
the table named. An entry names a table or view of the schema ``main`` (``teams``; a model of the semantic
directory too) or of the schema it says (``hr.teams``); names compare as DuckDB compares them (ASCII letters
folded, ``binder.fold``), and what a query reads is what DuckDB's binder resolves, so ``hr.teams`` is never
``teams``. ``four_eyes: true`` (in the file) stops anyone approving their own T2 change.

    users:
      - {name: ann, role: approver, key_sha256: 9f86d0...}
      - {name: bob, role: reader, key_sha256: 2c26b4...}
    roles:
      reader: {tables: [teams, batting]}
    four_eyes: true
"""
from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from duckask.utils.db.binder import Qualified
from duckask.utils.db.quoting import quote_ident
from duckask.utils.db.reads import TableRef, fold, resolve

ROLES = ("reader", "proposer", "approver", "admin")
_NAME = re.compile(r"^[A-Za-z0-9._@-]{1,64}$")


class AccessError(ValueError):
    """A users file that cannot be used: what is wrong, where, and how to fix it."""


@dataclass(frozen=True)
class User:
    name: str
    role: str
    tables: frozenset[str] | None = None      # "schema.table" (folded) this user may read (None: all)
    key_id: str = ""                          # from the key's hash (``key_id``); "" for a user without a key

    def __post_init__(self):
        if self.tables is not None:       # "teams" and "main.teams" are one entry; "hr.teams" another
            object.__setattr__(self, "tables", frozenset(e for t in self.tables if (e := entry(t))))

    def at_least(self, role: str) -> bool:
        return ROLES.index(self.role) >= ROLES.index(role)

    @property
    def id(self) -> str:
        """Who this is in the state several servers share (threads, pending cards): the key, never the name, so
        another server's "rita" with another key is another person. A user without a key (an open server's
        client, named by its address) is their name."""
        return f"key:{self.key_id}" if self.key_id else f"name:{self.name}"


@dataclass
class Users:
    users: list[tuple[str, User]] = field(default_factory=list)      # (key sha256, user)
    four_eyes: bool = False

    def find(self, key: str) -> User | None:
        """The user whose key this is (compared in constant time against every stored hash), or None."""
        digest = hash_key(key) if key else ""
        found = None
        for stored, user in self.users:
            if hmac.compare_digest(stored, digest):
                found = user
        return found


def hash_key(key: str) -> str:
    return hashlib.sha256(key.strip().encode()).hexdigest()


def key_id(key_sha256: str) -> str:
    """A user's identity in the shared state, derived from their key's stored hash (not the hash itself: the
    state's readers learn nothing the users file holds)."""
    return hashlib.sha256(f"duckask user {key_sha256}".encode()).hexdigest()[:32]


def shared_key_users(key: str) -> Users:
    """The single shared ``--api-key``: one admin user."""
    digest = hash_key(key)
    return Users([(digest, User("api key", "admin", key_id=key_id(digest)))])


def load_users(path: str | Path, shared_key: str | None = None) -> Users:
    """The users file (plus the shared key as an admin, when given); AccessError says what is wrong."""
    p = Path(path).expanduser()
    try:
        data = yaml.safe_load(p.read_text()) or {}
    except (OSError, yaml.YAMLError) as e:
        raise AccessError(f"cannot read the users file {p}: {e}") from e
    roles = data.get("roles") or {}
    if set(roles) - set(ROLES):
        raise AccessError(f"{p}: roles may be {', '.join(ROLES)}, not {', '.join(sorted(set(roles) - set(ROLES)))}")
    out = shared_key_users(shared_key) if shared_key else Users()
    out.four_eyes = bool(data.get("four_eyes", False))
    for i, u in enumerate(data.get("users") or [], 1):
        name, role, digest = u.get("name"), u.get("role"), str(u.get("key_sha256") or "")
        where = f"{p}: user {i} ({name or 'no name'})"
        if not name or not _NAME.match(str(name)):
            raise AccessError(f"{where}: a name of letters, digits and ._@- is needed")
        if role not in ROLES:
            raise AccessError(f"{where}: role must be one of {', '.join(ROLES)}, not {role!r}")
        if not re.fullmatch(r"[0-9a-f]{64}", digest):
            raise AccessError(f"{where}: key_sha256 must be the key's sha256 in hex (duckask users add makes one); "
                              "a plain key is never stored")
        out.users.append((digest, User(str(name), role, _allowlist(p, role, roles.get(role)), key_id(digest))))
    return out


def _allowlist(p: Path, role: str, spec) -> frozenset[str] | None:
    """A role's readable tables: None (every table) only when the role has no ``tables`` key; a list is exactly
    those tables, so ``tables: []`` is none. Anything else is an AccessError saying what to write."""
    bad = AccessError(f"{p}: roles: {role}: write {{tables: [table, ...]}} (a list of table names; [] for none; "
                      f"leave tables out for every table), not {spec!r}")
    if spec is None:
        return None
    if not isinstance(spec, dict):
        raise bad
    if "tables" not in spec:
        return None
    tables = spec["tables"]
    if not isinstance(tables, list) or not all(isinstance(t, str) for t in tables):
        raise bad
    entries = [entry(t) for t in tables]
    if None in entries:
        raise AccessError(f"{p}: roles: {role}: tables: {tables[entries.index(None)]!r} is not a table name: write "
                          "table (in the schema main) or schema.table")
    return frozenset(e for e in entries if e)


def entry(name: str) -> str | None:
    """An allowlist entry as compared: ``teams`` is ``main.teams``, ``hr.teams`` itself, folded; None when it is
    not one or two names."""
    parts = name.strip().split(".")
    if not 1 <= len(parts) <= 2 or not all(p.strip() for p in parts):
        return None
    return fold(".".join(["main", *parts][-2:]))


def shown(key: str) -> str:
    """An entry as a person reads it: ``main.`` left out."""
    return key.removeprefix("main.")


def add_user(path: str | Path, name: str, role: str) -> str:
    """Add ``name`` with ``role`` to the users file (made if missing) and return the new key (shown once)."""
    if role not in ROLES:
        raise AccessError(f"role must be one of {', '.join(ROLES)}, not {role!r}")
    if not _NAME.match(name):
        raise AccessError("a name of letters, digits and ._@- is needed")
    p = Path(path).expanduser()
    data = (yaml.safe_load(p.read_text()) or {}) if p.exists() else {}
    if any(u.get("name") == name for u in data.get("users") or []):
        raise AccessError(f"{p} already has a user {name}; remove it first to give a new key")
    key = "dk_" + secrets.token_urlsafe(32)
    data.setdefault("users", []).append({"name": name, "role": role, "key_sha256": hash_key(key)})
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(yaml.safe_dump(data, sort_keys=False))
    p.chmod(0o600)
    return key


def may_propose(user: User) -> str | None:
    return None if user.at_least("proposer") else f"{user.name} is a {user.role}: proposing a write needs proposer"


def may_decide(user: User, card, four_eyes: bool) -> str | None:
    """Why ``user`` may not approve or reject ``card``, or None."""
    if not user.at_least("approver"):
        return f"{user.name} is a {user.role}: deciding a write needs approver"
    if four_eyes and card.tier == 2 and (card.user == user.name or card.proposer_id == user.id):
        return f"four_eyes: {user.name} proposed this schema change (T2), so another approver must decide it"
    return None


def may_see(user: User, card) -> bool:
    """A reader or proposer sees only their own pending writes (proposed with their key); an approver sees every
    one."""
    return user.at_least("approver") or owns(user, card)


def owns(user: User, card) -> bool:
    """Whether ``user`` proposed ``card``: the same key (``User.id``), never merely the same name."""
    return bool(card.proposer_id) and card.proposer_id == user.id


def outside(user: User, refs: Collection[TableRef], catalog: str) -> list[str]:
    """The names ``refs`` (as a statement wrote them) this user may not read (none without an allowlist): a name
    without a schema is ``main``'s (or a model's), another catalog than the database's is never on the list."""
    if user.tables is None:
        return []
    denied = set()
    for ref in refs:
        key = fold(f"{ref.schema or 'main'}.{ref.name}")
        if (ref.catalog and fold(ref.catalog) not in (catalog, "temp")) or key not in user.tables:
            denied.add(str(ref) if ref.catalog else shown(key))
    return sorted(denied)


class ScopedDatabase:
    """``database`` as one user may read it: a query that reads a table outside their allowlist is refused,
    the table named; everything else is the database's own (its checks, timeout and row cap).

    What a query reads is decided twice, from structure only: by ``db.reads`` (DuckDB's parse, CTEs
    resolved by scope: a CTE named after a forbidden table hides it only where it is in scope, never a
    ``main.people`` beside it), and by DuckDB's own binder (``get_table_names``), which also sees through
    views. A name the first finds must be on the allowlist; a base table the binder finds must be on it or
    behind an allowlisted view (a view is how an admin shows part of a table). A statement either cannot
    read is refused."""

    def __init__(self, database, user: User):
        self._database, self.reader = database, user

    @property
    def unscoped(self):
        """The database this user's allowlist limits (for what the deployer, not the user, supplies: an examples
        file is verified on it, then offered to the user only where she may run it)."""
        return self._database.unscoped

    @property
    def scope_key(self) -> str:
        """What this scope reads, for the caches that hold query results (the value index): two users with the same
        allowlist share them, a user with another never does."""
        return "tables:" + ",".join(sorted(self.reader.tables or ()))

    def refusal(self, sql: str) -> str | None:
        """Why this user may not run ``sql`` (the database's own refusal first), or None; every statement bound
        on one cursor."""
        with self._database.scope() as scope:
            return self._refusal(sql, scope)

    def _refusal(self, sql: str, scope) -> str | None:
        why = self._database.refusal(sql, scope)
        if why:
            return why
        reads = resolve(sql)
        if reads is None:
            return (f"refused: this statement cannot be read to check what {self.reader.name} may read; "
                    "send one SELECT")
        types = sorted(set(reads.types) & self._database.user_types)
        if types:       # enum_range(NULL::mood) lists a type's labels, whatever table they are used in
            return (f"refused: this names the type {', '.join(shown(t) for t in types)}, and {self.reader.name}'s "
                    "allowlist covers tables, not the database's types; compare with plain text instead")
        denied = outside(self.reader, reads.tables, self._database.catalog)
        if denied:
            return self._denied(denied)
        bound = scope.bind(sql)
        return self.unreadable(bound, scope) if bound is not None else None

    def unreadable(self, bound, scope) -> str | None:
        """Why a statement DuckDB's binder bound as ``bound`` (a query, or a write: its card) scans a table this
        user may not read, or None."""
        allowed = self._allowed_scans(scope)
        denied = sorted({shown(".".join(t[1:])) for t in bound.tables if t not in allowed})
        return self._denied(denied) if denied else None

    def _denied(self, denied: list[str]) -> str:
        return (f"refused: this needs {', '.join(denied)}, which {self.reader.name} ({self.reader.role}) may "
                f"not read; readable: {', '.join(sorted(shown(t) for t in self.reader.tables or [])) or 'none'}")

    def run(self, sql: str, **options):
        from duckask.utils.db.database import QueryOutcome

        with self._database.scope() as scope:
            why = self._refusal(sql, scope)
            if not why and self._database.live:     # the engine's tree is checked against this user's tables too
                options.update(asker=self.reader.id, readable=None if self.reader.tables is None else
                               {t[2] for t in self._allowed_scans(scope) if t[:2] == (self._database.catalog, "main")})
        if why:
            return QueryOutcome(sql=sql, status="refused", error=why)
        return self._database.run(sql, **options)

    def _allowed_scans(self, scope) -> set[Qualified]:
        """The tables the binder may scan for this user: each entry bound as a query of its own, so a view (or
        a model) on the list adds the tables behind it, and ``teams`` is whichever ``teams`` a bare name finds
        (a model first, as DuckDB's search path has it) and ``main.teams``."""
        allowed: set[Qualified] = set()
        for key in sorted(self.reader.tables or ()):
            schema, name = key.split(".", 1)
            forms = [quote_ident(name), f"{quote_ident(schema)}.{quote_ident(name)}"] if schema == "main" else \
                [f"{quote_ident(schema)}.{quote_ident(name)}"]
            for form in forms:
                bound = scope.bind(f"SELECT * FROM {form}")
                allowed |= set(bound.tables) if bound is not None else set()
        return allowed

    def __getattr__(self, name):
        return getattr(self._database, name)
