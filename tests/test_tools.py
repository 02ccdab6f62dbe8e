"""Web APIs and search as tools: the tools against local stub servers (tests/tool_stubs.py), the registry and its
plug-ins, the router's rules and reply parsing, the guard, and every graph edge they add (ScriptedLLM)."""
from __future__ import annotations

import time
from importlib.metadata import EntryPoint

import pytest
from graph_support import LAKERS_Q, LAKERS_SQL
from tool_stubs import OMDB_KEY, ToolStub

from duckask.utils.api import ask
from duckask.utils.app.conversation import Conversation
from duckask.utils.config import SettingError, load_settings
from duckask.utils.llm import LLMError, ScriptedLLM
from duckask.utils.tools import registry
from duckask.utils.tools.base import ToolError, get_json
from duckask.utils.tools.http_api import HttpJsonTool
from duckask.utils.tools.registry import load_tools
from duckask.utils.tools.route import by_rule, database_values, fill_args, parse_choice
from duckask.utils.tools.searxng import SearxngTool

pytestmark = pytest.mark.slow        # stub HTTP servers: not in the fast set (pytest -m "" runs it)


@pytest.fixture(scope="module")
def stub():
    with ToolStub() as s:
        yield s


def omdb(stub, **extra) -> dict:
    return {"name": "omdb", "type": "http_json", "description": "films by title: plot, year, director, cast, rating",
            "url": f"{stub.url}/omdb?apikey={{key}}&t={{title}}", "key_env": "OMDB_API_KEY",
            "params": {"title": "the film's title"}, "fields": ["Title", "Year", "Director", "Plot"], **extra}


def web(stub, **extra) -> dict:
    return {"name": "web", "type": "searxng", "url": f"{stub.url}/searx", **extra}


# --------------------------------------------------------------------------- one GET, every fault
@pytest.mark.parametrize("route,timeout,expected", [
    ("/slow?s=3", 0.5, "took longer than 0.5 s"),
    ("/trickle", 1.0, "took longer than 1 s"),          # every byte within the socket timeout, the whole not
    ("/garbage", 5, "was not JSON"),
    ("/big", 5, "is over 100,000 bytes"),
    ("/error", 5, "HTTP 500 from"),
])
def test_get_json_faults_are_clear_errors_in_time(stub, route, timeout, expected):
    started = time.monotonic()
    with pytest.raises(ToolError, match=expected):
        get_json(stub.url + route, timeout_s=timeout, max_bytes=100_000)
    assert time.monotonic() - started < timeout + 1.5


def test_get_json_unreachable():
    with pytest.raises(ToolError, match="could not reach http://127.0.0.1:9"):
        get_json("http://127.0.0.1:9/x", timeout_s=2, max_bytes=1000)


# --------------------------------------------------------------------------- the two shipped tools
def test_http_json_tool_keeps_the_key_secret(stub, monkeypatch):
    monkeypatch.setenv("OMDB_API_KEY", OMDB_KEY)
    r = HttpJsonTool(omdb(stub)).call({"title": "Heat"})
    assert r.ok and r.data == {"Title": "Heat", "Year": "1995", "Director": "Michael Mann",
                               "Plot": "A group of high-end professional thieves start to feel the heat from the LAPD."}
    assert r.sources == [{"name": "omdb", "url": f"{stub.url}/omdb?apikey=***&t=Heat"}]
    assert OMDB_KEY not in r.text + str(r.sources) and any(OMDB_KEY in p for p in stub.log)


def test_http_json_tool_failures(stub, monkeypatch):
    monkeypatch.delenv("OMDB_API_KEY", raising=False)
    assert HttpJsonTool(omdb(stub)).call({"title": "Heat"}).error == "set OMDB_API_KEY to the omdb API's key"
    monkeypatch.setenv("OMDB_API_KEY", OMDB_KEY)
    missing = HttpJsonTool(omdb(stub)).call({"title": "No Such Film"})
    assert not missing.ok and missing.error == "omdb said: Movie not found!"
    assert HttpJsonTool(omdb(stub)).call({}).error == "missing title"
    slow = HttpJsonTool(omdb(stub, url=f"{stub.url}/slow?s=3&t={{title}}", timeout_s=0.5)).call({"title": "x"})
    assert not slow.ok and "took longer than 0.5 s" in slow.error


