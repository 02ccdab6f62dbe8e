"""The turn state has one declaration (``utils/turn.py``) and every key one owner: each node writes only the keys it
owns (top level or inside), the hand-offs write only hand-off keys, the API writes none by hand, every key is
written by its owner and read by someone, and a Result is read from the state in one place."""
from __future__ import annotations

import ast
import dataclasses
import inspect
from pathlib import Path

import pytest
from docgen import node_files, reads, writes

from duckask.utils import turn
from duckask.utils.api.result import Result

ROOT = Path(__file__).resolve().parents[1]
HANDOFFS = {name for name, f in vars(turn).items() if inspect.isfunction(f) and f.__module__ == turn.__name__
            and name != "callers"}


OWNERS = turn.owners()
#: The notes a hand-off adds inside a node's record (the node keeps owning the key): read only by this test.
NOTES = {"fall_back": {"plan", "template"}}


def test_every_key_has_one_owner_that_exists():
    nodes = set(node_files())
    assert set(OWNERS.values()) <= nodes | HANDOFFS, set(OWNERS.values()) - nodes - HANDOFFS


@pytest.mark.parametrize("node", sorted(node_files()))
def test_a_node_writes_only_what_it_owns(node):
    written = writes(node_files()[node])
    foreign = {k: OWNERS.get(k, "undeclared") for k in written if OWNERS.get(k) != node}
    assert not foreign, f"{node} writes keys it does not own (owner in brackets): {foreign}"


def test_hand_offs_write_only_hand_off_keys():
    """A hand-off may write any key a hand-off owns (``finish`` clears the query through ``set_query``...),
    never a node's."""
    for name in sorted(HANDOFFS - {"start_turn", "owners"}):
        written = writes(ast.parse(inspect.getsource(getattr(turn, name)))) - NOTES.get(name, set())
        assert all(OWNERS.get(k) in HANDOFFS for k in written), (name, written)
    assert set(turn.start_turn("q")) <= set(OWNERS)
    assert set(turn.MESSAGES) <= set(OWNERS)


def test_every_key_is_written_by_its_owner_and_read():
    by_owner = {node: writes(tree) for node, tree in node_files().items()}
    by_owner |= {name: writes(ast.parse(inspect.getsource(getattr(turn, name)))) for name in HANDOFFS}
    by_owner["start_turn"] = set(turn.start_turn("q"))
    not_written = [k for k, owner in OWNERS.items() if k not in by_owner.get(owner, set())]
    assert not not_written, f"declared, but their owner never writes them: {not_written}"
    read = set().union(*(reads(tree) for tree in node_files().values()))
    read |= reads(ast.parse((ROOT / "utils" / "api" / "result.py").read_text()))
    assert not (set(OWNERS) - read), f"declared, but nobody reads them: {set(OWNERS) - read}"
    assert not (read & set().union(*by_owner.values())) - set(OWNERS), "read and written but not declared"


def test_the_surfaces_write_no_key_by_hand():
    for path in sorted((ROOT / "utils").rglob("*.py")):
        if path.name == "turn.py":
            continue
        assert not writes(ast.parse(path.read_text())), f"{path.relative_to(ROOT)} writes the turn state by hand"


def from_turn_reads() -> dict[str, set[str]]:
    """Each keyword of the Result ``from_turn`` builds, and the turn keys its value reads: directly
    (``shared["k"]``, ``shared.get("k")``) or through a name ``from_turn`` assigned from them (``outcome``...)."""
    tree = ast.parse((ROOT / "utils" / "api" / "result.py").read_text())
    method = next(f for f in ast.walk(tree) if isinstance(f, ast.FunctionDef) and f.name == "from_turn")
    local: dict[str, set[str]] = {}

    def fed(expr: ast.AST) -> set[str]:
        return reads(expr).union(*(local.get(n.id, set()) for n in ast.walk(expr) if isinstance(n, ast.Name)))

    for a in method.body:
        if isinstance(a, ast.Assign):
            local[a.targets[0].id] = fed(a.value)
    build = next(c for c in ast.walk(method) if isinstance(c, ast.Call) and getattr(c.func, "id", None) == "cls")
    return {k.arg: fed(k.value) for k in build.keywords if k.arg}


