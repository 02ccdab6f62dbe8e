"""A local HTTP server that speaks the parts of Airtable's REST API duckask uses, for tests and the benchmark.

- ``GET /v0/meta/bases/{base}/tables``: the base schema;
- ``GET /v0/{base}/{table}`` and ``POST /v0/{base}/{table}/listRecords``: records, ``pageSize`` (at most
  100) and ``offset`` pagination, ``fields[]``, ``returnFieldsByFieldId`` and the one ``filterByFormula``
  duckask sends (``IS_AFTER(LAST_MODIFIED_TIME(), DATETIME_PARSE('...'))``; any other is a 422 as Airtable
  answers an invalid formula);
- a bearer token checked (401 otherwise); faults to order: the first ``n`` requests answered 429 with
  Retry-After, a given page of a table answered with a broken body, a latency per request; and hostile
  answers: ``offsets = "repeat"`` (every page gives the same offset) or ``"endless"`` (a new offset every
  page, forever), ``field_keys = "names"`` (records keyed by field name whatever was asked, as a proxy that
  drops ``returnFieldsByFieldId`` would answer).

``soccer_base(players, seed)`` builds a youth football club: Teams (age group, coach, linked players, a
rollup, a count and a lookup) and Players (age group U8/U9/U10, linked team, positions, goals, active,
birthday, photo, registered, fee, an age formula), so every field type duckask maps is exercised.
"""
from __future__ import annotations

import datetime as dt
import json
import random
import re
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler

from http_stub import LocalServer

TOKEN = "patSTUB.secret-token-123"
BASE_ID = "appSOCCERSTUB0001"
_SINCE = re.compile(r"^IS_AFTER\(LAST_MODIFIED_TIME\(\), DATETIME_PARSE\('([^']+)'\)\)$")
FIRST = ["Ava", "Ben", "Cleo", "Dan", "Eli", "Fay", "Gus", "Hana", "Ivo", "Jade", "Kai", "Lea", "Milo", "Nia",
         "Omar", "Pia", "Quin", "Rosa", "Sam", "Tess", "Uma", "Vic", "Wren", "Xavi", "Yara", "Zoe"]
LAST = ["Adams", "Brooks", "Chen", "Diaz", "Evans", "Fox", "Garcia", "Hughes", "Ito", "Jones", "Khan", "Lopez",
        "Murphy", "Novak", "Okafor", "Patel", "Reyes", "Smith", "Tanaka", "Walsh"]
AGE_GROUPS = ["U8", "U9", "U10"]
POSITIONS = ["Goalkeeper", "Defender", "Midfielder", "Forward"]


def _ts(t: dt.datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.000Z")


def _now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)


def _choices(names):
    return {"choices": [{"id": f"sel{n}", "name": n, "color": "blueLight2"} for n in names]}


SCHEMA = [
    {"id": "tblTeams", "name": "Teams", "primaryFieldId": "fldTName", "description": "Club teams, one per age group",
     "fields": [
         {"id": "fldTName", "name": "Name", "type": "singleLineText"},
         {"id": "fldTAge", "name": "Age Group", "type": "singleSelect", "options": _choices(AGE_GROUPS)},
         {"id": "fldTCoach", "name": "Coach", "type": "singleCollaborator", "description": "Head coach"},
         {"id": "fldTPlayers", "name": "Players", "type": "multipleRecordLinks",
          "options": {"linkedTableId": "tblPlayers", "inverseLinkFieldId": "fldPTeam", "isReversed": False,
                      "prefersSingleRecordLink": False}},
         {"id": "fldTGoals", "name": "Total Goals", "type": "rollup",
          "options": {"isValid": True, "recordLinkFieldId": "fldTPlayers", "fieldIdInLinkedTable": "fldPGoals",
                      "result": {"type": "number", "options": {"precision": 0}}}},
         {"id": "fldTCount", "name": "Player Count", "type": "count",
          "options": {"isValid": True, "recordLinkFieldId": "fldTPlayers"}},
         {"id": "fldTNames", "name": "Player Names", "type": "multipleLookupValues",
          "options": {"isValid": True, "recordLinkFieldId": "fldTPlayers", "fieldIdInLinkedTable": "fldPName",
                      "result": {"type": "singleLineText"}}},
     ]},
    {"id": "tblPlayers", "name": "Players", "primaryFieldId": "fldPName", "description": "Registered players",
     "fields": [
         {"id": "fldPName", "name": "Name", "type": "singleLineText", "description": "Player's full name"},
         {"id": "fldPAge", "name": "Age Group", "type": "singleSelect", "options": _choices(AGE_GROUPS),
          "description": "Age group the player plays in"},
         {"id": "fldPTeam", "name": "Team", "type": "multipleRecordLinks",
          "options": {"linkedTableId": "tblTeams", "inverseLinkFieldId": "fldTPlayers", "isReversed": False,
                      "prefersSingleRecordLink": True}},
         {"id": "fldPPos", "name": "Positions", "type": "multipleSelects", "options": _choices(POSITIONS)},
         {"id": "fldPGoals", "name": "Goals", "type": "number", "options": {"precision": 0}},
         {"id": "fldPActive", "name": "Active", "type": "checkbox",
          "options": {"icon": "check", "color": "greenBright"}},
         {"id": "fldPBirth", "name": "Birthday", "type": "date", "options": {"dateFormat": {"name": "iso"}}},
         {"id": "fldPPhoto", "name": "Photo", "type": "multipleAttachments", "options": {"isReversed": False}},
         {"id": "fldPReg", "name": "Registered", "type": "dateTime", "options": {"timeZone": "utc"}},
         {"id": "fldPFee", "name": "Fee Paid", "type": "currency", "options": {"precision": 2, "symbol": "£"}},
         {"id": "fldPYears", "name": "Years Playing", "type": "formula",
          "options": {"isValid": True, "formula": "...", "result": {"type": "number", "options": {"precision": 0}}}},
     ]},
]


