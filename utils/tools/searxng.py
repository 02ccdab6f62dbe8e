"""``SearxngTool``: web search through a SearxNG instance's JSON API (``/search?q=…&format=json``).

A config entry (in the ``tools`` setting)::

    - name: web
      type: searxng
      url: http://localhost:8888        # your instance; its settings.yml must allow the json format
      description: news, weather, facts about the world   # optional (this default says more)
      results: 5                         # hits shown to the model (default 5)
      timeout_s: 10

The answer keeps each hit's title, URL and snippet; every URL shown to the model is cited as a source.
Run on its own:
"""
from __future__ import annotations

import urllib.parse

from duckask.utils.tools.base import Param, Tool, ToolError, ToolResult, check_config, compact, get_json

KEYS = {"name", "type", "description", "url", "results", "timeout_s", "max_bytes", "send_database_values",
        "language"}


class SearxngTool(Tool):
    kind = "web"

    def __init__(self, config: dict):
        url = check_config(config, KEYS, "searxng")
        super().__init__(config["name"], config.get("description") or "web search for everything else: news, weather, "
                         "sports results, facts about the world, people and places",
                         [Param("query", "the words to search for")], timeout_s=config.get("timeout_s", 10),
                         max_bytes=config.get("max_bytes", 1_000_000),
                         send_database_values=config.get("send_database_values", False))
        self.url, self.results = url.rstrip("/"), int(config.get("results", 5))
        self.language = config.get("language")

    def _call(self, args: dict[str, str]) -> ToolResult:
        query = {"q": args["query"], "format": "json", **({"language": self.language} if self.language else {})}
        url = f"{self.url}/search?{urllib.parse.urlencode(query)}"
        data = get_json(url, timeout_s=self.timeout_s, max_bytes=self.max_bytes, tool=self.name)
        hits = data.get("results") if isinstance(data, dict) else None
        if not isinstance(hits, list):
            raise ToolError(f"the answer from {self.url} had no results list (is it a SearxNG JSON API?)")
        kept = [{"title": str(h.get("title") or ""), "url": str(h["url"]), "snippet": str(h.get("content") or "")[:300]}
                for h in hits if isinstance(h, dict) and isinstance(h.get("url"), str)][: self.results]
        if not kept:
            return ToolResult(self.name, False, error=f"the web search for {args['query']!r} found nothing")
        return ToolResult(self.name, True, text=compact(kept), data=kept,
                          sources=[{"name": self.name, "url": h["url"], "title": h["title"]} for h in kept])
