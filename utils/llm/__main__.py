"""``python -m duckask.utils.llm "prompt"``: send one prompt to the configured LLM."""
from duckask.utils.llm import main

raise SystemExit(main())