def test_a_result_is_read_from_the_turn_in_one_place():
    """``Result.from_turn`` names every field it sets and the keys each reads: a field no turn key feeds (but those
    its arguments give), a field left out, or a key the turn does not declare (renamed, dropped) fails here."""
    given = {"db", "settings", "_resume", "_write_sql"}       # from_turn's arguments, not the turn
    fed = from_turn_reads()
    assert set(fed) == {f.name for f in dataclasses.fields(Result)}, "a Result field from_turn does not set"
    unfed = [name for name, keys in fed.items() if not keys and name not in given]
    assert not unfed, f"Result fields no turn key feeds: {unfed}"
    undeclared = {name: keys - set(OWNERS) for name, keys in fed.items() if keys - set(OWNERS)}
    assert not undeclared, f"Result fields read from keys the turn does not declare: {undeclared}"
    assert fed["answer"] == {"answer"} and fed["sql"] == {"sql_query"} and fed["df"] >= {"query_result"}


def handoff_calls(tree: ast.AST) -> set[str]:
    """The hand-offs a module calls: by the name it imported (``card as card_of`` too) or as ``turn.<name>``."""
    names = {a.asname or a.name: a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
             and n.module == "duckask.utils.turn" for a in n.names}
    found = set()
    for c in ast.walk(tree):
        if isinstance(c, ast.Call) and isinstance(c.func, ast.Name) and names.get(c.func.id) in HANDOFFS:
            found.add(names[c.func.id])
        elif isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute) and c.func.attr in HANDOFFS \
                and getattr(c.func.value, "id", None) == "turn":
            found.add(c.func.attr)
    return found


def test_hand_offs_are_called_only_by_their_named_callers_and_by_each_of_them():
    """Each hand-off declares who may call it (``turn.callers``); a node (or the API) calling one it is not named
    for fails here, and so does a name that no longer calls it (the list stays what the code does)."""
    callers = {name: getattr(turn, name).callers for name in HANDOFFS - {"owners"}}
    modules = dict(node_files()) | {"api": ast.parse((ROOT / "utils" / "api" / "__init__.py").read_text())}
    calls = {who: handoff_calls(tree) for who, tree in modules.items()}
    undeclared = sorted((who, h) for who, hs in calls.items() for h in hs if who not in callers[h])
    assert not undeclared, f"calls a hand-off it is not named for: {undeclared}"
    stale = sorted((h, who) for h, whos in callers.items() for who in whos if h not in calls.get(who, set()))
    assert not stale, f"named as a caller, but does not call it: {stale}"
    api = ROOT / "utils" / "api" / "__init__.py"
    for path in sorted((ROOT / "utils").rglob("*.py")):         # no other module calls a hand-off
        if path.name != "turn.py" and path != api:
            assert not handoff_calls(ast.parse(path.read_text())), f"{path.relative_to(ROOT)} calls a hand-off"


def test_take_reads_a_message_once_and_refuses_other_keys():
    shared = turn.start_turn("q")
    turn.ask_again(shared, {"kind": "error"}, resample=True)
    assert turn.take(shared, "feedback") == {"kind": "error"} and turn.take(shared, "feedback") is None
    assert turn.take(shared, "resample") is True and turn.take(shared, "resample") is False
    with pytest.raises(KeyError, match="not a one-time message"):
        turn.take(shared, "question")


def test_finish_ends_a_turn_and_can_clear_the_query():
    shared = turn.start_turn("q")
    turn.set_query(shared, "SELECT 1", "user")
    turn.show_rows(shared, [1], True)
    turn.finish(shared, "answered", "one", "from the schema", no_query=True)
    assert shared["answer"] == {"status": "answered", "text": "one", "derivation": "from the schema"}
    assert shared["sql_query"] is None and shared["query_result"] is None and shared["sql_source"] == "user"
