"""Plan -> DuckDB SQL, by MetricFlow: duckask never writes a join or a metric itself.

``compile_plan(layer, plan)`` builds MetricFlow's query request (metrics, group-by names, where filters,
order, limit), asks the engine to *explain* it (which renders the SQL without running it: the SqlClient
below only names the dialect) and returns the SQL, which duckask runs through its own read-only executor.
The SQL is wrapped once so that the answer reads well: a year comes out as 2019 (not 2019-01-01 00:00),
columns are named in plain words (``player``, ``team``, ``won_world_series``: ``plan.label``), and the entity
that a ``unique_by_entity`` dimension was grouped with (two players named Frank Thomas stay apart) is not
shown.
"""
from __future__ import annotations

import logging

import sqlglot

from duckask.utils.semantic.manifest import GRAINS, SemanticLayer
from duckask.utils.semantic.plan import Plan, PlanError, label, where_filters

logging.getLogger("metricflow").setLevel(logging.WARNING)
logging.getLogger("metricflow_semantics").setLevel(logging.WARNING)


class _DuckDBDialect:
    """The SqlClient MetricFlow needs to render DuckDB SQL; it never runs anything (duckask does)."""

    def __init__(self):
        from metricflow.protocols.sql_client import SqlEngine
        from metricflow.sql.render.duckdb_renderer import DuckDbSqlPlanRenderer

        self.sql_engine_type = SqlEngine.DUCKDB
        self.sql_plan_renderer = DuckDbSqlPlanRenderer()

    def query(self, stmt, sql_bind_parameter_set=None):
        raise RuntimeError("duckask runs MetricFlow's SQL itself (explain only)")

    execute = dry_run = query

    def close(self) -> None:
        return None

    def render_bind_parameter_key(self, bind_parameter_key: str) -> str:
        return f"${bind_parameter_key}"


def build_engine(manifest):
    from metricflow.engine.metricflow_engine import MetricFlowEngine
    from metricflow_semantics.model.semantic_manifest_lookup import SemanticManifestLookup

    return MetricFlowEngine(SemanticManifestLookup(manifest), _DuckDBDialect())


def engine_of(layer: SemanticLayer):
    """MetricFlow's engine over the layer's manifest, built once and kept on the layer (it compiles; duckask runs
    the SQL)."""
    if layer._engine is None:
        layer._engine = build_engine(layer.manifest)
    return layer._engine


def _mf_name(name: str) -> str:
    return f"metric_time__{name}" if name in GRAINS else name


def _alias(name: str) -> str:
    """The result column's name: the dimension in plain words (``player__full_name`` → ``player``)."""
    return name if name in GRAINS else label(name).replace(" ", "_")


def _column(name: str, alias: str) -> str:
    col = _mf_name(name)
    if name == "year":
        return f"CAST(year({col}) AS INTEGER) AS year"
    if name in GRAINS:
        return f"CAST({col} AS DATE) AS {name}"
    return f"{col} AS {alias}"


def compile_plan(layer: SemanticLayer, plan: Plan) -> str:
    """The plan as one DuckDB SELECT (MetricFlow's SQL, wrapped for reading); PlanError when it cannot."""
    from metricflow.engine.metricflow_engine import MetricFlowQueryRequest

    hidden = [layer.dimensions[g].entity for g in plan.group_by
              if g in layer.dimensions and layer.dimensions[g].entity]
    hidden = [e for e in dict.fromkeys(hidden) if e not in plan.group_by]
    request = MetricFlowQueryRequest.create(
        metric_names=plan.metrics, group_by_names=[_mf_name(g) for g in plan.group_by] + hidden,
        where_constraints=where_filters(plan, layer) or None,
        order_by_names=[("-" if o.startswith("-") else "") + _mf_name(o.lstrip("-")) for o in plan.order_by] or None,
        limit=plan.limit)
    try:
        statement = engine_of(layer).explain(request).sql_statement
    except Exception as e:  # MetricFlow's errors for names that do not go together, etc.
        lines = [ln.strip() for ln in str(e).splitlines() if ln.strip() and not ln.strip().startswith(("{", "}", "'"))]
        raise PlanError(f"MetricFlow cannot compile this plan: {' '.join(' '.join(lines[:4]).split())[:400]}") from e
    if statement.bind_parameter_set.param_dict:
        raise PlanError("MetricFlow's SQL needs bind parameters, which duckask does not pass")
    aliases = {g: _alias(g) for g in plan.group_by}
    if len(set(aliases.values()) | set(plan.metrics)) < len(aliases) + len(plan.metrics):   # two would clash
        aliases = {g: g if g in GRAINS else g.replace("__", "_") for g in plan.group_by}
    cols = [_column(g, aliases[g]) for g in plan.group_by] + list(plan.metrics)
    order = [aliases.get(o.lstrip("-"), o.lstrip("-")) + (" DESC" if o.startswith("-") else "") for o in plan.order_by]
    sql = f"SELECT {', '.join(cols)} FROM ({statement.sql}) AS mf" + (f" ORDER BY {', '.join(order)}" if order else "")
    try:   # laid out for reading; MetricFlow's own text when sqlglot cannot parse it
        return sqlglot.parse_one(sql, read="duckdb").sql(dialect="duckdb", pretty=True, comments=False)
    except sqlglot.errors.SqlglotError:
        return sql
