"""The semantic file: what a deployer tells duckask about a database that its schema does not say.

``apply_descriptions(catalog, path)`` returns a copy of the catalog with the file applied; the
ranker and the DDL the model reads both see it. YAML::

    instructions: |                  # notes for the whole database, shown before the schema
      "This season" means 2025-26.
    metrics:                         # named measures, shown with their table
      ppg: {expression: PTS / GP, table: nbacom_player_totals, description: points per game}
    tables:
      nbacom_standings:
        description: Regular-season standings, 2025-26 (wins, losses, conference rank)
        synonyms: [standings, records]
        columns:
          WINS: regular-season wins                     # a description alone
          TEAM_ID:
            description: NBA.com team id
            references: kaggle_team.id                  # a join the database has no key for
          age_group:
            synonyms: [age bracket]
            values: [U8, U9, U10]                       # the values it holds, shown to the model

The same content can be written as markdown (``.md``; see ``markdown.py``). Descriptions replace
existing comments. Unknown tables or columns, and misshapen entries, are errors that name the line.

Check a file and print the schema the model would see: ``duckask schema --db PATH --semantic FILE``.
"""
from __future__ import annotations

import copy
from pathlib import Path

import yaml

from duckask.utils.schema.catalog import Catalog, Metric, Reference
from duckask.utils.semantic.errors import SemanticFileError


def _lines(path: Path, text: str) -> dict[tuple, int]:
    """{key path: line number} for every mapping key of a YAML document (for error messages)."""
    out: dict[tuple, int] = {}

    def walk(node, trail):
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                key = (*trail, k.value)     # not out[(*trail, ...)]: mypy reads that as 3.11's star subscript
                out[key] = k.start_mark.line + 1
                walk(v, key)

    try:
        walk(yaml.compose(text), ())
    except yaml.YAMLError as e:
        raise SemanticFileError(f"{path}: not valid YAML: {e}") from e
    return out


def load_semantic(path: str | Path) -> tuple[dict, dict[tuple, int]]:
    """The file as a dict (markdown converted) and the line of each key."""
    p = Path(path).expanduser()
    from duckask.utils.semantic.manifest import is_semantic_spec, load_layer

    if is_semantic_spec(p):   # dbt's spec: the SQL path reads the same knowledge as the plan path
        from duckask.utils.semantic.reading import as_descriptions

        return as_descriptions(load_layer(p))
    if not p.is_file():
        raise SemanticFileError(f"semantic file not found: {p}")
    if p.suffix.lower() in (".md", ".markdown"):
        from duckask.utils.semantic.markdown import parse_markdown

        return parse_markdown(p)
    text = p.read_text(encoding="utf-8")
    lines = _lines(p, text)
    data = yaml.safe_load(text) or {}
    if not isinstance(data, dict):
        raise SemanticFileError(f"{p}: expected a mapping with tables: (and optionally instructions:, metrics:)")
    if "tables" not in data and not {"instructions", "metrics"} & set(data):
        data = {"tables": data}          # the older form: table entries at the top level
        lines = {("tables", *k): v for k, v in lines.items()}
    return data, lines


def _words(value, where: str) -> list[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, (str, int, float)) for v in value):
        raise SemanticFileError(f"{where}: expected a list of words, e.g. [points, scoring]")
    return [str(v).strip() for v in value if str(v).strip()]


def _known_keys(entry: dict, allowed: tuple[str, ...], where: str, what: str) -> None:
    unknown = set(entry) - set(allowed)
    if unknown:
        raise SemanticFileError(f"{where}: unknown key(s) {sorted(unknown)} for {what} ({', '.join(allowed)})")


def apply_descriptions(catalog: Catalog, path: str | Path) -> Catalog:
    """A copy of ``catalog`` with the semantic file at ``path`` applied (see the module docstring)."""
    from duckask.utils.semantic.manifest import stamp

    data, lines = load_semantic(path)

    def at(*keys) -> str:
        line = lines.get(keys) or lines.get(keys[:-1]) or lines.get(keys[:1])
        return f"{path}, line {line}" if line else str(path)

    out = copy.deepcopy(catalog)
    out.key = f"{catalog.key}+{Path(path).resolve()}:{stamp(path)}"
    if data.get("instructions"):
        out.instructions = str(data["instructions"]).strip()
    tables = data.get("tables") or {}
    if not isinstance(tables, dict):
        raise SemanticFileError(f"{at('tables')}: tables: must map table names to their entries")
    for tname, spec in tables.items():
        t = out.tables.get(tname)
        if t is None:
            raise SemanticFileError(f"{at('tables', tname)}: no table {tname!r} in this database")
        spec = spec if isinstance(spec, dict) else {"description": spec}
        _known_keys(spec, ("description", "synonyms", "columns"), at("tables", tname), f"table {tname}")
        if spec.get("description"):
            t.comment = str(spec["description"]).strip()
        if spec.get("synonyms"):
            t.synonyms = _words(spec["synonyms"], at("tables", tname, "synonyms"))
        for cname, text in (spec.get("columns") or {}).items():
            where = at("tables", tname, "columns", cname)
            c = t.column(cname)
            if c is None:
                raise SemanticFileError(f"{where}: table {tname!r} has no column {cname!r}")
            col = text if isinstance(text, dict) else {"description": text}
            _known_keys(col, ("description", "references", "synonyms", "values"), where, f"column {tname}.{cname}")
            if col.get("description"):
                c.comment = str(col["description"]).strip()
            if col.get("references"):
                c.ref = _declared_ref(out, str(col["references"]), where)
            if col.get("synonyms"):
                c.synonyms = _words(col["synonyms"], at("tables", tname, "columns", cname, "synonyms"))
            if col.get("values"):
                c.allowed = _words(col["values"], at("tables", tname, "columns", cname, "values"))
    if data.get("models") not in (None, "public", "beside"):
        raise SemanticFileError(f"{at('models')}: models: is public (the models are what the model sees) or "
                                f"beside (the default: models and tables side by side)")
    if data.get("models") == "public":
        # what the models read, except models other than dbt's staging and intermediate ones (stg_, int_)
        out.hidden = {r for t in out.tables.values() if t.model for r in t.reads
                      if r not in out.tables or not out.tables[r].model or r.startswith(("stg_", "int_"))}
    metrics = data.get("metrics") or {}
    if not isinstance(metrics, dict):
        raise SemanticFileError(f"{at('metrics')}: metrics: must map names to an expression")
    for name, spec in metrics.items():
        where = at("metrics", name)
        spec = spec if isinstance(spec, dict) else {"expression": spec}
        if not str(spec.get("expression") or "").strip():
            raise SemanticFileError(f"{where}: metric {name!r} needs an expression, e.g. PTS / GP")
        table = str(spec.get("table") or "")
        if table and table not in out.tables:
            raise SemanticFileError(f"{where}: metric {name!r} names table {table!r}, which this database lacks")
        out.metrics.append(Metric(str(name), str(spec["expression"]).strip(),
                                  str(spec.get("description") or ""), table))
    return out


def _declared_ref(catalog: Catalog, target: str, where: str) -> Reference:
    """'table.column' or 'table(column)' -> the catalog's table and column, checked."""
    rt, _, rc = target.replace("(", ".").rstrip(")").partition(".")
    t = catalog.tables.get(rt) or next((x for x in catalog.tables.values() if x.name.lower() == rt.lower()), None)
    c = t.column(rc) if t is not None else None
    if t is None or c is None:
        raise SemanticFileError(f"{where}: references {target!r}, which is not a table.column of this database")
    return Reference(t.name, c.name)
