"""The graph's nodes, one per file; each has prep/exec/post and exec never touches ``shared``."""
from duckask.nodes._base import Context, TracedNode
from duckask.nodes.ask_user import AskUser
from duckask.nodes.clarify_query import ClarifyQuery
from duckask.nodes.data_analyzer import DataAnalyzer
from duckask.nodes.error_fixer import ErrorFixer
from duckask.nodes.report_error import ReportError
from duckask.nodes.response_grader import ResponseGrader
from duckask.nodes.schema_lookup import SchemaLookup
from duckask.nodes.sql_executor import SQLExecutor
from duckask.nodes.sql_generator import SQLGenerator
from duckask.nodes.table_selector import TableSelector

__all__ = ["Context", "TracedNode", "AskUser", "ClarifyQuery", "DataAnalyzer", "ErrorFixer", "ReportError",
           "ResponseGrader", "SchemaLookup", "SQLExecutor", "SQLGenerator", "TableSelector"]
