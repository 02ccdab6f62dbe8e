"""``HttpJsonTool``: any read-only JSON API, configured by a URL template and a key from the environment.

A config entry (in the ``tools`` setting)::

    - name: omdb
      type: http_json
      description: films by title - plot, year, director, actors, ratings
      url: https://www.omdbapi.com/?apikey={key}&t={title}
      key_env: OMDB_API_KEY            # the key is read here at call time, never stored or shown
      params: {title: the film's title}
      fields: [Title, Year, Director, Actors, Plot, imdbRating]   # optional: what to keep of the answer
      timeout_s: 10
      max_bytes: 200000

``{key}`` and each parameter are URL-quoted into the template (``key_header: Authorization`` sends the key
as ``Bearer <key>`` in that header instead). The URL cited as the source has the key as ``***``. An answer
that is a JSON object with an ``Error``/``error`` string (OMDb's "Movie not found!") counts as no answer.

What an argument cannot do: choose the host (a parameter in the URL's host is a config error), add a query
parameter (every value is quoted, ``&``, ``=`` and ``#`` included), or name another path: a parameter in the
URL's path whose value, decoded once or more, is only dots (``.``, ``..``), holds ``/``, a backslash or a
control character is refused (``path_trick``) and nothing is sent. The GET itself keeps ``get_json``'s promises
(``utils/tools/base``): one deadline, no redirect to another origin, a size cap.
"""
from __future__ import annotations

import os
import re
import urllib.parse

from duckask.utils.tools.base import Param, Tool, ToolError, ToolResult, check_config, compact, get_json

KEYS = {"name", "type", "description", "url", "key_env", "key_header", "params", "fields", "timeout_s", "max_bytes",
        "send_database_values"}


class HttpJsonTool(Tool):
    kind = "api"

    def __init__(self, config: dict):
        url, params = check_config(config, KEYS, "http_json"), config.get("params") or {}
        if not isinstance(params, dict) or not params:
            raise ValueError(f"tool {config.get('name')!r}: params must map each parameter to what it is")
        holes = set(re.findall(r"{(\w+)}", url))
        if holes - set(params) - {"key"}:
            raise ValueError(f"tool {config.get('name')!r}: the url names {', '.join(sorted(holes - set(params)))}"
                             " which params does not describe")
        if set(re.findall(r"{(\w+)}", urllib.parse.urlsplit(url).netloc)) - {"key"}:
            raise ValueError(f"tool {config.get('name')!r}: the url's host must be fixed, not an argument "
                             "(an argument there would choose where the request and its key go)")
        super().__init__(config["name"], config.get("description") or f"the {config['name']} API",
                         [Param(k, str(v)) for k, v in params.items()],
                         timeout_s=config.get("timeout_s", 10), max_bytes=config.get("max_bytes", 200_000),
                         send_database_values=config.get("send_database_values", False))
        self.url, self.key_env, self.key_header = url, config.get("key_env"), config.get("key_header")
        self.fields = list(config.get("fields") or [])
        self.path_params = path_params(url)

    def _key(self) -> str:
        if not self.key_env:
            return ""
        key = os.environ.get(self.key_env, "")
        if not key:
            raise ToolError(f"set {self.key_env} to the {self.name} API's key")
        return key

    def _call(self, args: dict[str, str]) -> ToolResult:
        refuse_path_tricks({k: v for k, v in args.items() if k in self.path_params})
        key = self._key()
        quoted = {k: urllib.parse.quote(v, safe="") for k, v in args.items()}
        in_url = "" if self.key_header else urllib.parse.quote(key, safe="")
        url = self.url.format_map({**quoted, "key": in_url})
        shown = self.url.format_map({**quoted, "key": "***"})
        headers = {self.key_header: f"Bearer {key}"} if self.key_header and key else None
        data = get_json(url, timeout_s=self.timeout_s, max_bytes=self.max_bytes, headers=headers, shown=shown,
                        tool=self.name)
        if isinstance(data, dict):
            said = next((data[k] for k in ("Error", "error") if isinstance(data.get(k), str)), None)
            if said:
                return ToolResult(self.name, False, error=f"{self.name} said: {said}",
                                  sources=[{"name": self.name, "url": shown}])
            if self.fields:
                data = {k: data[k] for k in self.fields if k in data}
        if data in (None, {}, []):
            return ToolResult(self.name, False, error=f"{self.name} had nothing for that",
                              sources=[{"name": self.name, "url": shown}])
        return ToolResult(self.name, True, text=compact(data), data=data, sources=[{"name": self.name, "url": shown}])


def path_params(url: str) -> set[str]:
    """The parameters a URL template puts in its path (before any ``?`` or ``#``): each value is a path segment."""
    return set(re.findall(r"{(\w+)}", urllib.parse.urlsplit(url).path)) - {"key"}


def path_trick(value: str) -> bool:
    """Whether ``value``, as a path segment, could name another path on some server: once fully percent-decoded
    (``%252e`` is ``%2e`` is ``.``) it is only dots (``.``, ``..``, ``...``; spaces around ignored), or it holds
    ``/`` or ``\\`` or a control character (``%00``)."""
    decoded = value
    for _ in range(5):
        decoded, before = urllib.parse.unquote(decoded), decoded
        if decoded == before:
            break
    return set(decoded.strip()) <= {"."} or any(c in "/\\" or ord(c) < 32 or ord(c) == 127 for c in decoded)


def refuse_path_tricks(path_args: dict[str, str]) -> None:
    """A ``ToolError`` naming the first path argument that could change the URL's path (``path_trick``)."""
    for name, value in sorted(path_args.items()):
        if path_trick(value):
            raise ToolError(f"argument {name}={value!r} refused: a value put in the URL's path may not be . or .., "
                            "nor hold / or \\ or a control character, percent-encoded or not")
