"""`duckask import airtable` against hostile answers and files (issue 30, finding 9), one row per probe.

Each row starts from a clean import of the stub base whose semantic file a person has since reviewed, makes
the server or the file hostile, runs the command as a person would (``duckask import airtable ...``, here
in-process) and asserts it refused with an error that says what was wrong (never the token) and changed
nothing: the database's bytes, the semantic file's bytes and the folder's listing. A row that must go
through (the reviewed semantic file on a full reload, the endpoint stored in the file) says what must hold.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import pytest
from airtable_stub import BASE_ID, TOKEN, Stub, soccer_base

from duckask.utils.airtable.api import DEFAULT_ENDPOINT, AirtableError, max_pages_of
from duckask.utils.semantic import airtable
from duckask.utils.semantic.airtable import import_base, refresh

pytestmark = pytest.mark.slow        # a stub Airtable server: not in the fast set (pytest -m "" runs it)

pytest.importorskip("pyairtable", reason="the airtable extra is not installed: pip install 'duckask[airtable]'")

REVIEW = "# Reviewed by the club secretary: players are the children, not their parents.\n"


@dataclass
class Scene:
    stub: Stub                   # the endpoint the person means
    decoy: Stub                  # another server, which must never hear from the command
    out: Path
    semantic: Path
    env: dict[str, str] = field(default_factory=dict)

    def records_asked(self) -> list[dict]:
        return [q for _m, p, q in self.stub.log if "/meta/" not in p]

    def set_state(self, column: str, value: str) -> None:
        con = duckdb.connect(str(self.out))
        try:
            con.execute(f"UPDATE airtable.state SET {column} = ?", [value])
        finally:
            con.close()


@dataclass
class Attack:
    name: str
    args: Callable[[Scene], list[str]]              # after `duckask import airtable`
    refused: str | None                             # the error it must stop with; None: it must go through
    arrange: Callable[[Scene], None] = lambda s: None
    check: Callable[[Scene, str], None] = lambda s, stdout: None


def _full_refresh(s: Scene) -> list[str]:
    return ["--refresh", "--full", "--out", str(s.out), "--endpoint", s.stub.url]


def _refresh(s: Scene) -> list[str]:
    return ["--refresh", "--out", str(s.out), "--endpoint", s.stub.url]


def _new_draft_beside(s: Scene, stdout: str) -> None:
    new = s.semantic.with_name("club.semantic.new.yaml")
    assert new.read_text().startswith("# DRAFT semantic file") and "draft: true" in new.read_text()
    assert f"semantic draft: {new}" in stdout and f"note: {s.semantic} is not the draft duckask" in stdout


def _few_requests(most: int) -> Callable[[Scene, str], None]:
    def check(s: Scene, _stdout: str) -> None:
        assert 0 < len(s.records_asked()) <= most, len(s.records_asked())
    return check


def _no_request_at_all(s: Scene) -> None:
    assert s.stub.log == [] and s.decoy.log == []


def _by_endpoint_given_now(s: Scene, stdout: str) -> None:
    assert s.decoy.log == [] and "refresh: " in stdout and s.records_asked()
    assert airtable.read_state(s.out)["endpoint"] == s.stub.url     # and that is what it records now


ATTACKS = [
    # 1. A full reload (or a replacing import) must not overwrite the semantic file a person reviewed.
    Attack("refresh --full over a reviewed semantic file", _full_refresh, None, check=_new_draft_beside),
    Attack("import --replace over a reviewed semantic file",
           lambda s: [BASE_ID, "--out", str(s.out), "--replace", "--endpoint", s.stub.url], None,
           check=_new_draft_beside),
    Attack("a schema change's full reload over a reviewed semantic file", _refresh, None,
           arrange=lambda s: s.stub.base.schema[1]["fields"].append(
               {"id": "fldPShirt", "name": "Shirt Number", "type": "number", "options": {"precision": 0}}),
           check=_new_draft_beside),
    # 2. An offset that never ends the listing: repeated, or new every page past any real base's size.
    Attack("an offset that repeats forever", _full_refresh,
           r"page 2 of table 'Teams' gave the same offset as an earlier page, so the listing would never end; "
           "nothing was written",
           arrange=lambda s: setattr(s.stub, "offsets", "repeat"), check=_few_requests(2)),
    Attack("an incremental refresh with an offset that repeats forever", _refresh,
           r"page 2 of table 'Teams' gave the same offset", arrange=lambda s: setattr(s.stub, "offsets", "repeat"),
           check=_few_requests(2)),
    Attack("a new offset every page, forever (AIRTABLE_MAX_PAGES=5)", _full_refresh,
           r"table 'Teams' has more than 5 pages of records, more than any Airtable base holds; nothing was "
           r"written \(set AIRTABLE_MAX_PAGES to allow more\)",
           arrange=lambda s: (setattr(s.stub, "offsets", "endless"), s.env.update(AIRTABLE_MAX_PAGES="5")),
           check=_few_requests(5)),
    # 3. The endpoint stored in the file is not where a refresh sends the token.
    Attack("the file's stored endpoint is another server (--endpoint given now)", _refresh, None,
           arrange=lambda s: s.set_state("endpoint", s.decoy.url), check=_by_endpoint_given_now),
    Attack("the file's stored endpoint is another server (AIRTABLE_ENDPOINT_URL given now)",
           lambda s: ["--refresh", "--out", str(s.out)], None,
           arrange=lambda s: (s.set_state("endpoint", s.decoy.url), s.env.update(AIRTABLE_ENDPOINT_URL=s.stub.url)),
           check=_by_endpoint_given_now),
    Attack("the file's stored base id is a path, not an id", _refresh,
           r"the base id stored in .*club.duckdb is not an Airtable base id",
           arrange=lambda s: s.set_state("base_id", f"{BASE_ID}/../../v0/meta/whoami?x="),
           check=lambda s, _stdout: _no_request_at_all(s)),
    # 4. Records keyed by field names, not the field ids asked for: not a table of NULLs.
    Attack("records keyed by field names (full reload)", _full_refresh,
           r"page 1 of table 'Teams': its records carry the field 'Name' by name, not by the field id asked for "
           r"\(returnFieldsByFieldId; does a proxy drop it\?\); nothing was written",
           arrange=lambda s: setattr(s.stub, "field_keys", "names"), check=_few_requests(1)),
    Attack("records keyed by field names (incremental refresh)", _refresh,
           r"page 1 of table 'Teams': its records carry the field 'Name' by name",
           arrange=lambda s: setattr(s.stub, "field_keys", "names"), check=_few_requests(1)),
]


@pytest.fixture
def scene(tmp_path, monkeypatch):
    for name in ("AIRTABLE_ENDPOINT_URL", "AIRTABLE_MAX_PAGES"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AIRTABLE_TOKEN", TOKEN)
    with Stub(soccer_base(250)) as stub, Stub(soccer_base(250)) as decoy:
        out = tmp_path / "club.duckdb"
        import_base(BASE_ID, out, token=TOKEN, endpoint=stub.url)
        semantic = tmp_path / "club.semantic.yaml"
        semantic.write_text(REVIEW + semantic.read_text().replace("draft: true", "draft: false"))
        stub.log.clear()
        yield Scene(stub, decoy, out, semantic)


def _snapshot(s: Scene) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(s.out.parent.iterdir()) if p.is_file()}


@pytest.mark.parametrize("attack", ATTACKS, ids=[a.name for a in ATTACKS])
def test_attack_is_refused_and_changes_nothing(attack, scene, monkeypatch, capsys):
    attack.arrange(scene)
    for name, value in scene.env.items():
        monkeypatch.setenv(name, value)
    before, reviewed = _snapshot(scene), scene.semantic.read_bytes()
    code = airtable.main(attack.args(scene))
    stdout, stderr = capsys.readouterr()
    assert TOKEN not in stdout + stderr
    assert scene.semantic.read_bytes() == reviewed                  # the reviewed file, always untouched
    if attack.refused:
        assert code == 1 and re.search(r"^duckask import airtable: error: " + attack.refused, stderr, re.M), stderr
        assert _snapshot(scene) == before                           # every byte, and no file left behind
    else:
        assert code == 0, stderr
    attack.check(scene, stdout)


def test_with_no_endpoint_given_a_refresh_goes_to_airtable_not_the_stored_one(scene, monkeypatch):
    """No --endpoint and no AIRTABLE_ENDPOINT_URL: Airtable's own API (the client is stopped before it sends)."""
    scene.set_state("endpoint", scene.decoy.url)
    asked = []

    def client(token, endpoint):
        asked.append(endpoint)
        raise AirtableError("stopped here")

    monkeypatch.setattr(airtable, "client", client)
    with pytest.raises(AirtableError, match="stopped here"):
        refresh(scene.out, token=TOKEN)
    assert asked == [DEFAULT_ENDPOINT] and scene.decoy.log == []


