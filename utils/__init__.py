"""duckask utilities, one sub-package per concern: ``llm`` (models), ``db`` (safe database access and
import), ``schema`` (what a database holds, what the model sees, schema linking), ``sql`` (extract,
describe, tidy, repair, vote), ``eval`` (batch evaluation) and ``app`` (CLI, Python API, answer
text); ``settings`` declares the settings and ``config`` loads and checks them, ``damaged`` tells a damaged
file of duckask's own from a busy one. docs/reference/modules.md (generated) says where each job lives."""
