"""The one error of a semantic file (dbt's spec or the older YAML/markdown form) that cannot be read or applied,
raised by ``manifest``, ``descriptions`` and ``markdown`` alike; a leaf of the package, so that none of them imports
another for it."""
from __future__ import annotations


class SemanticFileError(ValueError):
    """A semantic file that cannot be applied; the message names the file, the line and the fix."""