# --------------------------------------------------------------------------- what the fixes leave working
def test_a_semantic_file_nobody_edited_is_replaced_in_place(tmp_path):
    with Stub(soccer_base(30)) as stub:
        out = tmp_path / "club.duckdb"
        import_base(BASE_ID, out, token=TOKEN, endpoint=stub.url)
        stub.base.schema[1]["fields"].append({"id": "fldPShirt", "name": "Shirt Number", "type": "number",
                                              "options": {"precision": 0}})
        done = refresh(out, token=TOKEN, endpoint=stub.url)
        assert done.semantic == str(tmp_path / "club.semantic.yaml") and not done.notes
        assert "shirt_number" in (tmp_path / "club.semantic.yaml").read_text()
        assert not (tmp_path / "club.semantic.new.yaml").exists()
        # Edited after that: the next full reload leaves it and writes beside it, each time.
        (tmp_path / "club.semantic.yaml").write_text("# mine\n")
        for _ in range(2):
            done = refresh(out, token=TOKEN, endpoint=stub.url, full=True)
            assert done.semantic == str(tmp_path / "club.semantic.new.yaml") and len(done.notes) == 1
            assert (tmp_path / "club.semantic.yaml").read_text() == "# mine\n"


def test_a_file_imported_before_the_semantic_hash_was_kept(tmp_path):
    """Its semantic file cannot be told from an edited one, so it is kept; the refresh itself works."""
    with Stub(soccer_base(30)) as stub:
        out = tmp_path / "club.duckdb"
        import_base(BASE_ID, out, token=TOKEN, endpoint=stub.url)
        con = duckdb.connect(str(out))
        con.execute("ALTER TABLE airtable.state DROP COLUMN semantic_sha")
        con.close()
        assert airtable.read_state(out)["semantic_sha"] is None
        stub.base.touch("tblPlayers", "recP00003", {"fldPGoals": 77})
        assert refresh(out, token=TOKEN, endpoint=stub.url).changed >= 1
        reviewed = (tmp_path / "club.semantic.yaml").read_bytes()
        stub.base.schema[1]["fields"].append({"id": "fldPShirt", "name": "Shirt Number", "type": "number",
                                              "options": {"precision": 0}})
        done = refresh(out, token=TOKEN, endpoint=stub.url)
        assert (tmp_path / "club.semantic.yaml").read_bytes() == reviewed and done.notes
        assert "shirt_number" in (tmp_path / "club.semantic.new.yaml").read_text()


def test_a_listing_of_exactly_the_page_limit_is_not_refused(tmp_path):
    with Stub(soccer_base(250)) as stub:              # players: three pages
        done = import_base(BASE_ID, tmp_path / "c.duckdb", token=TOKEN, endpoint=stub.url, max_pages=3)
        assert done.records == 259
        with pytest.raises(AirtableError, match="table 'Players' has more than 2 pages"):
            import_base(BASE_ID, tmp_path / "d.duckdb", token=TOKEN, endpoint=stub.url, max_pages=2)
        assert not (tmp_path / "d.duckdb").exists()


@pytest.mark.parametrize("value,expected", [(None, 10_000), ("25", 25), ("0", None), ("lots", None)])
def test_airtable_max_pages(monkeypatch, value, expected):
    if value is None:
        monkeypatch.delenv("AIRTABLE_MAX_PAGES", raising=False)
    else:
        monkeypatch.setenv("AIRTABLE_MAX_PAGES", value)
    if expected is None:
        with pytest.raises(AirtableError, match="AIRTABLE_MAX_PAGES must be a whole number of pages, at least 1"):
            max_pages_of()
    else:
        assert max_pages_of() == expected and max_pages_of(7) == 7
