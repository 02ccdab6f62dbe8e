"""duckask: plain-English questions about a DuckDB database.

    from duckask import ask
    r = ask("How many ships were captured?", db="battles.duckdb")   # always a named database
    c = Conversation("battles.duckdb"); c.ask("Which ship was captured first?"); c.ask("and the second?")

The Lahman baseball demo is the command line's (``duckask demo``); from Python, name its file
(``duckask.data.lahman.demo_db_path()``).
"""
__version__ = "0.1.0"
__all__ = ["ask", "Conversation", "Result", "build_flow", "evaluate"]


def __getattr__(name):
    # Lazy, so that `python -m duckask.utils.<tool>` does not import the whole graph first.
    if name in ("ask", "Result"):
        import duckask.utils.api as api

        return getattr(api, name)
    if name == "Conversation":
        from duckask.utils.app.conversation import Conversation

        return Conversation
    if name == "evaluate":
        from duckask.utils.eval.run import evaluate

        return evaluate
    if name == "build_flow":
        from duckask.flow import build_flow

        return build_flow
    raise AttributeError(f"module 'duckask' has no attribute {name!r}")
