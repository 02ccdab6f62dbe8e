"""The ways people use duckask: the ``duckask`` command (``cli``, with each subcommand in
``commands``), the Python API (``api``: ``ask()`` and ``Result``), and answer rendering (``answer``)."""
