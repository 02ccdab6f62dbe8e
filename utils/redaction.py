"""Redaction: a connection string's password or token is never shown. ``redact`` hides it, and a driver's message
about it carries nothing of its secrets (``redact_error``). The lowest layer: settings (``config``), databases
(``db.remote``, ``db.database``) and the shared state (``state.postgres``) all use it, and it imports nothing of
duckask's.
"""
from __future__ import annotations

import re

#: Keys whose value is a secret, in a URL's query (``?password=...``) or a libpq ``key=value`` string.
_SECRET_KEYS = r"(?:password|passwd|pwd|sslpassword|sslkey_password|motherduck_token|token|secret|api_key)"
#: A URL's query value runs to ``&`` or ``#`` (spaces included); a libpq value is quoted or has no space.
_IN_URL = re.compile(rf"(?i)(\b{_SECRET_KEYS}\s*=)([^&#]*)")
_IN_LIBPQ = re.compile(rf"(?i)(\b{_SECRET_KEYS}\s*=\s*)('(?:[^'\\]|\\.)*'?|\"[^\"]*\"?|\S+)")
_SCHEME = re.compile(r"^(?:[A-Za-z][A-Za-z0-9+.-]*://|md:|motherduck:)", re.I)


def redact(db: str) -> str:
    """The connection string with every password or token replaced by ``***``: a URL's password (up to the
    *last* ``@``, so one with ``@``, ``:``, ``/`` or spaces in it is hidden whole; a host hidden with it is
    the safe mistake), ``password=`` / ``token=`` values in its query or in a libpq ``key=value`` string
    (quoted values too). The one redaction: every displayed name and message goes through it."""
    out = str(db)
    scheme = _SCHEME.match(out)
    if not scheme:
        return _IN_LIBPQ.sub(lambda m: m.group(1) + "***", out)
    rest = out[scheme.end():]
    at = rest.rfind("@")
    if at > 0 and ":" in rest[:at]:
        rest = f"{rest[:at].split(':', 1)[0]}:***@{rest[at + 1:]}"
    return out[:scheme.end()] + _IN_URL.sub(lambda m: m.group(1) + "***", rest)


def _secrets(db: str) -> list[str]:
    """The secret parts of a connection string: the URL's password (between the first ``:`` of its userinfo and
    the last ``@``) and the values of its ``password=`` / ``token=`` keys."""
    out = []
    scheme = _SCHEME.match(db)
    if scheme:
        rest = db[scheme.end():]
        at = rest.rfind("@")
        if at > 0 and ":" in rest[:at]:
            out.append(rest[:at].split(":", 1)[1])
    out += [m.group(2).strip("'\"") for m in (_IN_URL if scheme else _IN_LIBPQ).finditer(db)]
    return [x for x in out if x]


def redact_error(message: str, db: str) -> str:
    """A driver's or engine's message about ``db`` with nothing of its secrets: ``redact`` first, then every
    piece of the password the driver may have split off at ``@``, ``:`` or ``/`` and quoted back (libpq reads
    ``user:wr@ngP@ss@host`` as the password ``wr`` and the host ``ngP@ss@host``): each run of whole pieces, the
    longest first, three characters or more anywhere, shorter ones where an ``@`` or ``:`` joins them on."""
    out = redact(message)
    for secret in _secrets(str(db)):
        bounds = [0, *(m.end() for m in re.finditer(r"[@:/]", secret))]
        ends = [*(m.start() for m in re.finditer(r"[@:/]", secret)), len(secret)]
        runs = sorted({secret[b:e] for b in bounds for e in ends if e > b}, key=len, reverse=True)
        for run in runs:
            if len(run) >= 3:
                out = out.replace(run, "***")
            else:
                out = re.sub(rf"(?<=[@:]){re.escape(run)}|{re.escape(run)}(?=@)", "***", out)
    return out
