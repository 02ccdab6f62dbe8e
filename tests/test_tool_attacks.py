"""Issue 30, finding 8: the probes that found holes in the read-only tool calls, one table row each, against hostile
local servers (tests/tool_stubs.py: real HTTP on 127.0.0.1, every request recorded). Each row asserts the refusal
(an error naming the tool or the argument and what was refused) and what reached which server: nothing where
nothing may go, the key never to another host.

- ``DEADLINE``: one deadline, the tool's ``timeout_s``, covers connecting, the headers and every byte of the body;
- ``REDIRECTS``: a redirect is followed only on the tool's own scheme, host and port, at most ``MAX_REDIRECTS``;
- ``PATH_ARGS``: an argument put in the URL's path cannot change the path ('.', '..', '/', '\\', encoded or not);
- ``GUARD``: a value from an earlier answer's rows is found in an argument, as words or as a number, and withheld.
"""
from __future__ import annotations

import asyncio
import re
import time
import urllib.parse
from types import SimpleNamespace

import pytest
from tool_stubs import OMDB_KEY, ToolStub

from duckask.nodes.call_tool import CallTool
from duckask.utils.tools.base import MAX_REDIRECTS
from duckask.utils.tools.http_api import HttpJsonTool
from duckask.utils.tools.searxng import SearxngTool

pytestmark = pytest.mark.slow        # stub servers and real deadlines: not in the fast set (pytest -m "" runs it)

#: How much later than its ``timeout_s`` a call may give up (a loaded 2-core machine included).
MARGIN_S = 0.75


@pytest.fixture(scope="module")
def stub():
    with ToolStub() as s:
        yield s


@pytest.fixture(scope="module")
def other():
    """A second server on another port: where a hostile redirect points; it must never hear from a tool."""
    with ToolStub() as s:
        yield s


@pytest.fixture
def key(monkeypatch):
    monkeypatch.setenv("OMDB_API_KEY", OMDB_KEY)


def web(url: str, **extra) -> SearxngTool:
    return SearxngTool({"name": "web", "type": "searxng", "url": url, **extra})


def api(url: str, **extra) -> HttpJsonTool:
    return HttpJsonTool({"name": "omdb", "type": "http_json", "url": url, "key_env": "OMDB_API_KEY",
                         "params": {"title": "the film's title"}, **extra})


def new_requests(server: ToolStub, before: int) -> list[tuple[str, dict[str, str]]]:
    return server.requests[before:]


# --------------------------------------------------------------------------- 1. one deadline for the whole call
DEADLINE = [  # (id, the hostile route, timeout_s)
    ("headers-late", "/slow?s=10", 1.0),                              # silent, then everything
    ("headers-trickled", "/drip?part=headers&every=0.3", 1.0),        # each header byte in time, the whole never
    ("body-trickled", "/drip?part=body&every=0.3", 1.0),              # headers at once, the body a byte at a time
    ("body-trickled-short-deadline", "/drip?part=body&every=0.1", 0.5),
]


@pytest.mark.parametrize("route,timeout_s", [r[1:] for r in DEADLINE], ids=[r[0] for r in DEADLINE])
def test_one_deadline_covers_connecting_headers_and_body(stub, key, route, timeout_s):
    tool = api(f"{stub.url}{route}&apikey={{key}}&t={{title}}", timeout_s=timeout_s)
    before = len(stub.requests)
    started = time.monotonic()
    r = tool.call({"title": "Heat"})
    took = time.monotonic() - started
    assert not r.ok and re.search(rf"took longer than {timeout_s:g} s \(the omdb tool's timeout_s", r.error), r.error
    assert took < timeout_s + MARGIN_S, f"held {took:.1f} s by a {timeout_s:g} s deadline"
    assert len(new_requests(stub, before)) == 1                       # given up, not tried again


def test_the_deadline_holds_when_called_from_async_code(stub, key):
    """An MCP tool runs the graph inside an event loop: the deadline is the same there."""
    tool = api(f"{stub.url}/drip?part=headers&every=0.3&apikey={{key}}&t={{title}}", timeout_s=1.0)

    async def in_a_loop():
        return tool.call({"title": "Heat"})

    started = time.monotonic()
    r = asyncio.run(in_a_loop())
    assert not r.ok and "took longer than 1 s" in r.error and time.monotonic() - started < 1.0 + MARGIN_S