@pytest.mark.parametrize("change,expected", [
    ({"colour": "red"}, "unknown key\\(s\\) colour"),
    ({"url": "ftp://x/{title}"}, "url must be an http\\(s\\) address"),
    ({"url": "https://x/?t={title}&y={year}"}, "names year which params does not describe"),
    ({"params": {}}, "params must map"),
    ({"url": "https://{title}.test/?k={key}"}, "the url's host must be fixed"),
])
def test_http_json_tool_config_errors(stub, change, expected):
    with pytest.raises(ValueError, match=expected):
        HttpJsonTool({**omdb(stub), **change})


def test_searxng_tool(stub):
    r = SearxngTool(web(stub, results=1)).call({"query": "who won the 2022 world cup"})
    assert r.ok and [s["url"] for s in r.sources] == ["https://news.test/worldcup-2022"]
    assert "Argentina" in r.text
    none = SearxngTool(web(stub)).call({"query": "zzz qqq"})
    assert not none.ok and "found nothing" in none.error
    garbage = SearxngTool(web(stub, url=f"{stub.url}/garbage")).call({"query": "x"})
    assert not garbage.ok and "was not JSON" in garbage.error


# --------------------------------------------------------------------------- the registry, plug-ins
def test_tools_are_off_by_default_and_ordered_apis_first(stub):
    assert load_settings().tools == [] and load_tools([]) == []
    tools = load_tools([web(stub), omdb(stub)])
    assert [(t.name, t.kind) for t in tools] == [("omdb", "api"), ("web", "web")]


@pytest.mark.parametrize("configs,expected", [
    ([{"name": "x", "type": "telnet"}], "unknown type 'telnet'; known: http_json, searxng"),
    ([{"name": "database", "type": "searxng", "url": "http://x"}], "other than database or none"),
    ([{"name": "a", "type": "searxng", "url": "http://x"}, {"name": "a", "type": "searxng", "url": "http://y"}],
     "a second tool named 'a'"),
])
def test_registry_errors(configs, expected):
    with pytest.raises(ValueError, match=expected):
        load_tools(configs)


def test_the_setting_is_checked():
    with pytest.raises(SettingError, match="tools takes a list of tools"):
        load_settings(tools=[{"type": "searxng"}])


def test_a_plug_in_tool_from_an_entry_point(monkeypatch):
    ep = EntryPoint(name="echo", value="tool_plugin:EchoTool", group=registry.GROUP)
    monkeypatch.setattr(registry, "entry_points", lambda group: [ep] if group == registry.GROUP else [])
    (tool,) = load_tools([{"name": "echo", "type": "echo", "description": "repeats"}])
    r = tool.call({"text": "hello"})
    assert r.ok and r.text == '{"echo": "hello"}' and tool.describe().startswith("echo (api): repeats")


# --------------------------------------------------------------------------- the router's rules and parsing
def test_by_rule(stub):
    tools = load_tools([omdb(stub)])
    assert by_rule("q", "data", []) == "database" and by_rule("q", "general", []) == "none"   # no tools
    assert by_rule("thanks!", "general", tools) == "none" and by_rule("what can you do?", "general", tools) == "none"
    assert by_rule("write me a poem about databases", "general", tools) == "none"
    # With tools, whether a question names the data is the model's call: on the demo "Field of Dreams" matches
    # the fielding table and "Boston" a stored city (bench/tool_routing.py).
    assert by_rule("How many points did LeBron James score?", "data", tools) is None
    assert by_rule("what's the weather in Paris?", "general", tools) is None


PARSE = [
    ("source: omdb\nargs: {title: Heat}", "data", ("omdb", {"title": "Heat"}, "llm")),
    ("source: omdb\nargs:\n  title: Heat\n\nExplanation: a film", "data", ("omdb", {"title": "Heat"}, "llm")),
    ("```yaml\nsource: web\nargs:\n  query: world cup 2022\n```", "general", ("web", {"query": "world cup 2022"},
                                                                             "llm")),
    ("source: database", "data", ("database", {}, "llm")),
    ("Source: none.", "general", ("none", {}, "llm")),
    ("I would use Google", "data", ("database", {}, "unreadable reply: by intent")),
    ("source: imdb", "general", ("none", {}, "unreadable reply: by intent")),
]


