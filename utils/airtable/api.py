"""Airtable's REST API through pyairtable: the client, the base schema and a table's records, and every
failure said so a person can act on it.

pyairtable does the transport: the token as a bearer header (it comes from ``AIRTABLE_TOKEN`` and is never
printed), pagination by ``offset``, 429 (and 5xx) retried with backoff, honouring Retry-After, and the
GET-to-POST fallback for long URLs. This module checks each page is in Airtable's shape (a malformed page
stops the import before anything is written): records with their fields keyed by the field ids asked for
(a page keyed by field names would load as empty columns), and an ``offset`` that leads somewhere new (one
given before, or more pages than ``AIRTABLE_MAX_PAGES``, default 10,000, would never end). HTTP and network
errors become ``AirtableError``s that name the table and page, never the token.

Run on its own to list a base's tables (``AIRTABLE_TOKEN`` set)::

    python -m duckask.utils.airtable.api BASE_ID [--endpoint URL]
"""
from __future__ import annotations

import argparse
import os
import sys

from duckask.utils.airtable.schema import TablePlan

DEFAULT_ENDPOINT = "https://api.airtable.com"
#: The most pages a table's listing may take: 100 records a page, so a million records, twice the most
#: Airtable lets one base hold. ``AIRTABLE_MAX_PAGES`` (or ``max_pages``) changes it.
DEFAULT_MAX_PAGES = 10_000


class AirtableError(Exception):
    """What went wrong talking to Airtable, said so a person can act on it (never with the token)."""


def client(token: str | None, endpoint: str | None = None, timeout: float = 30.0):
    try:
        from pyairtable import Api, retry_strategy
    except ImportError as exc:
        raise AirtableError("the Airtable import needs pyairtable: pip install 'duckask[airtable]'") from exc
    if not token:
        raise AirtableError("set AIRTABLE_TOKEN to a personal access token with the data.records:read and "
                            "schema.bases:read scopes (https://airtable.com/create/tokens)")
    retry = retry_strategy(status_forcelist=(429, 500, 502, 503, 504), total=8, connect=1, read=1,
                           backoff_factor=0.5, backoff_max=30)
    # pyairtable annotates the timeout as ints; requests (which it hands them to) takes a float as well
    return Api(token, endpoint_url=endpoint or DEFAULT_ENDPOINT, timeout=(10, timeout),  # type: ignore[arg-type]
               retry_strategy=retry)


def _said(exc: Exception, what: str, endpoint: str) -> AirtableError:
    import requests

    if isinstance(exc, requests.HTTPError) and exc.response is not None:
        code = exc.response.status_code
        hint = {401: "the token was refused: check AIRTABLE_TOKEN",
                403: "the token may not read this base: give it the base and the data.records:read and "
                     "schema.bases:read scopes",
                404: "no such base or table: check the base id (it starts with app; see the base's URL)",
                429: "Airtable kept rate-limiting after several retries: try again in a minute"}.get(code, "")
        return AirtableError(f"{what}: HTTP {code} from {endpoint}" + (f": {hint}" if hint else ""))
    if isinstance(exc, requests.exceptions.RetryError):
        return AirtableError(f"{what}: still failing after retries ({endpoint}); try again later")
    if isinstance(exc, ValueError):       # the body was not JSON
        return AirtableError(f"{what}: the answer from {endpoint} was not JSON (a proxy's error page?)")
    return AirtableError(f"{what}: could not reach {endpoint}: {type(exc).__name__}")


def fetch_schema(api, base_id: str) -> dict:
    import requests

    try:
        data = api.get(api.base(base_id).urls.tables)
    except (requests.RequestException, ValueError) as exc:     # transport failures, and a body that is not JSON
        raise _said(exc, f"reading the schema of base {base_id}", str(api.endpoint_url)) from None
    if not isinstance(data, dict) or not isinstance(data.get("tables"), list):
        raise AirtableError(f"the schema of base {base_id} was not in Airtable's shape (no 'tables' list)")
    return data


