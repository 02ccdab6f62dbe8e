"""The load a team puts on duckask (issue 35): two ``duckask serve`` processes on one shared Postgres state, an
OpenAI-compatible stub as the model (it answers at once, so this measures duckask, not a model), and N clients
sending a mix of questions and writes to either server for a fixed time:

- a question: ``POST /api/ask`` with ``"thread": true`` (SQL from the stub, run on the DuckDB file, a template
  sentence; the turn joins the client's thread in the state);
- a write: ``POST /api/sql`` with a DELETE on one server (a pending card in the shared state), then its decision
  (approve or reject, at random) on a random server, and often a second, racing approval of the same card on
  the other server, which must be refused.

Reported: requests per second, p50/p99 latency per kind, errors; the thread check: each client's thread, read
back through one server, holds every turn it asked on either; and the audit check: every proposed write is in
the shared audit log, decided exactly once (approved or rejected), none left pending, and as many approvals as
decisions the servers accepted. What it does not show: a model's time (the stub answers in microseconds), a
network between machines (all on 127.0.0.1), the data writes themselves (several processes cannot write one
DuckDB file: DuckDB's lock lets one process write while none other has it open, so an approved write on this
setup ends ``error`` with DuckDB's lock message, and nothing changes; see docs/scale-out.md).

    .venv/bin/python bench/scale_out.py [--clients 8] [--seconds 60] [--out docs/results/scale_out.json]
"""
from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import duckdb
import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from openai_stub import free_port  # noqa: E402  (the tests' helper: a port no call here handed out before)

DUCKASK = Path(sys.executable).parent / "duckask"
QUESTIONS = ["How many players are there?", "Which team has the most points?", "List the players of team 1",
             "What is the average number of points?"]
SQL = {"How many players": "SELECT count(*) AS players FROM players",
       "most points": "SELECT t.name, sum(p.points) AS points FROM players p JOIN teams t ON t.id = p.team_id "
                      "GROUP BY t.name ORDER BY points DESC LIMIT 1",
       "team 1": "SELECT name FROM players WHERE team_id = 1",
       "average": "SELECT avg(points) AS points FROM players"}


def model_reply(body: dict) -> str:
    """The stub model: the SQL for the question in the last message (any node asks the same: only SQLGenerator
    calls it with the settings below)."""
    text = json.dumps(body.get("messages", []))
    sql = next((s for k, s in SQL.items() if k in text), "SELECT count(*) FROM players")
    return f"```sql\n{sql}\n```"


def build_db(path: Path) -> Path:
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE teams (id INTEGER PRIMARY KEY, name VARCHAR)")
    con.execute("CREATE TABLE players (id INTEGER PRIMARY KEY, name VARCHAR, team_id INTEGER REFERENCES teams (id), "
                "points INTEGER)")
    con.execute("INSERT INTO teams SELECT i, 'team ' || i FROM range(1, 31) t(i)")
    con.execute("INSERT INTO players SELECT i, 'player ' || i, 1 + i % 30, (i * 37) % 50 FROM range(1, 5001) t(i)")
    con.close()
    return path


def start_server(port: int, db: Path, state: str | None, stub_url: str, config: Path, cache: Path) -> subprocess.Popen:
    env = {**os.environ, "DUCKASK_BASE_URL": stub_url, "DUCKASK_API_KEY": "stub", "DUCKASK_CONFIG": str(config),
           "DUCKASK_CACHE_DIR": str(cache)}
    return subprocess.Popen([str(DUCKASK), "serve", "--db", str(db), "--port", str(port), "--allow-writes",
                             "--max-concurrent", "8", *(["--state", state] if state else [])], env=env,
                            stdout=subprocess.DEVNULL, stderr=open(cache / f"serve-{port}.log", "w"))


def log_tail(cache: Path, port: int, lines: int = 15) -> str:
    log = cache / f"serve-{port}.log"
    return "\n".join(log.read_text(errors="replace").splitlines()[-lines:]) if log.exists() else "(no log)"


def wait_up(url: str, proc: subprocess.Popen, cache: Path, seconds: float = 180) -> bool:
    """True once the server answers /api/health; False if it exited first (the caller may start it again on
    another port); an error with its log's tail if it never answers within ``seconds``."""
    port = int(url.rsplit(":", 1)[1])
    until = time.monotonic() + seconds
    while time.monotonic() < until:
        if proc.poll() is not None:
            return False
        try:
            if httpx.get(f"{url}/api/health", timeout=2).status_code == 200:
                return True
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"the server at {url} did not answer in {seconds:.0f} s; its log ends:\n"
                       f"{log_tail(cache, port)}")


