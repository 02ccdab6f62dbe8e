"""Where a server keeps the write cards waiting for a decision (``app.pending.PendingWrites`` holds the rules:
caps, expiry, tokens): ``MemoryCards`` in the process (the default: one server, a restart forgets them) or
``PgCards`` in the shared Postgres state (every server sees every card; a restart forgets none).

Both keep a ``Held``: the card, the sha256 of its one-time approval token, and when it was held. Taking a card
out is the only way to decide it, and a take hands it to exactly one caller (in Postgres, ``DELETE ...
RETURNING`` in one transaction). ``add_if_room`` counts and adds in one step (Postgres: under an advisory lock),
so two servers cannot both take the last place.
"""
from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass

from duckask.utils.writes.card import WriteCard


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass
class Held:
    """A pending card, the sha256 of its approval token, and when it was held (the store's clock)."""
    card: WriteCard
    token_sha256: str
    since: float

    def token_matches(self, token: object) -> bool:
        return isinstance(token, str) and hmac.compare_digest(token_hash(token), self.token_sha256)


#: (cards this proposer holds, cards held in all) -> why there is no room, or None
RoomCheck = Callable[[int, int], "str | None"]


class MemoryCards:
    """Cards in this process, by audit id."""

    def __init__(self):
        self.held: dict[int, Held] = {}
        self.lock = threading.Lock()

    def counts(self, proposer: str) -> tuple[int, int]:
        with self.lock:
            return sum(1 for h in self.held.values() if h.card.owner == proposer), len(self.held)

    def add_if_room(self, held: Held, no_room: RoomCheck) -> str | None:
        with self.lock:
            mine = sum(1 for h in self.held.values() if h.card.owner == held.card.owner)
            if (why := no_room(mine, len(self.held))):
                return why
            assert held.card.id is not None         # a held card is recorded in the audit log (``propose``)
            self.held[held.card.id] = held
        return None

    def put_back(self, held: Held) -> None:
        assert held.card.id is not None             # a held card is recorded in the audit log (``propose``)
        with self.lock:
            self.held[held.card.id] = held

    def peek(self, card_id: int) -> Held | None:
        with self.lock:
            return self.held.get(card_id)

    def take(self, card_id: int) -> Held | None:
        with self.lock:
            return self.held.pop(card_id, None)

    def take_older(self, cutoff: float) -> list[Held]:
        with self.lock:
            old = [i for i, h in self.held.items() if h.since <= cutoff]
            return [self.held.pop(i) for i in old]

    def all(self) -> list[Held]:
        with self.lock:
            return list(self.held.values())


class PgCards:
    """Cards in the shared state's ``duckask.pending`` table (``state.postgres``)."""

    def __init__(self, state):
        self.state = state

    @staticmethod
    def _held(card: str, token: str, since: float) -> Held:
        return Held(WriteCard(**json.loads(card)), token, float(since))

    def counts(self, proposer: str) -> tuple[int, int]:
        with self.state.transaction() as cur:
            cur.execute("SELECT count(*) FILTER (WHERE proposer = $1), count(*) FROM duckask.pending", (proposer,))
            mine, total = cur.fetchone()
        return int(mine), int(total)

    def add_if_room(self, held: Held, no_room: RoomCheck) -> str | None:
        from duckask.utils.state.postgres import _LOCK_ID

        with self.state.transaction() as cur:
            cur.execute(f"SELECT pg_advisory_xact_lock({_LOCK_ID + 1})")
            cur.execute("SELECT count(*) FILTER (WHERE proposer = $1), count(*) FROM duckask.pending",
                        (held.card.owner,))
            mine, total = cur.fetchone()
            if (why := no_room(int(mine), int(total))):
                return why
            self._insert(cur, held)
        return None

    @staticmethod
    def _insert(cur, held: Held) -> None:
        cur.execute("INSERT INTO duckask.pending (id, proposer, db, card, token_sha256, since) VALUES ($1, $2, $3, $4, "
                    "$5, $6) ON CONFLICT (id) DO NOTHING",
                    (held.card.id, held.card.owner, held.card.db_id, json.dumps(dataclasses.asdict(held.card)),
                     held.token_sha256, held.since))

    def put_back(self, held: Held) -> None:
        with self.state.transaction() as cur:
            self._insert(cur, held)

    def peek(self, card_id: int) -> Held | None:
        with self.state.transaction() as cur:
            cur.execute("SELECT card, token_sha256, since FROM duckask.pending WHERE id = $1", (card_id,))
            row = cur.fetchone()
        return self._held(*row) if row else None

    def take(self, card_id: int) -> Held | None:
        with self.state.transaction() as cur:
            cur.execute("DELETE FROM duckask.pending WHERE id = $1 RETURNING card, token_sha256, since", (card_id,))
            row = cur.fetchone()
        return self._held(*row) if row else None

    def take_older(self, cutoff: float) -> list[Held]:
        with self.state.transaction() as cur:
            cur.execute("DELETE FROM duckask.pending WHERE since <= $1 RETURNING card, token_sha256, since", (cutoff,))
            rows = cur.fetchall()
        return [self._held(*r) for r in rows]

    def all(self) -> list[Held]:
        with self.state.transaction() as cur:
            cur.execute("SELECT card, token_sha256, since FROM duckask.pending ORDER BY id")
            rows = cur.fetchall()
        return [self._held(*r) for r in rows]
