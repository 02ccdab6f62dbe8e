"""The semantic file in the field's format: dbt's semantic model spec, parsed by MetricFlow's own parser.

A file (or a directory of them, e.g. a dbt project's ``models/``) holds YAML documents of four kinds that
MetricFlow reads (``semantic_model:``, ``metric:``, ``saved_query:``, one ``project_configuration:``), and
one that duckask reads, the side section::

    duckask:
      instructions: |            # notes for the whole database, shown before the schema
        Name a person as one column ...
      metrics: {...}             # SQL-path named expressions (the older semantic file's metrics:)
      tables: {...}              # the older semantic file's tables: entries, for what no model covers

duckask's extras on MetricFlow objects go in the spec's own ``config: {meta: ...}``: ``synonyms`` (words
users say), ``values`` (what a column holds), and on a dimension ``unique_by_entity: true`` (group by the
entity too, so two people with the same name stay apart).

``load_layer(path)`` returns a ``SemanticLayer`` (the manifest, the side section, the names a plan may use);
``as_descriptions(layer)`` the same knowledge in the older semantic file's shape, which the SQL path applies
(``duckask.utils.semantic.descriptions``), so one file teaches both paths. Errors name the file, the line and
the fix.

Run on its own (check a file and list what it defines)::

    python -m duckask.utils.semantic.manifest PATH
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

from duckask.utils.semantic.errors import SemanticFileError

if TYPE_CHECKING:
    from metricflow_semantic_interfaces.implementations.semantic_manifest import PydanticSemanticManifest

MF_KINDS = ("semantic_model", "metric", "saved_query", "project_configuration")
SIDE = "duckask"
#: The time spine MetricFlow asks for when a file declares none (never read unless a query needs it).
SPINE = "project_configuration:\n  time_spine_table_configurations:\n" \
        "    - {location: main.duckask_time_spine, column_name: ds, grain: day}\n"
#: Plain words for MetricFlow's time grains, which a plan may use as dimensions (year = metric_time__year).
GRAINS = ("day", "week", "month", "quarter", "year")


@dataclass
class Name:
    """A metric or dimension a plan may name, with what the model and the user read about it."""
    name: str
    description: str = ""
    synonyms: list[str] = field(default_factory=list)
    values: list[str] = field(default_factory=list)
    kind: str = ""                 # metric: simple|ratio|derived|...; dimension: categorical|time|entity
    formula: str = ""              # metric: "sum of batting.hr"; dimension: its table.column or expression
    entity: str = ""               # dimension: its entity, when grouping by it should add the entity


@dataclass
class SemanticLayer:
    path: Path
    files: list[Path]
    manifest: PydanticSemanticManifest     # MetricFlow's, validated
    side: dict
    metrics: dict[str, Name]
    dimensions: dict[str, Name]
    _engine: object = None                # MetricFlow's engine, built once by compile.engine_of

    @property
    def draft(self) -> bool:
        """A draft (``duckask semantic init``) not yet reviewed: the side section still says draft: true."""
        return bool(self.side.get("draft"))


def is_semantic_spec(path: str | Path) -> bool:
    """Whether ``path`` is in dbt's format (a directory, or a YAML file with a semantic_model/metric/duckask
    document) rather than the older semantic file."""
    p = Path(path).expanduser()
    if p.is_dir():
        return True
    if p.suffix.lower() not in (".yaml", ".yml") or not p.is_file():
        return False
    return bool(re.search(r"^(semantic_model|metric|duckask|project_configuration):", p.read_text("utf-8"), re.M))


def _files(path: Path) -> list[Path]:
    if path.is_dir():
        return sorted(p for p in path.rglob("*") if p.suffix.lower() in (".yaml", ".yml")
                      and not any(part.startswith(".") for part in p.relative_to(path).parts))
    if not path.is_file():
        raise SemanticFileError(f"semantic file not found: {path} (give a YAML file or a directory of them)")
    return [path]


def _documents(path: Path, text: str) -> list[tuple[int, dict]]:
    """(first line, document) for each YAML document of one file."""
    try:
        nodes = list(yaml.compose_all(text))
        docs = list(yaml.safe_load_all(text))
    except yaml.YAMLError as e:
        raise SemanticFileError(f"{path}: not valid YAML: {e}") from e
    return [(n.start_mark.line + 1, d) for n, d in zip(nodes, docs) if d is not None]


def _split(files: list[Path]) -> tuple[list, dict, bool]:
    """MetricFlow's files (the side section blanked out, so its line numbers stay right), the side section,
    and whether any file declared a project configuration."""
    from metricflow_semantic_interfaces.parsing.objects import YamlConfigFile

    mf, side, has_config = [], {}, False
    for f in files:
        text = f.read_text("utf-8")
        lines = text.split("\n")
        for line, doc in _documents(f, text):
            if not isinstance(doc, dict) or len(doc) != 1:
                raise SemanticFileError(f"{f}, line {line}: each YAML document holds one object: "
                                        f"{', '.join(MF_KINDS + (SIDE,))} (separate documents with ---)")
            kind = next(iter(doc))
            if kind == SIDE:
                if not isinstance(doc[SIDE], dict):
                    raise SemanticFileError(f"{f}, line {line}: duckask: holds instructions:, metrics:, tables:")
                side.update(doc[SIDE])
                end = next((i for i in range(line, len(lines)) if lines[i].startswith("---")), len(lines))
                lines[line - 1:end] = ["#"] * (end - line + 1)
            elif kind not in MF_KINDS:
                raise SemanticFileError(f"{f}, line {line}: unknown document {kind!r}: use one of "
                                        f"{', '.join(MF_KINDS + (SIDE,))}")
            has_config |= kind == "project_configuration"
        mf.append(YamlConfigFile(filepath=str(f), contents="\n".join(lines)))
    return mf, side, has_config


def load_layer(path: str | Path) -> SemanticLayer:
    """Parse and validate the semantic file(s) at ``path`` with MetricFlow; errors name the file and line."""
    from metricflow_semantic_interfaces.parsing.dir_to_model import (
        parse_yaml_files_to_validation_ready_semantic_manifest,
    )
    from metricflow_semantic_interfaces.parsing.objects import YamlConfigFile
    from metricflow_semantic_interfaces.validations.semantic_manifest_validator import SemanticManifestValidator

    p = Path(path).expanduser()
    files = _files(p)
    mf, side, has_config = _split(files)
    if not has_config:
        mf.append(YamlConfigFile(filepath="(duckask's default time spine)", contents=SPINE))
    try:
        built = parse_yaml_files_to_validation_ready_semantic_manifest(mf, raise_issues_as_exceptions=False)
    except Exception as e:  # MetricFlow raises plain exceptions for some shapes (two project configurations)
        raise SemanticFileError(f"{p}: {' '.join(str(e).split())[:400]}") from e
    issues = list(built.issues.errors)
    if not issues:
        issues = list(SemanticManifestValidator().validate_semantic_manifest(built.semantic_manifest).errors)
    if issues:
        raise SemanticFileError("\n".join(_issue(i) for i in issues[:5]))
    layer = SemanticLayer(p, files, built.semantic_manifest, side, {}, {})
    _index(layer)
    return layer


_LAYERS: dict[tuple, SemanticLayer] = {}


def stamp(path: str | Path) -> int:
    """The newest modification time of a semantic file or of the files of a directory (a cache key)."""
    p = Path(path).expanduser()
    return max((f.stat().st_mtime_ns for f in _files(p)), default=0) if p.is_dir() else p.stat().st_mtime_ns


def layer_for(settings) -> SemanticLayer | None:
    """The semantic layer of the settings' semantic file when it is in dbt's format (else None), loaded once
    per file version. A file that fails to load raises SemanticFileError (the catalog reports it first)."""
    path = getattr(settings, "descriptions", None)
    if not path or not is_semantic_spec(path):
        return None
    key = (str(Path(path).expanduser().resolve()), stamp(path))
    if key not in _LAYERS:
        _LAYERS[key] = load_layer(path)
    return _LAYERS[key]


def _issue(issue) -> str:
    """One MetricFlow validation issue as 'file, line N: what is wrong'."""
    ctx = getattr(issue, "context", None)
    fc = getattr(ctx, "file_context", None) or ctx
    where = getattr(fc, "file_name", None) or "semantic file"
    line = getattr(fc, "line_number", None)
    msg = " ".join(str(issue.message).split())
    msg = re.sub(r"Failed validating .*", "", msg).replace("YAML document did not conform to metric spec. Error: ", "")
    msg = re.sub(r"('[^']*') does not match '\(\?!\.\*__\).*", r"name \1 is not allowed: use lower-case letters, "
                 "digits and single underscores, starting with a letter, at least 2 characters", msg)
    return f"{where}{f', line {line}' if line else ''}: {msg[:300]}"


def unquote(expr: str) -> str:
    """A quoted column ("hr") as its name; any other expression unchanged."""
    e = str(expr).strip()
    return e[1:-1] if len(e) > 2 and e[0] == e[-1] == '"' and '"' not in e[1:-1] else e


def _meta(obj) -> dict:
    cfg = getattr(obj, "config", None)
    return dict(getattr(cfg, "meta", None) or {})


def _words(meta: dict, key: str) -> list[str]:
    v = meta.get(key) or []
    return [str(x) for x in (v if isinstance(v, list) else [v])]


def _index(layer: SemanticLayer) -> None:
    """The names a plan may use: every metric, and every dimension as ``entity__dimension``."""
    m = layer.manifest
    measures = {me.name: (sm, me) for sm in m.semantic_models for me in sm.measures}
    grains = set()
    for sm in m.semantic_models:
        inherited = set(_words(dict(sm.config.meta or {}) if sm.config else {}, "synonyms"))
        entity = sm.primary_entity or next((e.name for e in sm.entities if e.type.value == "primary"), sm.name)
        for d in sm.dimensions:
            meta = _meta(d)
            if d.type.value == "time":
                if not meta.get("constant_time"):
                    grains.add(d.type_params.time_granularity.value if d.type_params else "day")
                continue
            layer.dimensions[f"{entity}__{d.name}"] = Name(
                f"{entity}__{d.name}", d.description or d.label or "",
                [w for w in _words(meta, "synonyms") if w not in inherited],
                _words(meta, "values"), "categorical", f"{sm.node_relation.alias}.{unquote(d.expr or d.name)}",
                entity if meta.get("unique_by_entity") else "")
    finest = min((GRAINS.index(g) for g in grains if g in GRAINS), default=len(GRAINS))
    for g in GRAINS[finest:]:    # none without a real time dimension (a constant date is not one)
        layer.dimensions[g] = Name(g, f"the {g} (metric_time__{g}); filter as {g} = 2019" if g == "year"
                                   else f"the {g} (metric_time__{g})", [], [], "time", "")
    for met in m.metrics:
        meta = _meta(met)
        layer.metrics[met.name] = Name(met.name, met.description or met.label or "", _words(meta, "synonyms"),
                                       [], met.type.value, _formula(met, measures))


def _formula(met, measures) -> str:
    tp = met.type_params
    if tp.measure is not None and tp.measure.name in measures:
        sm, me = measures[tp.measure.name]
        expr = unquote(me.expr or me.name)
        table = sm.node_relation.alias
        return f"number of {table} rows" if expr == "1" else f"{me.agg.value} of {table}.{expr}"
    if tp.numerator is not None and tp.denominator is not None:
        return f"{tp.numerator.name} / {tp.denominator.name}"
    if tp.expr:
        return f"{tp.expr} (from {', '.join(x.name for x in tp.metrics or [])})"
    return met.type.value