# --------------------------------------------------------------------------- 2. redirects stay on the tool's origin
REDIRECTS = [  # (id, route and query before the key, key_header, the error (None: answered), paths the stub got)
    ("same-origin-followed", "/hop?x=1", None, None, ["/hop", "/omdb"]),
    ("to-another-port", "/away?to={other}", None, "refused a redirect from .* to http://127.0.0.1:{port}",
     ["/away"]),
    ("to-another-port-key-in-header", "/away?to={other}", "Authorization",
     "refused a redirect from .* to http://127.0.0.1:{port}", ["/away"]),
    ("to-another-scheme", "/to-https?x=1", None, "refused a redirect from .* to https://127.0.0.1:{stub_port}",
     ["/to-https"]),
    ("a-loop", "/loop?x=1", None, f"redirected more than {MAX_REDIRECTS} times", ["/loop"] * (MAX_REDIRECTS + 1)),
]


@pytest.mark.parametrize("route,key_header,error,paths", [r[1:] for r in REDIRECTS], ids=[r[0] for r in REDIRECTS])
def test_a_redirect_never_leaves_the_tools_origin(stub, other, key, route, key_header, error, paths):
    route = route.format(other=urllib.parse.quote(other.url, safe=""))
    key_in_url = "" if key_header else "&apikey={key}"
    tool = api(f"{stub.url}{route}{key_in_url}&t={{title}}", key_header=key_header)
    stub_before, other_before = len(stub.requests), len(other.requests)
    r = tool.call({"title": "Heat"})
    if error is None:
        assert r.ok and r.data["Director"] == "Michael Mann"
    else:
        ports = {"port": other.server_address[1], "stub_port": stub.server_address[1]}
        assert not r.ok and re.search(error.format(**ports), r.error), r.error
        assert OMDB_KEY not in r.error
    assert [urllib.parse.urlsplit(p).path for p, _ in new_requests(stub, stub_before)] == paths
    assert new_requests(other, other_before) == []                    # not a request, so not the key either
    if key_header:
        assert all(h.get("Authorization") == f"Bearer {OMDB_KEY}" for _, h in new_requests(stub, stub_before))


# --------------------------------------------------------------------------- 3. a path argument stays one segment
PATH_ARGS = [  # (id, where the argument goes, its value, refused)
    ("dot-dot", "path", "..", True),
    ("dot", "path", ".", True),
    ("dots", "path", "...", True),
    ("dot-dot-spaced", "path", " .. ", True),
    ("encoded-dot-dot", "path", "%2e%2e", True),
    ("encoded-dot-dot-upper", "path", "%2E%2E", True),
    ("half-encoded", "path", ".%2e", True),
    ("twice-encoded", "path", "%252e%252e", True),
    ("slash", "path", "../admin", True),
    ("inner-slash", "path", "a/b", True),
    ("encoded-slash", "path", "a%2Fb", True),
    ("backslash", "path", "..\\admin", True),
    ("encoded-backslash", "path", "a%5cb", True),
    ("nul", "path", "Heat%00.json", True),
    ("a-title", "path", "Heat", False),
    ("dots-in-a-title", "path", "Ocean's 11...", False),
    ("dot-dot-in-the-query", "query", "..", False),                   # a query value cannot move the path
]


@pytest.mark.parametrize("where,value,refused", [r[1:] for r in PATH_ARGS], ids=[r[0] for r in PATH_ARGS])
def test_a_path_argument_cannot_change_the_path(stub, key, where, value, refused):
    url = stub.url + ("/films/{title}?apikey={key}" if where == "path" else "/omdb?apikey={key}&t={title}")
    before = len(stub.requests)
    r = api(url).call({"title": value})
    sent = [p for p, _ in new_requests(stub, before)]
    if refused:
        assert not r.ok and r.error.startswith(f"argument title={value!r} refused"), r.error
        assert sent == []
    else:
        quoted = urllib.parse.quote(value, safe="")
        assert sent == ([f"/films/{quoted}?apikey={OMDB_KEY}"] if where == "path" else
                        [f"/omdb?apikey={OMDB_KEY}&t={quoted}"])


def test_a_url_whose_host_is_an_argument_is_refused_at_config(stub):
    with pytest.raises(ValueError, match="the url's host must be fixed"):
        api("https://{title}.example.com/films?apikey={key}")


# --------------------------------------------------------------------------- 4. database values stay home
#: The earlier answer's rows (what a conversation's history keeps: JSON values).
HISTORY = [{"rows": [["LeBron James", "Lakers", 38652, 27.1, 1421],
                     ["Shaquille O'Neal", "LA", 28596.0, 23.7, "1,207"],
                     ["Ann", "Heat", 30, 2022, True],
                     ["Kershaw, Clayton", "Dodgers", 33000000, 2.53, "3,052"]]}]

