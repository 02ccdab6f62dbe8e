"""The plan prompt: what the model is asked to write a plan from (PlanQuery's call, and ``duckask warm``, which keeps
its start on disk). The catalog and a worked example made of the layer's own names come first, the same bytes for
every question on a database, then the question; the reply is pre-filled with ``PREFIX``.
"""
from __future__ import annotations

from duckask.utils.semantic.reading import catalog_text

PREFIX = "metrics: ["
SYSTEM = ("You turn a question into a query plan over named metrics and dimensions. Answer with YAML only: "
          "metrics (metric names), group_by (dimension names), where (filters written as name operator value, "
          "e.g. year = 2019), order_by (- before a name for descending), limit (a number, for top or most "
          "questions). Use only names from the catalog; leave out keys you do not need.")


def example(layer) -> str:
    """A worked plan made of the layer's own names (the same for every question on a database)."""
    m = next(iter(layer.metrics))
    d = next((n for n, x in layer.dimensions.items() if x.kind == "categorical"), None)
    if d is None:
        return f"Question: what is the {m}?\nmetrics: [{m}]"
    return f"Question: which 5 {d.split('__')[-1]} have the highest {m}?\n" \
           f"metrics: [{m}]\ngroup_by: [{d}]\norder_by: [-{m}]\nlimit: 5"


LIST_NOTE = "\n(A list of names, no number asked: write metrics: [] and group_by the dimension to list.)"


def build_messages(layer, question: str, listing: bool = False) -> tuple[list[dict], str]:
    """The messages for ``question``, and their stable start (the catalog and the example)."""
    stable = f"Catalog:\n{catalog_text(layer)}\nExample:\n{example(layer)}\n\n"
    return [{"role": "system", "content": SYSTEM},
            {"role": "user", "content": f"{stable}Question: {question}" + (LIST_NOTE if listing else "")}], stable