@pytest.mark.parametrize("reply,intent,expected", PARSE, ids=[str(i) for i in range(len(PARSE))])
def test_parse_choice(stub, reply, intent, expected):
    assert parse_choice(reply, intent, load_tools([omdb(stub), web(stub)])) == expected


def test_fill_args(stub):
    omdb_tool, web_tool = load_tools([omdb(stub), web(stub)])
    assert fill_args(web_tool, {}, "who won?") == {"query": "who won?"}
    assert fill_args(omdb_tool, {"title": "Heat", "year": "1995"}, "q") == {"title": "Heat"}


def test_database_values_guard():
    history = [{"rows": [["LeBron James", 30], ["Anthony Davis", 25]]}]   # the full table: test_tool_attacks.GUARD
    assert database_values({"query": "lebron james news"}, "search the web for news about him", history) == [
        "LeBron James"]
    assert database_values({"query": "LeBron James news"}, "news about LeBron James", history) == []
    assert database_values({"query": "weather"}, "weather?", history) == []


# --------------------------------------------------------------------------- the graph's new edges
@pytest.fixture
def graph(small_db, isolated_env, stub, monkeypatch):
    monkeypatch.setenv("OMDB_API_KEY", OMDB_KEY)

    def _ask(question, script, tools=None, **options):
        llm = ScriptedLLM(script)
        opts = {"resample_drafts": 0, "analyzer": "rules", "router": "rules",
                "tools": [omdb(stub), web(stub)] if tools is None else tools, **options}
        return ask(question, db=str(small_db), llm=llm, **opts), llm
    return _ask


def nodes(r) -> list[tuple[str, str]]:
    return [(t["node"], t["action"]) for t in r.trace]


def test_without_tools_the_graph_has_no_source_router(graph):
    r, llm = graph(LAKERS_Q, {"SQLGenerator": [LAKERS_SQL]},
                   tools=[])
    assert r.status == "answered" and "ChooseSource" not in [n for n, _ in nodes(r)]


def test_the_model_keeps_a_data_question_in_the_database(graph):
    r, llm = graph(LAKERS_Q, {"ChooseSource": ["database"], "SQLGenerator": [LAKERS_SQL]})
    assert nodes(r)[2] == ("ChooseSource", "database") and r.routing["source"]["by"] == "llm"
    assert [c["node"] for c in llm.calls] == ["ChooseSource", "SQLGenerator"] and r.status == "answered"
    assert r.sources == [] and "Which source should answer" in llm.calls[0]["messages"][0]["content"]


def test_an_api_answers_and_is_cited(graph, stub):
    r, llm = graph("Who directed the film Heat?", {"ChooseSource": ["source: omdb\nargs: {title: Heat}"],
                                                  "AnswerFromTool": ["Heat (1995) was directed by Michael Mann."]})
    assert nodes(r)[2:] == [("ChooseSource", "tool"), ("CallTool", "answer"), ("AnswerFromTool", "end")]
    assert r.status == "answered" and r.sql is None and r.df is None
    assert r.answer == f"Heat (1995) was directed by Michael Mann. (source: omdb, {stub.url}/omdb?apikey=***&t=Heat)"
    assert r.sources[0]["name"] == "omdb" and "not from your database" in r.derivation
    assert "Michael Mann" in [c for c in llm.calls if c["node"] == "AnswerFromTool"][0]["messages"][0]["content"]
    assert OMDB_KEY not in r.answer + str(r.routing)


def test_an_api_that_fails_falls_back_to_the_web(graph, stub):
    slow = omdb(stub, url=f"{stub.url}/slow?s=3&k={{key}}&t={{title}}", timeout_s=0.5)
    r, _ = graph("who won the 2022 world cup", {"ChooseSource": ["source: omdb\nargs: {title: world cup}"],
                                                "AnswerFromTool": ["Argentina won the 2022 World Cup."]},
                 tools=[slow, web(stub)])
    calls = r.routing["tool_calls"]
    assert [(c["tool"], c["ok"]) for c in calls] == [("omdb", False), ("web", True)]
    assert "took longer than 0.5 s" in calls[0]["error"] and calls[1]["args"] == {"query": "who won the 2022 world cup"}
    assert r.answer.startswith("Argentina won the 2022 World Cup. Sources: [1] https://news.test/worldcup-2022 [2] ")


