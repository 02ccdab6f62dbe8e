"""The web page in a real browser: the system's headless Chromium driven by Playwright (no browser
download): ask a question, watch the progress, see the answer, the table and a chart, edit the SQL
and run it again; approve and reject writes on their card, download the result. Screenshots are saved
as test artifacts ($DUCKASK_ARTIFACTS, default test-artifacts/); the write card's also as docs/img."""
from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path

import httpx
import live_server
import pandas as pd
import pytest

pytest.importorskip("fastapi", reason="the server extra is not installed (pip install 'duckask[server]')")
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (the test extra has it)")
CHROMIUM = os.environ.get("DUCKASK_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = [pytest.mark.slow,      # a browser and a server: not in the fast set (pytest -m "" runs it)
              pytest.mark.skipif(not CHROMIUM, reason="no Chromium binary (apt-get install chromium; .ci/setup does)")]

from conftest import build_small_db  # noqa: E402

from duckask.utils.app.server import create_app  # noqa: E402
from duckask.utils.llm import ScriptedLLM  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
LAKERS_Q = "What are the points of Lakers players?"
LAKERS_SQL = ("SELECT p.name, p.points FROM players p JOIN teams t ON p.team_id = t.id "
              "WHERE t.name = 'Lakers' ORDER BY p.points DESC")


@contextlib.contextmanager
def browsing(app, viewport: dict, **page_options):
    """(a Chromium page on ``app``, served on 127.0.0.1, its URL); browser and server closed after."""
    url, server = live_server.start(app)
    try:
        with sync_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
            pg = browser.new_page(viewport=viewport, **page_options)
            pg.errors = []                               # what the console says went wrong (a CSP refusal, ...)
            pg.on("console", lambda m: m.type == "error" and pg.errors.append(m.text))
            pg.on("pageerror", lambda e: pg.errors.append(str(e)))
            pg.goto(url)
            yield pg, url
            browser.close()
    finally:
        server.should_exit = True


@pytest.fixture
def page(small_db, isolated_env):
    sentence = "LeBron James leads the Lakers with 30 points."
    llm = ScriptedLLM({"SQLGenerator": [LAKERS_SQL], "DataAnalyzer": [sentence]})
    app = create_app(str(small_db), llm=llm, resample_drafts=0)
    with browsing(app, {"width": 1100, "height": 900}) as (pg, _url):
        yield pg


def test_ask_see_the_answer_table_and_chart_then_edit_and_rerun_the_sql(page):
    page.fill("#question", LAKERS_Q)
    page.click("#go")
    page.wait_for_selector("#answer:has-text('LeBron James leads the Lakers')", timeout=30_000)
    assert page.inner_text("#progress").startswith("done in")
    badge = page.locator("#badge")                                       # the confidence badge and its reasons
    assert badge.is_visible() and badge.inner_text().startswith("confidence: ")
    level = badge.inner_text().split(": ")[1]
    assert f"badge {level}" == badge.get_attribute("class") and page.inner_text("#reasons")
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
    # the page's Content-Security-Policy (its own scripts only, no framing) let everything above run
    assert not [e for e in page.errors if "Content Security Policy" in e or "Refused" in e], page.errors


@pytest.fixture
def write_page(tmp_path, isolated_env):
    """The page on a database of its own (tmp_path), with writes on and an audit log of its own."""
    db = build_small_db(tmp_path / "nba.duckdb")
    sentence = "LeBron James leads the Lakers with 30 points."
    llm = ScriptedLLM({"SQLGenerator": [LAKERS_SQL], "DataAnalyzer": [sentence]})
    app = create_app(str(db), llm=llm, resample_drafts=0, allow_writes=True, audit_file=str(tmp_path / "audit.duckdb"))
    with browsing(app, {"width": 1100, "height": 900}, accept_downloads=True) as (pg, url):
        yield pg, url


