"""Batch evaluation: question files, execution-accuracy scoring, the run, its records and its report.

- ``questions``: JSONL/YAML/CSV question files and the Spider layouts; database resolution;
- ``scoring``: ``results_match``, Spider (multiset, order when the gold orders) or BIRD (set) semantics;
- ``run``: ``evaluate()`` (the same as ``duckask eval``); ``baseline``: the single-prompt baseline;
- ``records``: the JSONL records file (append + fsync, resume); ``report``: summary and markdown.
"""
