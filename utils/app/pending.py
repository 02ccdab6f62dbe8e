"""The writes a server holds for a decision: pending cards, their one-time approval tokens, the caps and
expiry (``duckask serve``; the routes are ``server_actions``).

Each pending card is kept with the sha256 of its approval token (32 random bytes, handed out once with
the card; a decision on a server without keys must bring it back) and the time it was held. Taking a card
out is the only way to decide it, so it is decided once. Each proposer (``card.user``) may have
``MAX_PENDING_PER_PROPOSER`` cards waiting and the server ``MAX_PENDING``: a proposal past either is refused
(``NoRoom``, a 429 on the server) and no one else's card is ever pushed out. A card waits ``PENDING_TTL_S``;
an older one is recorded in the audit log as ``expired`` (decided by no one) and can no longer run.

Where the cards live is the state's (``utils/state/cards``): in this process by default (a restart forgets
them; their audit entries stay pending), or in the shared Postgres state (``--state``), where every server
sees them, a card is taken by exactly one server, and the caps count every server's cards. A server lists and
decides only the cards of its own database.
"""
from __future__ import annotations

import secrets
import time

from duckask.utils.state.cards import Held, MemoryCards, token_hash
from duckask.utils.state.writes import expire
from duckask.utils.writes.card import WriteCard

MAX_PENDING = 500                # writes waiting on this server, all proposers together
MAX_PENDING_PER_PROPOSER = 20    # writes one proposer may have waiting
PENDING_TTL_S = 3600.0           # how long a write waits for its decision before it expires


class NoRoom(Exception):
    """A proposer (or the server) already holds as many pending writes as it may."""


class PendingWrites:
    """Cards waiting for a decision, by audit id, in ``store`` (``MemoryCards`` unless a shared one is given);
    taking one out is the only way to decide it (once). Each proposer (``card.user``) may have ``per_proposer``
    waiting, the server ``total``; a card waits ``ttl_s``. With ``database``, only the cards proposed for that
    very file are seen (``card.db_id`` is its ``identity``: another file at the same relative path is another
    database)."""

    def __init__(self, per_proposer: int = MAX_PENDING_PER_PROPOSER, total: int = MAX_PENDING,
                 ttl_s: float = PENDING_TTL_S, clock=None, store=None, database=None):
        self.store = store if store is not None else MemoryCards()
        shared = not isinstance(self.store, MemoryCards)
        self.per_proposer, self.total, self.ttl_s = per_proposer, total, ttl_s
        self.clock = clock or (time.time if shared else time.monotonic)   # several processes share wall time
        self.database = database

    def _ours(self, held: Held | None) -> Held | None:
        if held is None or (self.database is not None and held.card.db_id != self.database.identity):
            return None
        return held

    @property
    def cards(self) -> dict[int, WriteCard]:
        return {h.card.id: h.card for h in self.store.all() if self._ours(h) and h.card.id is not None}

    def no_room_for(self, proposer: str, owner: str | None = None) -> str | None:
        """Why ``proposer`` (whose cards are ``owner``'s: ``WriteCard.owner``) may not have another write waiting
        now, or None."""
        return self._no_room(proposer, *self.store.counts(owner or proposer))

    def _no_room(self, proposer: str, mine: int, total: int) -> str | None:
        if mine >= self.per_proposer:
            return (f"{proposer} already has {mine} writes waiting for a decision, the most one proposer may: "
                    f"approve or reject some (GET /api/writes lists them), or wait until they expire "
                    f"({self.ttl_s / 60:g} minutes after each was proposed); nothing else was recorded")
        if total >= self.total:
            return (f"{total} writes are waiting for a decision on this server, the most it holds: "
                    "try again when some are decided or expired; nothing else was recorded")
        return None

    def add(self, card: WriteCard) -> str:
        """Keep ``card``; returns its approval token (shown once; only its hash is kept). NoRoom when its
        proposer, or the server, is at the limit: no other card is ever dropped to make room."""
        token = secrets.token_urlsafe(32)
        why = self.store.add_if_room(Held(card, token_hash(token), self.clock()),
                                     lambda mine, total: self._no_room(card.user, mine, total))
        if why:
            raise NoRoom(why)
        return token

    def put_back(self, held: Held) -> None:
        """A card taken out but not decided (the audit log could not be written), with its token."""
        self.store.put_back(held)

    def peek(self, card_id: int) -> Held | None:
        return self._ours(self.store.peek(card_id))

    def take(self, card_id: int) -> Held | None:
        """The card, out of the store for this caller alone (None when another took it first, or it is another
        database's)."""
        if self.peek(card_id) is None:
            return None
        return self.store.take(card_id)

    def take_expired(self) -> list[Held]:
        """The cards held ``ttl_s`` or longer, taken out (to be recorded as expired)."""
        return self.store.take_older(self.clock() - self.ttl_s)

    def expire_old(self, prep) -> None:
        """Record the cards that waited too long as expired (decided by no one); they can no longer run. When
        the audit log cannot be written, a card stays held (an approval needs that log too) for the next try."""
        from duckask.utils.writes.audit import AuditError

        reason = f"expired: not decided within {self.ttl_s / 60:g} minutes of its proposal"
        for held in self.take_expired():
            try:
                expire(held.card, prep.settings, reason)
            except AuditError:
                self.put_back(held)

    def hold(self, card: WriteCard, prep) -> str:
        """Keep a pending ``card`` for its decision and return its approval token; a 429 (the card recorded as
        expired, never held) when its proposer or the server has no room."""
        from starlette.exceptions import HTTPException

        self.expire_old(prep)
        try:
            return self.add(card)
        except NoRoom as e:
            expire(card, prep.settings, f"not held: {e}")
            raise HTTPException(429, str(e)) from e