def start_servers(n: int, db: Path, state: str | None, stub_url: str, config: Path, cache: Path,
                  procs: list[subprocess.Popen], tries: int = 3) -> list[str]:
    """The URLs of n servers, each on a free port and answering (every process started is added to ``procs``,
    for the caller to stop); one that exits while starting (e.g. its port taken by another process between
    choosing and binding) is started again on another port, up to ``tries`` times."""
    urls: list[str] = []
    for _ in range(n):
        for attempt in range(tries):
            port = free_port()
            proc = start_server(port, db, state, stub_url, config, cache)
            procs.append(proc)
            if wait_up(f"http://127.0.0.1:{port}", proc, cache):
                urls.append(f"http://127.0.0.1:{port}")
                break
            if attempt == tries - 1:
                raise RuntimeError(f"the server on port {port} exited ({proc.returncode}) {tries} times; its log "
                                   f"ends:\n{log_tail(cache, port)}")
    return urls


class Load:
    def __init__(self, urls: list[str], seed: int):
        self.urls, self.rng_seed = urls, seed
        self.latency: dict[str, list[float]] = {"ask": [], "propose": [], "decide": [], "second_decide": []}
        self.errors: list[str] = []
        self.proposed: list[int] = []
        self.accepted: Counter = Counter()        # (id, decision) the servers answered 200 to
        self.refused_seconds = 0
        self.thread_turns: Counter = Counter()    # client -> its questions answered (each joined its thread)
        self.lock = threading.Lock()

    def timed(self, kind: str, call) -> httpx.Response | None:
        t0 = time.perf_counter()
        try:
            r = call()
        except httpx.HTTPError as e:
            with self.lock:
                self.errors.append(f"{kind}: {type(e).__name__}: {e}")
            return None
        with self.lock:
            self.latency[kind].append(time.perf_counter() - t0)
        return r

    def client(self, n: int, until: float) -> None:
        rng = random.Random(self.rng_seed + n)
        session = {"X-Duckask-Session": f"client-{n}"}
        with httpx.Client(timeout=60) as http:
            while time.monotonic() < until:
                url = rng.choice(self.urls)
                if rng.random() < 0.75:
                    body = {"question": rng.choice(QUESTIONS), "thread": True}
                    r = self.timed("ask", lambda u=url, b=body: http.post(f"{u}/api/ask", json=b, headers=session))
                    if r is not None and (r.status_code != 200 or r.json().get("status") != "answered"
                                          or r.json().get("thread_error")):
                        self.errors.append(f"ask {r.status_code}: {r.text[:200]}")
                    elif r is not None:
                        with self.lock:
                            self.thread_turns[n] += 1
                    continue
                self.write(http, rng, url, session)

    def write(self, http, rng, url, session) -> None:
        sql = f"DELETE FROM players WHERE id = {rng.randint(1, 5000)}"
        r = self.timed("propose", lambda: http.post(f"{url}/api/sql", json={"sql": sql}, headers=session))
        if r is None or r.status_code != 200:
            self.errors.append(f"propose {getattr(r, 'status_code', None)}: {getattr(r, 'text', '')[:200]}")
            return
        card = r.json()["write"]
        with self.lock:
            self.proposed.append(card["id"])
        decision = rng.choice(["approve", "reject"])
        first, other = rng.sample(self.urls, 2) if len(self.urls) > 1 else self.urls * 2
        body = {"decision": decision, "approval_token": card["approval_token"]}

        def decide(where: str) -> httpx.Response:
            return http.post(f"{where}/api/writes/{card['id']}", json=body, headers={"Origin": where, **session})

        racing = rng.random() < 0.5
        second: list = []
        racer = threading.Thread(target=lambda: second.append(self.timed("second_decide", lambda: decide(other))))
        if racing:
            racer.start()
        r = self.timed("decide", lambda: decide(first))
        if racing:
            racer.join()
        for resp in [r, *second]:
            if resp is not None and resp.status_code == 200:
                with self.lock:
                    self.accepted[(card["id"], decision)] += 1
            elif resp is not None and resp.status_code != 404:
                self.errors.append(f"decide {resp.status_code}: {resp.text[:200]}")


def thread_check(urls: list[str], turns: Counter, clients: int) -> dict:
    """Each client's thread, read back through one server while its questions went to either: as many turns as
    it asked (up to the thread's bound), whichever server answered each."""
    from duckask.utils.state.threads import MAX_TURNS

    short = {}
    for n in range(clients):
        got = httpx.get(f"{urls[n % len(urls)]}/api/thread", headers={"X-Duckask-Session": f"client-{n}"},
                        timeout=60).json()["turns"]
        if len(got) != min(turns[n], MAX_TURNS):
            short[n] = {"asked": turns[n], "kept": len(got)}
    return {"threads": clients, "turns_asked": sum(turns.values()), "short": short, "ok": not short}


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000, 1)