def fetch_records(api, base_id: str, table: TablePlan, *, formula: str | None = None,
                  fields: list[str] | None = None, max_pages: int = DEFAULT_MAX_PAGES) -> list[dict]:
    """Every record of ``table`` (or those matching ``formula``), fields keyed by field id, all pages."""
    import requests

    t = api.table(base_id, table.id)
    options: dict = {"page_size": 100, "use_field_ids": True}
    if formula:
        options["formula"] = formula
    if fields is not None:
        options["fields"] = fields
    records: list[dict] = []
    offsets: set[str] = set()
    page = 0
    try:
        for page, body in enumerate(api.iterate_requests("get", t.urls.records, fallback=("post", t.urls.records_post),
                                                         options=options), 1):
            records.extend(_page_records(body, table, page))
            _check_offset(body, offsets, table, page, max_pages)
    except (requests.RequestException, ValueError) as exc:
        raise _said(exc, f"reading page {page + 1} of table '{table.airtable_name}'", str(api.endpoint_url)) from None
    return records


def _page_records(body, table: TablePlan, page: int) -> list[dict]:
    """One page's records, checked: Airtable's shape, and every field keyed by one of the table's field ids."""
    where = f"page {page} of table '{table.airtable_name}'"
    rows = body.get("records") if isinstance(body, dict) else None
    if not isinstance(rows, list) or not all(isinstance(r, dict) and isinstance(r.get("id"), str)
                                             and isinstance(r.get("fields") or {}, dict) for r in rows):
        raise AirtableError(f"{where} was not a list of records; nothing was written")
    for r in rows:
        stray = next((k for k in r.get("fields") or {} if k not in table.fields), None)
        if stray is not None:
            raise AirtableError(f"{where}: {_stray_field(stray, table)}; nothing was written")
    return rows


def _stray_field(key: str, table: TablePlan) -> str:
    """Why a record's field key is not one of the table's field ids (the key shown escaped and cut short)."""
    shown = repr(key[:60])
    if key in table.fields.values():
        return (f"its records carry the field {shown} by name, not by the field id asked for "
                "(returnFieldsByFieldId; does a proxy drop it?)")
    return (f"its records carry {shown}, which is no field of the table in the base's schema "
            "(a field added during the import? run it again)")


def _check_offset(body: dict, seen: set[str], table: TablePlan, page: int, max_pages: int) -> None:
    """Stop a listing that would never end: an ``offset`` an earlier page gave, or more than ``max_pages``."""
    offset = body.get("offset")
    if not offset:
        return                                    # the last page
    where = f"table '{table.airtable_name}'"
    if not isinstance(offset, str):
        raise AirtableError(f"page {page} of {where} gave an offset that is not a string; nothing was written")
    if offset in seen:
        raise AirtableError(f"page {page} of {where} gave the same offset as an earlier page, so the listing "
                            "would never end; nothing was written")
    if page >= max_pages:
        raise AirtableError(f"{where} has more than {max_pages:,} pages of records, more than any Airtable base "
                            "holds; nothing was written (set AIRTABLE_MAX_PAGES to allow more)")
    seen.add(offset)


def max_pages_of(given: int | None = None) -> int:
    """``max_pages``, else ``AIRTABLE_MAX_PAGES``, else 10,000: the most pages one table's listing may take."""
    raw = given if given is not None else os.environ.get("AIRTABLE_MAX_PAGES") or DEFAULT_MAX_PAGES
    try:
        pages = int(raw)
    except (TypeError, ValueError):
        pages = 0
    if pages < 1:
        raise AirtableError("AIRTABLE_MAX_PAGES must be a whole number of pages, at least 1")
    return pages


def endpoint_of(given: str | None) -> str:
    """``--endpoint``, else ``AIRTABLE_ENDPOINT_URL``, else Airtable's own address."""
    return (given or os.environ.get("AIRTABLE_ENDPOINT_URL") or DEFAULT_ENDPOINT).rstrip("/")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="List an Airtable base's tables and fields (AIRTABLE_TOKEN set).")
    ap.add_argument("base_id")
    ap.add_argument("--endpoint", help="the API's address (default: AIRTABLE_ENDPOINT_URL or api.airtable.com)")
    args = ap.parse_args(argv)
    try:
        schema = fetch_schema(client(os.environ.get("AIRTABLE_TOKEN"), endpoint_of(args.endpoint)), args.base_id)
    except AirtableError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    for t in schema["tables"]:
        print(f"{t.get('name')}: " + ", ".join(f"{f.get('name')} ({f.get('type')})" for f in t.get("fields", [])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
