"""What the page offers a newcomer beside the thread: suggested questions and the metrics to browse.

``suggestions(prep)``: the taught pairs' questions (the settings' examples file and the knowledge store) first,
then one question per metric of the semantic file ("What are the home runs by year?"), at most ``LIMIT``.
``metrics(prep)``: each metric of the semantic file with its plain-words label, description and formula (none
without a file in dbt's format).
"""
from __future__ import annotations

LIMIT = 6


def _layer(prep):
    from duckask.utils.semantic.manifest import layer_for

    try:
        return layer_for(prep.settings)
    except Exception:   # a file that does not load is reported where questions are answered, not here
        return None


def metrics(prep) -> list[dict]:
    from duckask.utils.semantic.plan import label

    layer = _layer(prep)
    if layer is None:
        return []
    return [{"name": n, "label": label(n), "description": m.description, "formula": m.formula}
            for n, m in layer.metrics.items()]


def suggestions(prep) -> list[str]:
    from duckask.utils.knowledge import examples_for

    try:
        taught = [ex.question for ex in examples_for(prep.database, prep.settings)]
    except Exception:   # a pair that no longer verifies: the page still offers the metrics
        taught = []
    by_year = [f"What are the {m['label']} by year?" for m in metrics(prep)]
    out = list(dict.fromkeys(taught[:LIMIT - 2] + by_year))
    return out[:LIMIT]
