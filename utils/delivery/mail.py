"""Email a result by SMTP: the question, the answer, the SQL and (when short) the rows in the body, the
whole table attached as ``result.csv`` (or any export format).

``build_message(...)`` makes the ``EmailMessage`` (plain text, attachment from ``export.frame_bytes``);
``send_message(msg, settings)`` delivers it through ``settings.smtp_host`` (STARTTLS, then a login when
``smtp_user`` is set); ``send_result(result, to)`` does both for a duckask ``Result``. Every problem is a
``MailError`` saying which server and what to check; the password never appears in one.

Run on its own::

    python -m duckask.utils.delivery.mail --db PATH --to you@example.com "SELECT 42"
"""
from __future__ import annotations

import argparse
import smtplib
import socket
import ssl
import sys
import textwrap
from collections.abc import Iterable
from email.message import EmailMessage
from email.utils import formataddr, formatdate, getaddresses, make_msgid, parseaddr
from types import SimpleNamespace
from typing import Any

import pandas as pd

from duckask.utils.config import Settings, load_settings
from duckask.utils.db.database import DatabaseError, open_database
from duckask.utils.delivery.export import FORMATS, ExportError, frame_bytes, nulls_shown

BODY_ROWS = 20          # a result this short is also written out in the body
SUBJECT_CHARS = 60      # the question's share of the default subject
NO_HOST = "no SMTP server configured: set smtp_host in the config file or DUCKASK_SMTP_HOST"


class MailError(RuntimeError):
    """The result could not be mailed; the message says why and what to check."""


def recipients(to: str | Iterable[str]) -> list[str]:
    """The addresses in ``to`` (a comma-separated string or a list), each checked; MailError if one is bad."""
    items = [to] if isinstance(to, str) else list(to)
    text = ", ".join(items)
    if any(c in text for c in "\r\n"):
        raise MailError(f"bad recipient list {text!r}: line breaks are not allowed")
    out = []
    for name, addr in getaddresses(items):
        local, _, domain = addr.rpartition("@")
        if not (local and "." in domain.strip(".") and addr in text and not any(c.isspace() for c in addr)):
            raise MailError(f"bad recipient address {addr or text!r}: give addresses like name@example.com, "
                            "separated by commas")
        out.append(formataddr((name, addr)))
    if not out:
        raise MailError("no recipient: give at least one address, like name@example.com")
    return out


def one_line(text: str, limit: int | None = None) -> str:
    """``text`` on one line (a mail header cannot hold line breaks), cut to ``limit`` characters."""
    text = " ".join(text.split())
    return text if limit is None or len(text) <= limit else text[:limit - 1] + "…"


def build_message(*, to: list[str], sender: str, subject: str, question: str, answer: str, sql: str | None,
                  df: pd.DataFrame | None, attachment_format: str = "csv", db: str | None = None) -> EmailMessage:
    """A plain-text message: question, answer, SQL, row count and short results; the table attached."""
    msg = EmailMessage()
    msg["From"] = sender
    msg["To"] = ", ".join(recipients(to))
    msg["Subject"] = one_line(subject)
    msg["Date"] = formatdate(localtime=True)
    msg["Message-ID"] = make_msgid(domain=parseaddr(sender)[1].rpartition("@")[2] or "localhost")
    lines = [f"Question: {question.strip()}", "", "Answer:", answer.strip() or "(no answer)", ""]
    if db:
        lines += [f"Database: {db}", ""]
    if sql:
        lines += ["SQL:", textwrap.indent(sql.strip(), "    "), ""]
    attachment = None
    if df is None:
        lines.append("No result table.")
    else:
        attachment = frame_bytes(df, attachment_format)
        lines.append(f"{len(df)} row{'' if len(df) == 1 else 's'}, attached as result.{attachment_format}.")
        if 0 < len(df) <= BODY_ROWS:
            lines += ["", nulls_shown(df).to_string(index=False)]
    msg.set_content("\n".join(lines) + "\n")
    if attachment:
        data, media_type = attachment
        maintype, subtype = media_type.split("/")
        msg.add_attachment(data, maintype=maintype, subtype=subtype, filename=f"result.{attachment_format}")
    return msg


def _no_secret(text: str, settings: Settings) -> str:
    return text.replace(settings.smtp_password, "***") if settings.smtp_password else text


