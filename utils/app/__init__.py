"""The ways people use duckask: each builds a turn through the API they share (``duckask.utils.api``: ``ask``,
``Result``, how a Result looks).

Surfaces:
- ``cli``: the ``duckask`` command's parser; ``commands`` (ask, chat, schema, demo, warm, eval, teach,
  examples, model), ``write_commands`` (sql, audit, and ask's --out / --email / --into-table) and
  ``semantic_commands`` (semantic init, convert, check); ``demo`` (the database a command works on when
  ``--db`` names none: the demo, the CLI's default and never the library's);
- ``chat`` (the loop, commands, piped mode) and ``terminal`` (readline, rich, the confirm prompt);
- ``server`` (``duckask serve``: the page and the question routes), ``server_actions`` (your SQL, write
  decisions, downloads, email), ``server_guards`` (Host, Origin, body size and key, before every route;
  who is asking), ``pending`` (the writes held for a decision) and ``queue`` (the ``Gate`` every request
  waits in);
- ``mcp_server`` (``duckask mcp``: tools for AI agents);
- ``conversation`` (``Conversation``: turns with history, sessions on disk); ``warm`` (``duckask warm``).
- ``deliver``: the terminal's write approval and the actions on an answered Result.
"""
