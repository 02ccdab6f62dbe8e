"""duckask utilities: one job per module, each runnable with `python -m duckask.utils.<name>`."""
