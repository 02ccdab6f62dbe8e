"""duckask utilities, one sub-package per concern: ``llm`` (models), ``db`` (safe database access and
import), ``schema`` (what a database holds, what the model sees, schema linking), ``sql`` (extract,
describe, tidy, repair, vote), ``eval`` (batch evaluation) and ``app`` (CLI, Python API, answer
text); ``config`` holds the settings, ``damaged`` tells a damaged file of duckask's own from a busy one.
docs/design.md section 3 says where each job lives; each module with a job of its own runs alone with
``python -m duckask.utils.<package>.<module>``."""