class Base:
    """The stub's data: records by table, fields keyed by field id, each with its last modified time."""

    def __init__(self, schema: list[dict], records: dict[str, list[dict]]):
        self.schema, self.records, self.lock = schema, records, threading.Lock()
        self.modified = {r["id"]: dt.datetime(2026, 1, 1) for rows in records.values() for r in rows}

    def field_names(self, table_id: str) -> dict[str, str]:
        return {f["id"]: f["name"] for t in self.schema if t["id"] == table_id for f in t["fields"]}

    def computed(self, table_id: str, rec: dict) -> dict:
        """Rollups, counts and lookups as Airtable would compute them when answering."""
        if table_id != "tblTeams":
            return rec["fields"]
        by_id = {p["id"]: p for p in self.records["tblPlayers"]}
        linked = [by_id[i] for i in rec["fields"].get("fldTPlayers", []) if i in by_id]
        out = dict(rec["fields"])
        out.update({"fldTGoals": sum(p["fields"].get("fldPGoals", 0) for p in linked), "fldTCount": len(linked),
                    "fldTNames": [p["fields"]["fldPName"] for p in linked]})
        return out

    def touch(self, table_id: str, rec_id: str, changes: dict) -> None:
        """Change a record as a user would (links kept both ways): it, and any relinked record, is modified."""
        with self.lock:
            rec = next(r for r in self.records[table_id] if r["id"] == rec_id)
            if "fldPTeam" in changes:
                for t in self.records["tblTeams"]:
                    links = t["fields"].setdefault("fldTPlayers", [])
                    if rec_id in links or t["id"] in changes["fldPTeam"]:
                        t["fields"]["fldTPlayers"] = [i for i in links if i != rec_id] + (
                            [rec_id] if t["id"] in changes["fldPTeam"] else [])
                        self.modified[t["id"]] = _now()
            rec["fields"].update(changes)
            self.modified[rec_id] = _now()

    def add(self, table_id: str, rec: dict) -> None:
        """A new player (on its team's side too)."""
        with self.lock:
            self.records[table_id].append(rec)
            self.modified[rec["id"]] = _now()
            for t in self.records["tblTeams"]:
                if t["id"] in rec["fields"].get("fldPTeam", []):
                    t["fields"]["fldTPlayers"] = [*t["fields"].get("fldTPlayers", []), rec["id"]]
                    self.modified[t["id"]] = _now()

    def delete(self, table_id: str, rec_id: str) -> None:
        with self.lock:
            self.records[table_id] = [r for r in self.records[table_id] if r["id"] != rec_id]
            for t in self.records["tblTeams" if table_id == "tblPlayers" else "tblPlayers"]:
                for key in ("fldTPlayers", "fldPTeam"):
                    if rec_id in t["fields"].get(key, []):
                        t["fields"][key] = [i for i in t["fields"][key] if i != rec_id]
                        self.modified[t["id"]] = _now()


