"""The graph's nodes, one per file; each has prep/exec/post and exec never touches ``shared``."""
from duckask.nodes._base import Context, TracedNode
from duckask.nodes.answer_from_tool import AnswerFromTool
from duckask.nodes.answer_general import AnswerGeneral
from duckask.nodes.answer_schema import AnswerSchema
from duckask.nodes.apply_write import ApplyWrite
from duckask.nodes.ask_user import AskUser
from duckask.nodes.assess_confidence import AssessConfidence
from duckask.nodes.call_tool import CallTool
from duckask.nodes.check_answerable import CheckAnswerable
from duckask.nodes.choose_source import ChooseSource
from duckask.nodes.clarify_query import ClarifyQuery
from duckask.nodes.confirm_sql import ConfirmSQL
from duckask.nodes.data_analyzer import DataAnalyzer
from duckask.nodes.error_fixer import ErrorFixer
from duckask.nodes.intent_router import IntentRouter
from duckask.nodes.match_template import MatchTemplate
from duckask.nodes.plan_query import PlanQuery
from duckask.nodes.propose_write import ProposeWrite
from duckask.nodes.report_error import ReportError
from duckask.nodes.resolve_follow_up import ResolveFollowUp
from duckask.nodes.response_grader import ResponseGrader
from duckask.nodes.review_write import ReviewWrite
from duckask.nodes.schema_lookup import SchemaLookup
from duckask.nodes.sql_executor import SQLExecutor
from duckask.nodes.sql_generator import SQLGenerator
from duckask.nodes.table_selector import TableSelector

__all__ = ["Context", "TracedNode", "AnswerFromTool", "AnswerGeneral", "AnswerSchema", "ApplyWrite", "AskUser",
           "AssessConfidence", "CallTool", "CheckAnswerable", "ChooseSource", "ClarifyQuery", "ConfirmSQL",
           "DataAnalyzer", "ErrorFixer", "IntentRouter", "MatchTemplate", "PlanQuery", "ProposeWrite", "ReportError",
           "ResolveFollowUp", "ResponseGrader", "ReviewWrite", "SchemaLookup", "SQLExecutor", "SQLGenerator",
           "TableSelector"]
