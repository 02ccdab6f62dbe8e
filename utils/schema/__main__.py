"""``python -m duckask.utils.schema --db PATH``: the schema exactly as the model sees it."""
from duckask.utils.schema import main

raise SystemExit(main())
