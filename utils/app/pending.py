"""The writes a server holds for a decision: pending cards, their one-time approval tokens, the caps and
expiry (``duckask serve``; the routes are ``server_actions``).

Each pending card is kept with the sha256 of its approval token (32 random bytes, handed out once with
the card; a decision on a server without keys must bring it back) and the time it was held. Taking a card
out is the only way to decide it, so it is decided once. Each proposer (``card.user``) may have
``MAX_PENDING_PER_PROPOSER`` cards waiting and the server ``MAX_PENDING``: a proposal past either is refused
(``NoRoom``, a 429 on the server) and no one else's card is ever pushed out. A card waits ``PENDING_TTL_S``;
an older one is recorded in the audit log as ``expired`` (decided by no one) and can no longer run. The
cards live in this process: a restart forgets them (their audit entries stay pending).
"""
from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
from dataclasses import dataclass

from duckask.utils.db.write_card import WriteCard
from duckask.utils.db.writes import expire

MAX_PENDING = 500                # writes waiting on this server, all proposers together
MAX_PENDING_PER_PROPOSER = 20    # writes one proposer may have waiting
PENDING_TTL_S = 3600.0           # how long a write waits for its decision before it expires


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass
class Held:
    """A pending card, the sha256 of its approval token, and when it was held (``PendingWrites.clock``)."""
    card: WriteCard
    token_sha256: str
    since: float

    def token_matches(self, token: object) -> bool:
        return isinstance(token, str) and hmac.compare_digest(token_hash(token), self.token_sha256)


class NoRoom(Exception):
    """A proposer (or the server) already holds as many pending writes as it may."""


class PendingWrites:
    """Cards waiting for a decision, by audit id; taking one out is the only way to decide it (once). Each
    proposer (``card.user``) may have ``per_proposer`` waiting, the server ``total``; a card waits ``ttl_s``."""

    def __init__(self, per_proposer: int = MAX_PENDING_PER_PROPOSER, total: int = MAX_PENDING,
                 ttl_s: float = PENDING_TTL_S, clock=time.monotonic):
        self.per_proposer, self.total, self.ttl_s, self.clock = per_proposer, total, ttl_s, clock
        self.held: dict[int, Held] = {}
        self.lock = threading.Lock()

    @property
    def cards(self) -> dict[int, WriteCard]:
        with self.lock:
            return {i: h.card for i, h in self.held.items()}

    def no_room_for(self, proposer: str) -> str | None:
        """Why ``proposer`` may not have another write waiting now, or None."""
        with self.lock:
            return self._no_room(proposer)

    def _no_room(self, proposer: str) -> str | None:
        mine = sum(1 for h in self.held.values() if h.card.user == proposer)
        if mine >= self.per_proposer:
            return (f"{proposer} already has {mine} writes waiting for a decision, the most one proposer may: "
                    f"approve or reject some (GET /api/writes lists them), or wait until they expire "
                    f"({self.ttl_s / 60:g} minutes after each was proposed); nothing else was recorded")
        if len(self.held) >= self.total:
            return (f"{len(self.held)} writes are waiting for a decision on this server, the most it holds: "
                    "try again when some are decided or expired; nothing else was recorded")
        return None

    def add(self, card: WriteCard) -> str:
        """Keep ``card``; returns its approval token (shown once; only its hash is kept). NoRoom when its
        proposer, or the server, is at the limit: no other card is ever dropped to make room."""
        token = secrets.token_urlsafe(32)
        with self.lock:
            if (why := self._no_room(card.user)):
                raise NoRoom(why)
            self.held[card.id] = Held(card, token_hash(token), self.clock())
        return token

    def put_back(self, held: Held) -> None:
        """A card taken out but not decided (the audit log could not be written), with its token."""
        with self.lock:
            self.held[held.card.id] = held

    def peek(self, card_id: int) -> Held | None:
        with self.lock:
            return self.held.get(card_id)

    def take(self, card_id: int) -> Held | None:
        with self.lock:
            return self.held.pop(card_id, None)

    def take_expired(self) -> list[Held]:
        """The cards held ``ttl_s`` or longer, taken out (to be recorded as expired)."""
        with self.lock:
            old = [i for i, h in self.held.items() if self.clock() - h.since >= self.ttl_s]
            return [self.held.pop(i) for i in old]

    def expire_old(self, prep) -> None:
        """Record the cards that waited too long as expired (decided by no one); they can no longer run. When
        the audit log cannot be written, a card stays held (an approval needs that log too) for the next try."""
        from duckask.utils.db.audit import AuditError

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
