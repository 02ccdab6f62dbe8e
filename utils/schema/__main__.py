"""``python -m duckask.utils.schema --db PATH``: the schema exactly as the model sees it (``ddl.main``)."""
from duckask.utils.schema.ddl import main

raise SystemExit(main())
