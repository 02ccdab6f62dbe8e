"""``python -m duckask.utils.semantic PATH``: check a semantic file and print its catalog."""
from duckask.utils.semantic import main

raise SystemExit(main())
