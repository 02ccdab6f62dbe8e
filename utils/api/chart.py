"""Which chart a result gets, chosen from its column types and shape, with no LLM:

- a time column (dates, timestamps, or integer years/seasons in 1800-2100) and numbers -> ``line``;
- one category and one number -> ``bar``;
- two numbers -> ``scatter``;
- otherwise (one value, text only, a wide mix) no chart.

``choose_chart(df)`` returns the spec ``{kind, x, y}`` (also in ``Result.to_dict()["chart"]``, which
the web page draws with the plotly.js the ``plotly`` package ships: nothing from a CDN);
``figure(df, spec, kind=None)`` builds the plotly Figure (``Result.chart()``, ``ask --chart FILE``).
"""
from __future__ import annotations

import re

import pandas as pd

KINDS = ("line", "bar", "scatter")
_TIME_NAME = re.compile(r"(^|_)(year|yr|season|date|day|month|week|time|timestamp|period)(_|id$|$)|^year", re.I)


def _is_time(s: pd.Series) -> bool:
    if pd.api.types.is_datetime64_any_dtype(s):
        return True
    if pd.api.types.is_integer_dtype(s) and _TIME_NAME.search(str(s.name)) and len(s.dropna()):
        return bool(s.dropna().between(1800, 2100).all())
    if s.dtype == object and len(s.dropna()):
        head = s.dropna().head(20)
        return all(hasattr(v, "isoformat") for v in head)
    return False


def _is_number(s: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s)


def choose_chart(df: pd.DataFrame | None) -> dict | None:
    """The chart for this result, or None when a chart would not help."""
    if df is None or len(df) < 2 or len(df.columns) < 2:
        return None
    cols = [str(c) for c in df.columns]
    time = [c for c, k in zip(cols, df.columns) if _is_time(df[k])]
    nums = [c for c, k in zip(cols, df.columns) if _is_number(df[k]) and c not in time]
    cats = [c for c, k in zip(cols, df.columns) if c not in time and c not in nums]
    if time and nums:
        return {"kind": "line", "x": time[0], "y": nums[:5]}
    if len(cats) == 1 and len(nums) == 1:
        return {"kind": "bar", "x": cats[0], "y": nums}
    if not cats and len(nums) == 2:
        return {"kind": "scatter", "x": nums[0], "y": nums[1:]}
    return None


def figure(df: pd.DataFrame, spec: dict | None = None, kind: str | None = None):
    """A plotly Figure of the result (``kind`` overrides the chosen one); ValueError when none fits."""
    import plotly.graph_objects as go

    spec = dict(spec or choose_chart(df) or {})
    if not spec:
        raise ValueError("no chart fits this result (it needs two columns and two rows: a time column or "
                         "a category with numbers, or two numbers)")
    kind = kind or spec["kind"]
    if kind not in KINDS:
        raise ValueError(f"chart kind must be one of {', '.join(KINDS)}, not {kind!r}")
    frame = df.copy()
    frame.columns = [str(c) for c in frame.columns]
    x = frame[spec["x"]]
    fig = go.Figure()
    for y in spec["y"]:
        if kind == "bar":
            fig.add_trace(go.Bar(x=x, y=frame[y], name=y))
        else:
            fig.add_trace(go.Scatter(x=x, y=frame[y], name=y, mode="lines+markers" if kind == "line" else "markers"))
    fig.update_layout(xaxis_title=spec["x"], yaxis_title=", ".join(spec["y"]), showlegend=len(spec["y"]) > 1,
                      margin={"l": 40, "r": 10, "t": 10, "b": 40})
    return fig


def save_chart(df: pd.DataFrame, path: str, kind: str | None = None) -> str:
    """Write the chart as a self-contained HTML file (plotly.js inside, works offline) or an image
    (.png/.svg/.pdf, which needs the ``kaleido`` package)."""
    fig = figure(df, kind=kind)
    if path.lower().endswith((".html", ".htm")):
        fig.write_html(path, include_plotlyjs=True, full_html=True)
        return path
    try:
        fig.write_image(path)
    except (ValueError, ImportError) as e:
        raise ValueError(f"cannot write {path}: images need the kaleido package ({e}); "
                         "write .html instead, which needs nothing more") from e
    return path


def chart_for_cli(df: pd.DataFrame, path: str) -> int:
    """``ask --chart FILE``: write it and say where on stderr; 0, or 1 with the reason said."""
    import sys

    try:
        print(f"chart: {save_chart(df, path)}", file=sys.stderr)
        return 0
    except (ValueError, ImportError) as e:
        print(f"duckask ask: no chart: {e}", file=sys.stderr)
        return 1
