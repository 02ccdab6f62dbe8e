"""duckask: plain-English questions about a DuckDB database.

    from duckask import ask
    r = ask("Who hit the most home runs in 2019?")          # the Lahman demo database
    r = ask("How many ships were captured?", db="battles.duckdb")
"""
from duckask.flow import build_flow
from duckask.utils.api import Result, ask

__all__ = ["ask", "Result", "build_flow"]
__version__ = "0.1.0"
