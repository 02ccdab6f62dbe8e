"""How sure an answer is.

- ``signals``: the signals a finished question leaves behind (path, repairs, retries, a vote's
  agreement, the grader, the result's shape, the model's token probabilities, the query's shape, the
  closest example), one plain dict for the live node and the eval record;
- ``confidence``: the fitted model (features as named functions, ``weights.json``) that turns them into
  ``high``, ``medium`` or ``low`` with the reasons in words.

Run on its own (the confidence of signals given as JSON)::

    python -m duckask.utils.trust '{"status": "answered", ...}'
"""
from duckask.utils.trust.confidence import main

__all__ = ["main"]