def test_approve_an_update_reject_a_delete_then_download_the_result(write_page):
    page, url = write_page

    def points(team_id: int) -> list:
        sql = f"SELECT points FROM players WHERE team_id = {team_id} ORDER BY id"
        return [r[0] for r in httpx.post(f"{url}/api/sql", json={"sql": sql}).json()["rows"]]

    page.wait_for_selector("#db:has-text('writes on')", timeout=10_000)
    page.fill("#question", LAKERS_Q)
    page.click("#go")
    page.wait_for_selector("#answer:has-text('LeBron James leads the Lakers')", timeout=30_000)
    page.fill("#sql", "UPDATE players SET points = points + 1 WHERE team_id = 1")
    page.click("#run")
    page.wait_for_selector("#write-card:not(.hidden)", timeout=10_000)
    assert page.inner_text("#write-estimate") == "estimated rows: 3"
    assert "UPDATE players" in page.inner_text("#write-sql") and page.inner_text("#write-explanation")
    assert page.inner_text("#write-outcome") == "" and points(1) == [30, 25, 15]     # nothing written yet
    artifacts = Path(os.environ.get("DUCKASK_ARTIFACTS", ROOT / "test-artifacts"))
    artifacts.mkdir(parents=True, exist_ok=True)
    page.locator("#write-card").screenshot(path=str(artifacts / "write-card.png"))
    (ROOT / "docs" / "img").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(artifacts / "write-card.png", ROOT / "docs" / "img" / "write-card.png")
    page.click("#write-approve")
    page.wait_for_selector("#write-outcome.ok", timeout=10_000)
    assert page.inner_text("#write-outcome").startswith("Done (UPDATE on players): 3 row(s) (estimated 3)")
    assert page.is_disabled("#write-approve") and points(1) == [31, 26, 16]
    assert page.locator("#table tr").count() == 4                    # the table was not refreshed: nothing else
    page.fill("#sql", "DELETE FROM players WHERE team_id = 2")
    page.click("#run")
    page.wait_for_selector("#write-estimate:has-text('estimated rows: 2')", timeout=10_000)
    page.click("#write-reject")
    page.wait_for_selector("#write-outcome:has-text('rejected')", timeout=10_000)
    assert page.inner_text("#write-outcome").startswith("Not written") and points(2) == [28, 22]
    page.select_option("#export-format", "csv")
    with page.expect_download(timeout=10_000) as info:
        page.click("#export-download")
    download = info.value
    assert download.suggested_filename == "duckask-result.csv"
    got = pd.read_csv(download.path())                                 # the Lakers query, run again: updated
    assert got.values.tolist() == [["LeBron James", 31], ["Anthony Davis", 26], ["Austin Reaves", 16]]


def test_a_write_redrawn_after_a_reload_is_shown_but_not_decidable_from_the_page(write_page):
    """The thread keeps no approval token (``state.threads``): after a reload the pending card is drawn again
    with its buttons off and a note saying why; nothing is written."""
    page, url = write_page
    page.wait_for_selector("#db:has-text('writes on')", timeout=10_000)
    page.fill("#question", "DELETE FROM players WHERE team_id = 2")
    page.click("#go")
    page.wait_for_selector("#write-card:not(.hidden)", timeout=30_000)
    assert not page.is_disabled("#write-approve") and page.inner_text("#write-outcome") == ""
    page.reload()
    page.wait_for_selector("#write-card:not(.hidden)", timeout=10_000)
    assert "DELETE FROM players" in page.inner_text("#write-sql")
    assert page.is_disabled("#write-approve") and page.is_disabled("#write-reject")
    assert page.inner_text("#write-outcome").startswith("Redrawn after a reload")
    rows = httpx.post(f"{url}/api/sql", json={"sql": "SELECT count(*) FROM players WHERE team_id = 2"}).json()
    assert rows["rows"] == [[2]]                                        # nothing was written


@pytest.fixture
def thread_page(isolated_env, tmp_path):
    """The page on the Lahman demo with a scripted model: taught suggestions and the demo's metrics beside it."""
    from test_thread import _sql

    from duckask.data.lahman import demo_db_path

    llm = ScriptedLLM({"SQLGenerator": _sql, "PlanQuery": [RuntimeError("no plan here")],
                       "DataAnalyzer": ["Here is what the data says."]})
    app = create_app(str(demo_db_path()), llm=llm, cache_dir=str(tmp_path), router="rules", follow_ups="rules",
                     grader="off", analyzer="rules", plan_path="off")
    with browsing(app, {"width": 1200, "height": 1000}) as (pg, _url):
        yield pg


def ask_on_page(page, question: str, expect: str) -> None:
    page.fill("#question", question)
    page.press("#question", "Enter")                                    # Enter asks
    page.wait_for_selector(f"#answer:has-text('{expect}')", timeout=30_000)


def test_a_thread_with_a_follow_up_survives_a_reload(thread_page):
    page = thread_page
    page.wait_for_selector("#metrics li:has-text('home runs')", timeout=10_000)   # the metrics browser
    assert "sum of batting.hr" in page.inner_text("#metrics") and "batting" in page.text_content("#tables")
    ask_on_page(page, "Who hit the most home runs in 2019?", "Pete Alonso")
    ask_on_page(page, "and in 2018?", "Khris Davis")
    assert page.inner_text("#understood") == "understood as: Who hit the most home runs in 2018?"
    ask_on_page(page, "How many teams played in 2019?", "30")
    assert page.locator("#turns .turn").count() == 2                    # the two earlier turns, newest first
    assert page.locator("#turns .turn .q").nth(0).inner_text() == "and in 2018?"
    assert "understood as: Who hit the most home runs in 2018?" in page.locator("#turns .turn").nth(0).inner_text()
    artifacts = Path(os.environ.get("DUCKASK_ARTIFACTS", ROOT / "test-artifacts"))
    artifacts.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(artifacts / "web-thread-full.png"), full_page=True)
    page.screenshot(path=str(artifacts / "web-thread.png"))             # the first screen: README's picture
    shutil.copyfile(artifacts / "web-thread.png", ROOT / "docs" / "img" / "web-thread.png")
    page.reload()                                                        # the server kept the thread
    page.wait_for_selector("#answer:has-text('30')", timeout=10_000)
    assert page.locator("#turns .turn").count() == 2
    page.focus("#question")
    page.keyboard.press("ArrowUp")                                       # the last question, recalled
    assert page.input_value("#question") == "How many teams played in 2019?"
    page.keyboard.press("ArrowUp")
    assert page.input_value("#question") == "and in 2018?"
    page.click("#new-thread")
    page.wait_for_selector("#earlier.hidden", state="attached", timeout=10_000)
    assert page.inner_text("#answer") == "" and page.locator("#turns .turn").count() == 0
    assert not page.errors, page.errors                                  # nothing went wrong in the console


