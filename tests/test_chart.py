"""The chart chosen from a result's columns (utils/api/chart.py), table-driven, and the chart as a
plotly figure, a self-contained offline HTML file (``ask --chart``) and ``Result.chart()``."""
from __future__ import annotations

import json

import pandas as pd
import pytest

from duckask.utils.api.chart import choose_chart

CASES = [
    ("a year and a number: line", {"year_id": [2018, 2019], "hr": [48, 53]},
     {"kind": "line", "x": "year_id", "y": ["hr"]}),
    ("dates and two numbers: line", {"day": pd.to_datetime(["2024-01-01", "2024-01-02"]), "a": [1, 2], "b": [3, 4]},
     {"kind": "line", "x": "day", "y": ["a", "b"]}),
    ("a category and a number: bar", {"team": ["BOS", "NYA"], "wins": [92, 100]},
     {"kind": "bar", "x": "team", "y": ["wins"]}),
    ("two numbers: scatter", {"hr": [10, 40, 20], "rbi": [30, 100, 70]}, {"kind": "scatter", "x": "hr", "y": ["rbi"]}),
    ("one value: none", {"n": [3]}, None),
    ("one row: none", {"team": ["BOS"], "wins": [92]}, None),
    ("text only: none", {"first": ["Pete", "Khris"], "last": ["Alonso", "Davis"]}, None),
    ("a number named like a year but out of range is not time", {"year_id": [1, 2], "hr": [3, 4]},
     {"kind": "scatter", "x": "year_id", "y": ["hr"]}),
    ("two categories and a number: none", {"a": ["x", "y"], "b": ["u", "v"], "n": [1, 2]}, None),
]


@pytest.mark.parametrize("name, data, expect", CASES, ids=[c[0] for c in CASES])
def test_choose_chart(name, data, expect):
    assert choose_chart(pd.DataFrame(data)) == expect


def test_the_chart_as_a_figure_and_an_offline_html_file(tmp_path, small_db, isolated_env, capsys, monkeypatch):
    pytest.importorskip("plotly", reason="charts need plotly (the server extra)")
    import duckask.utils.api as api
    from duckask import ask
    from duckask.utils.app.cli import main
    from duckask.utils.llm import ScriptedLLM

    sql = "SELECT name, points FROM players ORDER BY points DESC"
    r = ask("points per player?", db=str(small_db), llm=ScriptedLLM({"SQLGenerator": [sql]}), analyzer="rules")
    fig = r.chart()
    assert fig.data[0].type == "bar" and list(fig.data[0].y) == [30, 28, 25, 24, 22, 15]
    assert r.chart("scatter").data[0].mode == "markers"
    assert r.to_dict()["chart"] == {"kind": "bar", "x": "name", "y": ["points"]}
    monkeypatch.setattr(api, "get_llm", lambda settings=None: ScriptedLLM({"SQLGenerator": [sql]}))
    out = tmp_path / "chart.html"
    assert main(["ask", "points per player?", "--db", str(small_db), "--analyzer", "rules",
                 "--chart", str(out)]) == 0
    page = out.read_text()
    assert "Plotly.newPlot" in page and '<script src="http' not in page     # plotly.js inside: works offline
    assert f"chart: {out}" in capsys.readouterr().err
    none = ask("how many players?", db=str(small_db), analyzer="rules",
               llm=ScriptedLLM({"SQLGenerator": ["SELECT count(*) AS n FROM players"]}))
    with pytest.raises(ValueError, match="no chart fits"):
        none.chart()
    assert json.loads(json.dumps(none.to_dict()))["chart"] is None