def test_every_tool_failing_is_said(graph, stub):
    bad = [omdb(stub, url=f"{stub.url}/garbage?k={{key}}&t={{title}}"), web(stub, url=f"{stub.url}/garbage")]
    r, _ = graph("Who directed Heat?", {"ChooseSource": ["source: omdb\nargs: {title: Heat}"]}, tools=bad)
    assert nodes(r)[-1] == ("CallTool", "failed") and r.status == "error"
    assert "omdb: the answer from" in r.answer and "web: the answer from" in r.answer and "was not JSON" in r.answer


def test_small_talk_with_tools_is_answered_without_a_call(graph):
    r, llm = graph("thanks!", {})
    assert [n for n, _ in nodes(r)] == ["IntentRouter", "ChooseSource", "AnswerGeneral"] and llm.calls == []


def test_the_model_may_say_none(graph):
    r, _ = graph("Tell me a joke about databases", {"ChooseSource": ["source: none"]})
    assert nodes(r)[-2:] == [("ChooseSource", "none"), ("AnswerGeneral", "end")] and r.status == "answered"


def test_a_router_failure_keeps_a_data_question_in_the_database(graph):
    r, _ = graph("How tall is Mount Everest", {"ChooseSource": [LLMError("down")],
                                              "SQLGenerator": ["SELECT * FROM arenas"]})
    assert nodes(r)[2] == ("ChooseSource", "database") and r.routing["source"]["by"].startswith("fallback")


def test_database_values_are_not_sent_unless_allowed(small_db, isolated_env, stub, monkeypatch):
    history = [{"text": "top scorer?", "resolved_question": "top scorer?", "intent": "data", "status": "answered",
                "sql": "SELECT name FROM players ORDER BY points DESC LIMIT 1", "tables": ["players"],
                "answer": "LeBron James", "columns": ["name"], "rows": [["LeBron James"]], "seconds": 1.0}]
    script = {"ChooseSource": ["source: web\nargs: {query: LeBron James latest news}"],
              "AnswerFromTool": ["Nothing found."], "ResolveFollowUp": ["search the web for news about him"]}
    opts = {"resample_drafts": 0, "analyzer": "rules", "router": "rules", "follow_ups": "off"}
    chat = Conversation(str(small_db), llm=ScriptedLLM(script), history=history, tools=[web(stub)], **opts)
    calls_before = len(stub.log)
    r = chat.ask("search the web for news about him")
    assert r.status == "error" and "not sent: 'LeBron James' came from your database" in r.answer
    assert "send_database_values: true" in r.answer and len(stub.log) == calls_before
    chat = Conversation(str(small_db), llm=ScriptedLLM(script), history=history,
                        tools=[web(stub, send_database_values=True)], **opts)
    r = chat.ask("search the web for news about him")
    assert r.routing["tool_calls"][0]["args"] == {"query": "LeBron James latest news"}


# --------------------------------------------------------------------------- end to end, the real model
@pytest.mark.model
def test_a_film_question_is_answered_from_the_api_and_cited(stub, monkeypatch, tmp_path):
    from conftest import demo_db, embedded_model_path

    monkeypatch.setenv("OMDB_API_KEY", OMDB_KEY)
    r = ask("Who directed the film Heat?", demo_db(), tools=[omdb(stub), web(stub)], model_path=embedded_model_path(),
            cache_dir=str(tmp_path / "cache"), examples="", semantic="")
    assert r.status == "answered" and r.sql is None, r.answer
    assert r.routing["source"]["source"] == "omdb" and r.routing["tool_calls"][0]["args"] == {"title": "Heat"}
    assert "Michael Mann" in r.answer and r.answer.endswith(f"(source: omdb, {stub.url}/omdb?apikey=***&t=Heat)")


def test_a_request_cannot_configure_tools():
    """Tools come from the deployer's config only: an HTTP request's options may not point duckask at a URL."""
    from duckask.utils.app.server_context import REQUEST_OPTIONS

    assert "tools" not in REQUEST_OPTIONS
