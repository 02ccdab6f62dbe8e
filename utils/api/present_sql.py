"""How the user's own SQL, run by the safe executor (a ``QueryOutcome``), is shown: ``duckask sql`` (text and
``--json``), ``/api/sql`` and MCP ``run_sql`` (the answers to questions are ``present.py``'s).
"""
from __future__ import annotations

from typing import Any

from duckask.utils.api.present import rows_json
from duckask.utils.delivery.export import nulls_shown


def outcome_json(out, max_rows: int | None = None) -> dict[str, Any]:
    """The user's own SQL run by the safe executor (a ``QueryOutcome``), as JSON."""
    from duckask.utils.api.chart import choose_chart

    d: dict[str, Any] = {"status": out.status, "sql": out.sql, "error": out.error, "ms": round(out.ms, 1)}
    if out.ok:
        d.update(columns=[str(c) for c in out.df.columns], truncated=out.truncated, cut=out.cut, row_count=len(out.df),
                 rows=rows_json(out.df, max_rows), chart=choose_chart(out.df))
    return d


def outcome_text(out, max_rows: int = 20) -> tuple[str, str]:
    """(stdout, stderr) for the user's own SQL in plain text."""
    if not out.ok:
        return "", f"duckask: {out.error}"
    if len(out.df) == 0:
        return f"(no rows; columns: {', '.join(map(str, out.df.columns))})", ""
    more = f"... {len(out.df)}{'+' if out.truncated else ''} rows" if len(out.df) > max_rows or out.truncated else ""
    more = "; ".join(filter(None, [more, f"truncated: {out.cut}" if out.cut else ""]))
    return nulls_shown(out.df.head(max_rows)).to_string(index=False), more
