"""The one error of a semantic file (dbt's spec or the older form) that cannot be read or applied: below both the
schema side (``schema.descriptions``, ``schema.semantic_md``) and the semantic layer (``semantic.manifest``), so that
neither imports the other for it."""
from __future__ import annotations


class SemanticFileError(ValueError):
    """A semantic file that cannot be applied; the message names the file, the line and the fix."""