def send_message(msg: EmailMessage, settings: Settings, *, ssl_context: ssl.SSLContext | None = None) -> None:
    """Deliver ``msg`` through the configured SMTP server; MailError on any failure."""
    host, port, timeout = settings.smtp_host, settings.smtp_port, settings.smtp_timeout_s
    if not host:
        raise MailError(NO_HOST)
    where = f"{host}:{port}"
    try:
        with smtplib.SMTP(host, port, timeout=timeout) as smtp:
            if settings.smtp_starttls:
                smtp.ehlo()
                if not smtp.has_extn("starttls"):
                    raise MailError(f"the SMTP server {where} does not offer STARTTLS: check smtp_host and "
                                    "smtp_port (587 usually offers it), or set smtp_starttls = false "
                                    "(sends in clear text: only on a trusted network)")
                smtp.starttls(context=ssl_context or ssl.create_default_context())
            if settings.smtp_user:
                smtp.login(settings.smtp_user, settings.smtp_password or "")
            smtp.send_message(msg)
    except MailError:
        raise
    except smtplib.SMTPAuthenticationError as e:
        raise MailError(_no_secret(f"the SMTP server {where} refused the login of {settings.smtp_user!r} "
                                   f"({e.smtp_code}): check smtp_user and smtp_password", settings)) from None
    except smtplib.SMTPNotSupportedError as e:
        raise MailError(f"the SMTP server {where} does not support that ({e}): a login usually needs "
                        "smtp_starttls = true; without smtp_user duckask does not log in") from None
    except smtplib.SMTPRecipientsRefused as e:
        raise MailError(f"the SMTP server {where} refused the recipients {', '.join(e.recipients)}: "
                        "check the addresses") from None
    except smtplib.SMTPResponseException as e:
        # smtplib's own "Line too long." (an over-long reply line) is a str; the server's replies are bytes
        said = e.smtp_error.decode(errors="replace") if isinstance(e.smtp_error, bytes) else e.smtp_error
        raise MailError(_no_secret(f"the SMTP server {where} answered {e.smtp_code} "
                                   f"{said}: check the sender address "
                                   "(smtp_from) and the server's rules", settings)) from None
    except ssl.SSLError as e:
        raise MailError(f"the TLS handshake with {where} failed ({e.reason or e}): check that the server's "
                        "certificate is valid for that host name") from e
    except ConnectionRefusedError:
        raise MailError(f"could not connect to the SMTP server {where}: connection refused; check smtp_host, "
                        "smtp_port and that the server is running") from None
    except TimeoutError:
        raise MailError(f"the SMTP server {where} did not answer within {timeout:g}s: check smtp_host, "
                        "smtp_port and any firewall (or raise smtp_timeout_s)") from None
    except socket.gaierror as e:
        raise MailError(f"cannot find the SMTP server {host!r} ({e.strerror}): check smtp_host") from None
    except (smtplib.SMTPException, OSError) as e:
        raise MailError(_no_secret(f"sending through the SMTP server {where} failed: {e}", settings)) from None


def send_result(result: Any, to: str | Iterable[str], settings: Settings | None = None, *,
                attachment_format: str = "csv", subject: str | None = None,
                ssl_context: ssl.SSLContext | None = None) -> EmailMessage:
    """Mail ``result`` (question, answer, sql, df, db) to ``to``; returns the message sent."""
    settings = settings or load_settings()
    if not settings.smtp_host:
        raise MailError(NO_HOST)
    user = settings.smtp_user if settings.smtp_user and "@" in settings.smtp_user else None
    sender = settings.smtp_from or user or f"duckask@{socket.gethostname()}"
    msg = build_message(to=recipients(to), sender=sender,
                        subject=subject or f"duckask: {one_line(result.question, SUBJECT_CHARS)}",
                        question=result.question, answer=result.answer, sql=result.sql, df=result.df,
                        attachment_format=attachment_format, db=result.db)
    send_message(msg, settings, ssl_context=ssl_context)
    return msg


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Run one query through duckask's safe executor and email the "
                                             "result (SMTP settings from the config file).")
    ap.add_argument("--db", required=True)
    ap.add_argument("--to", required=True, help="addresses, separated by commas")
    ap.add_argument("--format", choices=FORMATS, default="csv", help="the attachment's format (default: csv)")
    ap.add_argument("--subject")
    ap.add_argument("sql")
    args = ap.parse_args(argv)
    settings = load_settings()
    try:
        outcome = open_database(args.db, settings).run(args.sql)
        if not outcome.ok:
            print(outcome.error, file=sys.stderr)
            return 2
        assert outcome.df is not None           # an ok outcome holds its rows
        rows = len(outcome.df)
        result = SimpleNamespace(question=args.sql, answer=f"The query returned {rows} row(s).", sql=outcome.sql,
                                 df=outcome.df, db=args.db)
        msg = send_result(result, args.to, settings, attachment_format=args.format, subject=args.subject)
    except (MailError, ExportError, DatabaseError) as e:
        print(e, file=sys.stderr)
        return 2
    print(f"sent to {msg['To']} through {settings.smtp_host}:{settings.smtp_port} ({rows} rows attached)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
