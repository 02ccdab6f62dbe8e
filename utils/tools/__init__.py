"""Read-only outside sources the graph may ask when the database cannot answer: web APIs and web search.

- ``base``: ``Tool`` (a name, a description the router reads, parameters, ``call``), ``ToolResult`` and the one
  HTTP GET every shipped tool uses (a deadline, a size cap, JSON or a clear error);
- ``http_api``: ``HttpJsonTool``, any JSON API from a URL template and a key from the environment (e.g. OMDb);
- ``searxng``: ``SearxngTool``, web search through a SearxNG instance's JSON API;
- ``registry``: the ``tools`` setting (off when empty) turned into tools, built-in types and plug-ins from the
  ``duckask.tools`` entry point group; the order of preference (database, then APIs, then the web);
- ``route``: the router's prompt and reply (which source, with which arguments) and the guard that keeps
  values from the database out of a tool's arguments unless its config allows them.

Each module runs on its own (``python -m duckask.utils.tools.registry --config FILE`` lists the tools).
"""