def test_a_suggested_question_runs(thread_page):
    page = thread_page
    page.click("#new-thread")
    chip = page.locator("#suggestions button", has_text="What are the home runs by year?")
    chip.wait_for(timeout=10_000)
    chip.click()
    page.wait_for_selector("#progress:has-text('done in')", timeout=30_000)
    assert page.input_value("#question") == "What are the home runs by year?" and page.inner_text("#answer")


def test_a_narrow_window_stacks_the_side_panel(thread_page):
    page = thread_page
    page.set_viewport_size({"width": 420, "height": 900})
    page.wait_for_selector("#metrics li:has-text('home runs')", timeout=10_000)
    main, aside = page.locator("main").bounding_box(), page.locator("aside").bounding_box()
    assert aside["y"] >= main["y"] + main["height"] - 1 and aside["width"] <= 420


WRONG_SQL = "SELECT name, points FROM players ORDER BY points DESC"


def test_wrong_fix_compare_keep_then_the_next_team_is_answered_from_the_fix_and_right_keeps(tmp_path, isolated_env):
    """Issue 45's page: Wrong opens the SQL, the fix runs beside the old rows, Keep keeps it; the same question about
    another team is then answered from the kept pair (no model call), and Right keeps an answer as it is."""
    db = build_small_db(tmp_path / "nba.duckdb")
    app = create_app(str(db), llm=ScriptedLLM({"SQLGenerator": [WRONG_SQL] * 6}), resample_drafts=0,
                     analyzer="rules")
    with browsing(app, {"width": 1100, "height": 1000}) as (page, _url):
        page.fill("#question", LAKERS_Q)
        page.click("#go")
        page.wait_for_selector("#teach:not(.hidden)", timeout=30_000)
        assert page.locator("#table tr").count() == 7                      # every player: the model dropped the Lakers
        page.click("#wrong")
        assert page.input_value("#fix-sql") == WRONG_SQL and page.locator("#fix-old tr").count() == 7
        page.fill("#fix-sql", LAKERS_SQL)
        page.click("#fix-run")
        page.wait_for_selector("#fix-new td:has-text('Austin Reaves')", timeout=10_000)
        assert page.locator("#fix-new tr").count() == 4 and "3 rows" in page.inner_text("#fix-status")
        page.click("#fix-keep")
        page.wait_for_selector("#fix-status:has-text('Kept as pair')", timeout=10_000)
        page.screenshot(path=str(ROOT / "docs" / "img" / "teach-fix.png"),       # README's picture
                        clip={"x": 0, "y": 0, "width": 1100, "height": 720})
        page.fill("#question", "What are the points of Celtics players?")
        page.click("#go")
        page.wait_for_selector("#derivation:has-text('From the kept pair')", timeout=30_000)
        assert page.locator("#table tr").count() == 3 and "Jayson Tatum" in page.inner_text("#table")
        assert page.inner_text("#badge") == "confidence: high"
        page.click("#right")
        page.wait_for_selector("#teach-status:has-text('Kept as pair')", timeout=10_000)
        assert page.locator("#right").is_disabled() and not page.errors, page.errors


def test_the_plan_box_reads_as_labels_with_the_raw_plan_behind_a_toggle_and_the_time_is_rounded(isolated_env):
    """Issue 47: a plan's names shown as labels ("player's full name"), the plan as the model wrote it behind a
    toggle, and "done in 1.2 s" (not "done in 1.234 s"); the answer a sentence from the question's words."""
    from conftest import demo_db

    plan = "home_runs]\ngroup_by: [full_name]\nwhere: [year = 2019]\norder_by: [-home_runs]\nlimit: 1"
    app = create_app(demo_db(), llm=ScriptedLLM({"PlanQuery": [plan]}), analyzer="rules",
                     resample_drafts=0)
    with browsing(app, {"width": 1100, "height": 900}) as (page, _url):
        page.fill("#question", "Who hit the most home runs in 2019?")
        page.click("#go")
        page.wait_for_selector("#planbox:not(.hidden)", timeout=60_000)
        shown = page.inner_text("#plan")
        assert "measures: home runs" in shown and "by: player's full name" in shown
        assert "__" not in shown and "player__full_name" not in page.inner_text("#planbox")   # raw: folded away
        page.click("#planraw summary")
        assert "group_by: [player__full_name]" in page.inner_text("#planrawtext")
        assert page.inner_text("#answer").startswith("Pete Alonso hit the most home runs in 2019")
        done = page.inner_text("#progress")
        assert done.startswith("done in ") and done.endswith(" s") and len(done.split()[2].split(".")[-1]) <= 1
        page.screenshot(path=str(ROOT / "docs" / "img" / "plan-labels.png"))
        assert not page.errors
