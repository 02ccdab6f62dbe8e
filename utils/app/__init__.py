"""The ways people use duckask, and the one layer in front of the graph they share.

Surfaces:
- ``cli``: the ``duckask`` command's parser; ``commands`` (ask, chat, schema, demo, warm, eval, teach,
  examples, model), ``write_commands`` (sql, audit, and ask's --out / --email / --into-table) and
  ``semantic_commands`` (semantic init, convert, check);
- ``chat`` (the loop, commands, piped mode) and ``terminal`` (readline, rich, the confirm prompt);
- ``server`` (``duckask serve``: the page and the question routes), ``server_actions`` (your SQL, write
  decisions, downloads, email), ``server_guards`` (Host, Origin, body size and key, before every route;
  who is asking), ``pending`` (the writes held for a decision) and ``queue`` (the ``Gate`` every request
  waits in);
- ``mcp_server`` (``duckask mcp``: tools for AI agents);
- ``conversation`` (``Conversation``: turns with history, sessions on disk); ``warm`` (``duckask warm``).

The layer they share:
- ``api``: ``ask``, ``prepare`` / ``run_turn``, and ``Prepared``'s ``run_sql``, ``propose``, ``decide``,
  ``refresh``;
- ``result``: ``Result`` and what can be done with it next;
- ``present``: how a Result looks on every surface, and every exit code; ``trust_view`` (its confidence and
  a not-sure answer's candidates) and ``present_sql`` (the rows of your own SQL);
- ``deliver``: the terminal's write approval and the actions on an answered Result;
- ``chart``: the chart a result's columns call for.
"""
