"""Demo data for duckask (the Lahman baseball database, built on demand)."""
