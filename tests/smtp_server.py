"""A real SMTP server on 127.0.0.1 for the tests (aiosmtpd), keeping what it receives.

    with smtp_server() as (inbox, port): ...          # plain
    with smtp_server(tls_context=ctx, require_starttls=True, ...) as (inbox, port): ...
"""
from __future__ import annotations

import contextlib
import email
import socket
from collections.abc import Iterator
from email import policy

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult


class Inbox:
    """An aiosmtpd handler keeping what it receives, and an authenticator accepting one login."""

    def __init__(self, login: bytes = b"", password: str = "") -> None:
        self.messages: list[bytes] = []
        self.logins: list[tuple[bytes, bytes]] = []
        self.accept = (login, password.encode())

    async def handle_DATA(self, server, session, envelope) -> str:
        self.messages.append(envelope.content)
        return "250 Message accepted for delivery"

    def authenticate(self, server, session, envelope, mechanism, auth_data) -> AuthResult:
        self.logins.append((auth_data.login, auth_data.password))
        ok = (auth_data.login, auth_data.password) == self.accept
        return AuthResult(success=ok, handled=False)   # handled=False: aiosmtpd answers 535 on a failure

    def only(self) -> email.message.EmailMessage:
        """The one message received, parsed."""
        assert len(self.messages) == 1, f"{len(self.messages)} messages arrived"
        return email.message_from_bytes(self.messages[0], policy=policy.default)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def smtp_server(inbox: Inbox | None = None, **smtp_options) -> Iterator[tuple[Inbox, int]]:
    inbox = inbox or Inbox()
    controller = Controller(inbox, hostname="127.0.0.1", port=free_port(), **smtp_options)
    controller.start()
    try:
        yield inbox, controller.port
    finally:
        controller.stop()