GUARD = [  # (id, the tool's argument, what the user typed, withheld: [] means sent)
    ("name-inside-a-longer-argument", "LeBron James latest news", "search the web for news about him",
     ["LeBron James"]),
    ("name-in-another-case", "what did lebron james say", "what did he say", ["LeBron James"]),
    ("name-spaced-and-punctuated", "LEBRON   JAMES!", "more on him", ["LeBron James"]),
    ("name-with-another-apostrophe", "Shaquille O\u2019Neal interview", "and the second one?",
     ["Shaquille O'Neal"]),
    ("a-team", "lakers schedule", "what about them", ["Lakers"]),
    ("a-three-letter-name", "Ann Arbor news", "where is she from", ["Ann"]),
    ("a-number", "38652 career points record", "is that a record?", ["38652"]),
    ("a-number-with-a-thousands-comma", "38,652 points", "is that a record?", ["38652"]),
    ("a-number-as-a-float", "38652.0 points", "is that a record?", ["38652"]),
    ("a-float-cell-as-an-integer", "28596 points", "and his?", ["28596"]),
    ("a-text-cell-holding-a-number", "1207 games", "how many games?", ["1207"]),
    ("an-integer-cell-with-a-comma", "1,421 games", "how many games?", ["1421"]),
    ("a-decimal", "27.1 points per game", "is that good?", ["27.1"]),
    ("a-negative-number", "-38652", "so?", ["38652"]),
    ("name-and-number", "LeBron James 38652", "news?", ["38652", "LeBron James"]),
    ("typed-by-the-user", "LeBron James news", "news about LeBron James", []),
    ("a-number-typed-with-a-comma", "38652 record", "is 38,652 a record?", []),
    ("a-year-typed", "2022 world cup", "who won the 2022 world cup", []),
    ("a-year-not-typed", "2022 world cup winner", "who won the world cup that year", ["2022"]),
    ("two-letter-cells-are-not-looked-for", "LA weather", "weather there?", []),
    ("two-digit-numbers-are-not-looked-for", "30 for 30 documentary", "a documentary?", []),
    ("only-whole-words", "annual report", "the report", []),
    ("only-whole-numbers", "386520 people", "how many people?", []),
    ("true-is-no-value", "true crime podcasts", "podcasts?", []),
    ("unrelated", "weather in Paris", "weather in Paris?", []),
    # issue 43, finding 11: a name reordered and a number in scientific notation were sent
    ("a-name-reordered", "Clayton Kershaw contract", "and his contract?", ["Kershaw, Clayton"]),
    ("a-name-reordered-and-cased", "news on KERSHAW clayton", "news on him?", ["Kershaw, Clayton"]),
    ("a-number-in-scientific-notation", "salary 3.3e7 dollars", "is that a lot?", ["33000000"]),
    ("a-number-in-scientific-notation-upper", "3.3E+7", "so?", ["33000000"]),
    ("a-reordered-name-the-user-typed", "Clayton Kershaw contract", "what is Kershaw Clayton's contract?", []),
    ("one-word-of-a-two-word-name-is-not-the-name", "Clayton county", "where?", []),
]


@pytest.mark.parametrize("argument,typed,withheld", [r[1:] for r in GUARD], ids=[r[0] for r in GUARD])
def test_database_values_are_withheld_as_words_and_numbers(stub, argument, typed, withheld):
    node = CallTool(SimpleNamespace(tools=[web(stub.url + "/searx")]))
    before = len(stub.requests)
    out = node.exec({"source": {"source": "web", "args": {"query": argument}}, "question": typed, "typed": typed,
                     "history": HISTORY})
    sent = new_requests(stub, before)
    if withheld:
        (call,) = out["tried"]
        assert call["withheld"] == withheld and out["result"] is None
        assert call["error"] == f"not sent: {', '.join(repr(v) for v in withheld)} came from your database"
        assert sent == []
    else:
        assert [urllib.parse.parse_qs(urllib.parse.urlsplit(p).query)["q"] for p, _ in sent] == [[argument]]


def test_a_tool_that_allows_database_values_gets_them(stub):
    tool = web(stub.url + "/searx", send_database_values=True)
    before = len(stub.requests)
    CallTool(SimpleNamespace(tools=[tool])).exec({"source": {"source": "web", "args": {"query": "38,652 points"}},
                                                  "question": "so?", "typed": "so?", "history": HISTORY})
    assert len(new_requests(stub, before)) == 1