def soccer_base(players: int = 60, seed: int = 7) -> Base:
    rnd = random.Random(seed)
    teams_per_group = max(1, players // 75)
    teams = []
    for g in AGE_GROUPS:
        for n in range(teams_per_group):
            teams.append({"id": f"recT{g}{n:03d}", "createdTime": "2025-08-01T10:00:00.000Z",
                          "fields": {"fldTName": f"{g} {['Lions', 'Hawks', 'Otters', 'Foxes'][n % 4]} {n + 1}",
                                     "fldTAge": g, "fldTPlayers": [],
                                     "fldTCoach": {"id": f"usr{n}", "email": f"coach{n}@club.test",
                                                   "name": f"Coach {LAST[n % len(LAST)]}"}}})
    rows = []
    for i in range(players):
        team = teams[i % len(teams)]
        birthday = f"{2016 + rnd.randint(0, 3)}-0{rnd.randint(1, 9)}-1{rnd.randint(0, 9)}"
        fields = {"fldPName": f"{FIRST[i % len(FIRST)]} {LAST[(i * 7) % len(LAST)]}",
                  "fldPAge": team["fields"]["fldTAge"], "fldPTeam": [team["id"]],
                  "fldPPos": rnd.sample(POSITIONS, rnd.randint(1, 2)), "fldPGoals": rnd.randint(0, 12),
                  "fldPBirth": birthday,
                  "fldPReg": f"2025-0{rnd.randint(1, 9)}-0{rnd.randint(1, 9)}T1{rnd.randint(0, 9)}:30:00.000Z",
                  "fldPFee": round(rnd.uniform(50, 120), 2), "fldPYears": rnd.randint(0, 4)}
        if rnd.random() < 0.8:
            fields["fldPActive"] = True                    # Airtable leaves an unticked box out
        if rnd.random() < 0.3:
            fields["fldPPhoto"] = [{"id": f"att{i}", "url": f"https://dl.airtable.test/p{i}.jpg",
                                    "filename": f"p{i}.jpg"}]
        rows.append({"id": f"recP{i:05d}", "createdTime": "2025-08-02T09:00:00.000Z", "fields": fields})
        team["fields"]["fldTPlayers"].append(rows[-1]["id"])
    return Base(json.loads(json.dumps(SCHEMA)), {"tblTeams": teams, "tblPlayers": rows})


class Stub(LocalServer):
    def __init__(self, base: Base, *, token: str = TOKEN, base_id: str = BASE_ID):
        super().__init__(_Handler)
        self.base, self.token, self.base_id = base, token, base_id
        self.rate_limit_first, self.retry_after = 0, "1"   # answer the next n requests 429
        self.malformed: set[tuple[str, int]] = set()        # (table id, page number) answered with a broken body
        self.latency = 0.0
        self.offsets = "real"                                # "repeat": always the same; "endless": never the last
        self.field_keys = "asked"                            # "names": by field name, whatever was asked
        self.log: list[tuple[str, str, dict]] = []


class _Handler(BaseHTTPRequestHandler):
    server: Stub

    def log_message(self, *args):
        pass

    def _send(self, code: int, body, headers: dict | None = None) -> None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        self._serve(url.path, urllib.parse.parse_qs(url.query))

    def do_POST(self):
        url = urllib.parse.urlsplit(self.path)
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        query = {k: v if isinstance(v, list) else [v] for k, v in body.items()}
        self._serve(url.path.removesuffix("/listRecords"), {**urllib.parse.parse_qs(url.query), **query})

    def _serve(self, path: str, q: dict) -> None:
        s = self.server
        s.log.append((self.command, path, q))
        if s.latency:
            time.sleep(s.latency)
        if self.headers.get("Authorization") != f"Bearer {s.token}":
            return self._send(401, {"error": {"type": "AUTHENTICATION_REQUIRED", "message": "Authentication required"}})
        if s.rate_limit_first > 0:
            s.rate_limit_first -= 1
            return self._send(429, {"errors": [{"error": "RATE_LIMIT_REACHED"}]}, {"Retry-After": s.retry_after})
        parts = path.strip("/").split("/")
        if parts[:3] == ["v0", "meta", "bases"] and len(parts) == 5 and parts[4] == "tables":
            if parts[3] != s.base_id:
                return self._send(404, {"error": "NOT_FOUND"})
            return self._send(200, {"tables": s.base.schema})
        if len(parts) != 3 or parts[0] != "v0" or parts[1] != s.base_id:
            return self._send(404, {"error": "NOT_FOUND"})
        return self._records(parts[2], q)

    def _records(self, table: str, q: dict) -> None:
        s, base = self.server, self.server.base
        tid = next((t["id"] for t in base.schema if table in (t["id"], t["name"])), None)
        if tid is None:
            return self._send(404, {"error": {"type": "TABLE_NOT_FOUND"}})
        size = min(int(q.get("pageSize", ["100"])[0]), 100)
        start = int(q.get("offset", ["itr0"])[0].removeprefix("itr"))
        page = start // size + 1
        if (tid, page) in s.malformed:
            return self._send(200, b'{"records": [{"id": "recX", "fie')
        with base.lock:
            rows = [dict(r, fields=base.computed(tid, r)) for r in base.records[tid]]
            formula = (q.get("filterByFormula") or [""])[0]
            if formula:
                m = _SINCE.match(formula)
                if not m:
                    return self._send(422, {"error": {"type": "INVALID_FILTER_BY_FORMULA"}})
                since = dt.datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S.000Z")
                rows = [r for r in rows if base.modified[r["id"]] > since]
        wanted = q.get("fields[]") or q.get("fields")
        names = base.field_names(tid)
        by_id = (q.get("returnFieldsByFieldId") or ["false"])[0].lower() in ("1", "true") and s.field_keys == "asked"
        out = []
        for r in rows[start:start + size]:
            fields = {k: v for k, v in r["fields"].items() if not wanted or k in wanted or names.get(k) in wanted}
            out.append({"id": r["id"], "createdTime": r["createdTime"],
                        "fields": fields if by_id else {names[k]: v for k, v in fields.items()}})
        body = {"records": out}
        if start + size < len(rows) or s.offsets == "endless":
            body["offset"] = f"itr{start + size}"
        if s.offsets == "repeat":
            body["offset"] = f"itr{size}"
        return self._send(200, body)
