"""The web page in a real browser: the system's headless Chromium driven by Playwright (no browser
download): ask a question, watch the progress, see the answer, the table and a chart, edit the SQL
and run it again. A screenshot is saved as a test artifact ($DUCKASK_ARTIFACTS, default
test-artifacts/)."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import live_server
import pytest

pytest.importorskip("fastapi", reason="the server extra is not installed (pip install 'duckask[server]')")
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (the test extra has it)")
CHROMIUM = os.environ.get("DUCKASK_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(not CHROMIUM, reason="no Chromium binary (apt-get install chromium; .ci/setup does)")

from duckask.utils.app.server import create_app  # noqa: E402
from duckask.utils.llm import ScriptedLLM  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
LAKERS_Q = "What are the points of Lakers players?"
LAKERS_SQL = ("SELECT p.name, p.points FROM players p JOIN teams t ON p.team_id = t.id "
              "WHERE t.name = 'Lakers' ORDER BY p.points DESC")


@pytest.fixture
def page(small_db, isolated_env):
    sentence = "LeBron James leads the Lakers with 30 points."
    llm = ScriptedLLM({"SQLGenerator": [LAKERS_SQL], "DataAnalyzer": [sentence]})
    app = create_app(str(small_db), llm=llm, resample_drafts=0)
    url, server = live_server.start(app)
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        pg = browser.new_page(viewport={"width": 1100, "height": 900})
        pg.goto(url)
        yield pg
        browser.close()
    server.should_exit = True


def test_ask_see_the_answer_table_and_chart_then_edit_and_rerun_the_sql(page):
    page.fill("#question", LAKERS_Q)
    page.click("#go")
    page.wait_for_selector("#answer:has-text('LeBron James leads the Lakers')", timeout=30_000)
    assert page.inner_text("#progress").startswith("done in")
    rows = page.locator("#table tr")
    assert rows.count() == 4 and "LeBron James" in rows.nth(1).inner_text()
    page.wait_for_selector("#chart .main-svg", timeout=10_000)          # plotly drew the bar chart, offline
    assert page.input_value("#kind") == "bar"
    assert "WHERE t.name = 'Lakers'" in page.input_value("#sql")
    artifacts = Path(os.environ.get("DUCKASK_ARTIFACTS", ROOT / "test-artifacts"))
    artifacts.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(artifacts / "web-page.png"), full_page=True)
    page.fill("#sql", "SELECT name, capacity FROM arenas ORDER BY capacity")
    page.click("#run")
    page.wait_for_selector("#table td:has-text('United Center')", timeout=10_000)
    assert page.locator("#table tr").count() == 4 and "rows in" in page.inner_text("#progress")
    page.select_option("#kind", "scatter")                               # the chart type can be switched
    page.wait_for_selector("#chart .scatterlayer .trace", timeout=10_000)
    page.fill("#sql", "DROP TABLE teams")
    page.click("#run")
    page.wait_for_selector("#answer.error", timeout=10_000)
    assert "DROP" in page.inner_text("#answer")
