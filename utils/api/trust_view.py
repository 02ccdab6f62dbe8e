"""How an answer's confidence and a not-sure answer's candidates are shown: one place for every surface
(``present.py`` calls it for text, rich, HTML and JSON; the page and MCP read that JSON).
"""
from __future__ import annotations

import html as _html
from typing import TYPE_CHECKING, Any

from duckask.utils.delivery.export import nulls_shown

if TYPE_CHECKING:
    import pandas as pd

BADGE = {"high": "#1a7f37", "medium": "#9a6700", "low": "#cf222e"}


def confidence_line(conf: dict | None) -> str | None:
    """"Confidence: medium — needed a repair; joins 3 tables", or None when the answer was not assessed (the
    reasons read as words, with no parentheses in parentheses)."""
    if not conf:
        return None
    return f"Confidence: {conf['level']} — {'; '.join(conf['reasons'])}"


def public(conf: dict | None) -> dict | None:
    """The confidence as JSON: level, score, reasons, the signals it was read from (and drafts, if drawn)."""
    return dict(conf) if conf else None


def candidates(r) -> list[tuple[str, str, pd.DataFrame]]:
    """(label, SQL, rows) of a not-sure answer's candidates."""
    import pandas as pd

    return [(f"Candidate {i} ({a['drafts']} draft{'s' * (a['drafts'] != 1)})", a["sql"],
             a["df"] if a["df"] is not None else pd.DataFrame()) for i, a in enumerate(r.alternatives, 1)]


def candidates_text(r, max_rows: int) -> list[str]:
    out: list[str] = []
    for label, sql, df in candidates(r):
        table = nulls_shown(df.head(max_rows)).to_string(index=False) if len(df) else "(no rows)"
        out += ["", f"{label}:", sql, table]
    return out


def candidates_html(r, max_rows: int) -> list[str]:
    e = _html.escape
    return [f"<p><b>{e(label)}</b></p><pre>{e(sql)}</pre>"
            + (nulls_shown(df.head(max_rows)).to_html(index=False) if len(df) else "<p>(no rows)</p>")
            for label, sql, df in candidates(r)]


def badge_html(conf: dict | None) -> str:
    """A coloured badge with the level, the reasons as its title (hover) and beside it."""
    if not conf:
        return ""
    e = _html.escape
    why = "; ".join(conf["reasons"])
    return (f"<p><span title='{e(why)}' style='background:{BADGE[conf['level']]};color:#fff;border-radius:4px;"
            f"padding:1px 6px'>confidence: {e(conf['level'])}</span> <small>{e(why)}</small></p>")


def candidates_json(r, rows_json, max_rows: int | None) -> list[dict[str, Any]]:
    return [{"label": label, "sql": sql, "columns": [str(c) for c in df.columns], "rows": rows_json(df, max_rows),
             "row_count": len(df)} for label, sql, df in candidates(r)]
