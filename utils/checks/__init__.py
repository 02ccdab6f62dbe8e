"""The checks of an answer against its question and the data, kept as data. ``registry.CHECKS`` says of each its kind,
what it needs, what it fails on and where its cases are; the checks themselves are small named functions grouped by
kind (``shape``, ``grounding``, ``coverage``, ``entity``); ``facts``: what they compare with, built once per turn.
ResponseGrader runs them (``registry.failed_check``), the confidence weighs every kind but ``shape``.
"""
