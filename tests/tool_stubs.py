"""Local HTTP servers shaped like the services duckask's tools call: an OMDb-style movie API (the key in the query,
or as ``Authorization: Bearer`` on ``/films/<title>``), a SearxNG instance's JSON search, and the faults and tricks
a tool must survive: slow, trickling headers or body, garbage, too large, HTTP 500, redirects on the same host,
to another host and in a loop. Every request is recorded (``log``: paths; ``requests``: path and headers), so a
test can tell what reached a server and what did not."""
from __future__ import annotations

import json
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler

from http_stub import LocalServer

OMDB_KEY = "omdb-secret-key-42"
FILMS = {"heat": {"Title": "Heat", "Year": "1995", "Director": "Michael Mann", "Actors": "Al Pacino, Robert De Niro",
                  "Plot": "A group of high-end professional thieves start to feel the heat from the LAPD.",
                  "imdbRating": "8.3", "Response": "True", "Poster": "https://img.test/heat.jpg"},
         "moneyball": {"Title": "Moneyball", "Year": "2011", "Director": "Bennett Miller", "Actors": "Brad Pitt",
                       "Plot": "Oakland A's general manager Billy Beane's successful attempt to assemble a team on a "
                               "lean budget.", "imdbRating": "7.6", "Response": "True"}}
HITS = [{"url": "https://news.test/worldcup-2022", "title": "Argentina win the 2022 World Cup",
         "content": "Argentina beat France on penalties in the final in Lusail."},
        {"url": "https://wiki.test/2022_FIFA_World_Cup", "title": "2022 FIFA World Cup",
         "content": "The 22nd FIFA World Cup was held in Qatar; Argentina won."}]


class ToolStub(LocalServer):
    def __init__(self):
        super().__init__(_Handler)
        self.log: list[str] = []                              # every request's path and query, in order
        self.requests: list[tuple[str, dict[str, str]]] = []  # the same, with the request's headers


class _Handler(BaseHTTPRequestHandler):
    server: ToolStub

    def log_message(self, *args):
        pass

    def _send(self, code: int, body: bytes, ctype: str = "application/json") -> None:
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _redirect(self, location: str) -> None:
        self.send_response(302)
        self.send_header("Location", location)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def _drip(self, part: str, every: float) -> None:
        """A whole answer, its ``part`` ('headers' or 'body') written a byte every ``every`` s (about a minute)."""
        body = json.dumps({"a": "x" * 200}).encode()
        head = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Padding: " + b"p" * 200 +
                f"\r\nContent-Length: {len(body)}\r\n\r\n".encode())
        for piece, slow in ((head, part == "headers"), (body, part == "body")):
            for chunk in ([piece[i:i + 1] for i in range(len(piece))] if slow else [piece]):
                self.wfile.write(chunk)
                self.wfile.flush()
                if slow:
                    time.sleep(every)

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        q = {k: v[0] for k, v in urllib.parse.parse_qs(url.query).items()}
        self.server.log.append(self.path)
        self.server.requests.append((self.path, dict(self.headers.items())))
        route = url.path.rstrip("/")
        if route == "/omdb":
            if q.get("apikey") != OMDB_KEY:
                return self._send(401, json.dumps({"Response": "False", "Error": "Invalid API key!"}).encode())
            film = FILMS.get(q.get("t", "").lower())
            body = film or {"Response": "False", "Error": "Movie not found!"}
            return self._send(200, json.dumps(body).encode())
        if route == "/searx/search":
            if q.get("format") != "json":
                return self._send(403, b"format not allowed")
            words = set(q.get("q", "").lower().split())
            hits = [h for h in HITS if words & set(h["title"].lower().split())]
            return self._send(200, json.dumps({"query": q.get("q"), "results": hits}).encode())
        if route == "/slow":
            time.sleep(float(q.get("s", "3")))
            return self._send(200, b'{"late": true}')
        if route == "/trickle":                 # each byte in time, the whole far too late
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            for ch in b'{"a": "' + b"x" * 40 + b'"}':
                self.wfile.write(bytes([ch]))
                self.wfile.flush()
                time.sleep(0.05)
            return None
        if route.startswith("/films/"):         # the title as a path segment; the key in the query or a header
            if OMDB_KEY not in (q.get("apikey"), self.headers.get("Authorization", "").removeprefix("Bearer ")):
                return self._send(401, json.dumps({"Response": "False", "Error": "Invalid API key!"}).encode())
            film = FILMS.get(urllib.parse.unquote(route.removeprefix("/films/")).lower())
            return self._send(200, json.dumps(film or {"Response": "False", "Error": "Movie not found!"}).encode())
        if route == "/drip":                    # headers or body a byte every `every` s: each read in time, never done
            return self._drip(q.get("part", "body"), float(q.get("every", "0.3")))
        if route == "/hop":                     # a redirect on the same host, the query kept
            return self._redirect(f"/omdb?{url.query}")
        if route == "/away":                    # a redirect to another server (`to`), the query (and key) kept
            return self._redirect(f"{q['to']}/omdb?{url.query}")
        if route == "/loop":
            return self._redirect("/loop")
        if route == "/to-https":                # the same host and port, another scheme
            return self._redirect(f"https://{self.headers.get('Host')}/omdb?{url.query}")
        if route.startswith("/garbage"):
            return self._send(200, b"<html><body>502 Bad Gateway</body></html>", "text/html")
        if route == "/big":
            return self._send(200, json.dumps({"blob": "x" * 300_000}).encode())
        if route == "/error":
            return self._send(500, b'{"error": "boom"}')
        return self._send(404, b'{"error": "no such route"}')