def audit_check(settings, proposed: list[int], accepted: Counter) -> dict:
    from duckask.utils.state import audit_log

    entries = {e["id"]: e for e in audit_log(settings).entries()}
    missing = [i for i in proposed if i not in entries]
    pending = [i for i in proposed if i in entries and entries[i]["decision"] == "pending"]
    twice = [i for i, n in Counter(i for i, _ in accepted).items() if n > 1]
    mismatched = [i for (i, d) in accepted if entries.get(i, {}).get("decision") != {"approve": "approved",
                                                                                      "reject": "rejected"}[d]]
    return {"proposed": len(proposed), "in_audit": len(proposed) - len(missing), "missing": missing,
            "left_pending": pending, "accepted_twice": twice, "decision_differs_from_accepted": mismatched,
            "decisions": dict(Counter(entries[i]["decision"] for i in proposed if i in entries)),
            "outcomes": dict(Counter(str(entries[i]["outcome"]) for i in proposed if i in entries)),
            "outcome_details": dict(Counter((entries[i]["detail"] or "")[:90] for i in proposed
                                            if i in entries and entries[i]["outcome"] == "error")),
            "ok": not (missing or pending or twice or mismatched)}


def main(argv: list[str] | None = None) -> int:
    from openai_stub import StubOpenAI
    from pg_support import PostgresServer

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--seed", type=int, default=35)
    ap.add_argument("--servers", type=int, choices=[1, 2], default=2)
    ap.add_argument("--local", action="store_true", help="one server on the local files (no shared state): the "
                    "baseline the shared state is compared with")
    ap.add_argument("--out", default=str(ROOT / "docs" / "results" / "scale_out.json"))
    args = ap.parse_args(argv)
    if args.local and args.servers != 1:
        ap.error("--local takes --servers 1 (servers on local files share nothing)")
    work = Path(tempfile.mkdtemp(prefix="duckask-scale-"))
    pg = PostgresServer().start()
    stub = StubOpenAI(responder=model_reply).start()
    procs: list[subprocess.Popen] = []
    try:
        state = None if args.local else pg.create_database("duckask_state")
        db = build_db(work / "team.duckdb")
        config = work / "config.yaml"
        config.write_text("router: rules\nfollow_ups: rules\nclarify: 'off'\ngrader: 'off'\nanalyzer: rules\n"
                          "candidates: 0\nconfidence_drafts: 0\n")
        urls = start_servers(args.servers, db, state, stub.base_url, config, work, procs)
        for url in urls:                                  # warm: catalog read, first connection to the state
            httpx.post(f"{url}/api/ask", json={"question": QUESTIONS[0]}, timeout=120)
        load = Load(urls, args.seed)
        t0 = time.monotonic()
        until = t0 + args.seconds
        with ThreadPoolExecutor(args.clients) as pool:
            list(pool.map(lambda n: load.client(n, until), range(args.clients)))
        wall = time.monotonic() - t0
        requests = sum(len(v) for v in load.latency.values())
        from duckask.utils.config import load_settings

        check = audit_check(load_settings(None, state=state, cache_dir=str(work)), load.proposed, load.accepted)
        threads = thread_check(urls, load.thread_turns, args.clients)
        summary = {
            "date": time.strftime("%Y-%m-%d"), "command": "bench/scale_out.py " + " ".join(argv or sys.argv[1:]),
            "servers": args.servers, "state": "local files" if args.local else "shared Postgres",
            "clients": args.clients, "seconds": round(wall, 1), "requests": requests,
            "requests_per_s": round(requests / wall, 1),
            "latency_ms": {k: {"n": len(v), "p50": percentile(v, 0.5), "p99": percentile(v, 0.99),
                               "mean": round(statistics.mean(v) * 1000, 1) if v else None}
                           for k, v in load.latency.items()},
            "errors": len(load.errors), "error_examples": load.errors[:10], "audit": check, "threads": threads,
            "model_calls": len(stub.requests)}
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(summary, indent=1, default=str))
        lat = summary["latency_ms"]
        print(f"{args.servers} server(s) on {summary['state']}, {args.clients} clients, {summary['seconds']} s: "
              f"{requests} requests, {summary['requests_per_s']} req/s; ask p50 {lat['ask']['p50']} ms p99 "
              f"{lat['ask']['p99']} ms; propose p50 {lat['propose']['p50']} ms; decide p50 {lat['decide']['p50']} ms "
              f"p99 {lat['decide']['p99']} ms; errors {len(load.errors)}; writes proposed {check['proposed']}, "
              f"decided once: {check['ok']} "
              f"({check['decisions']}; outcomes {check['outcomes']}); threads whole: {threads['ok']} "
              f"({threads['turns_asked']} turns in {threads['threads']})")
        return 0 if check["ok"] and threads["ok"] and not load.errors else 1
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
        stub.stop()
        pg.stop()


if __name__ == "__main__":
    raise SystemExit(main())
