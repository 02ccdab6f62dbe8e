"""An Airtable base read into a DuckDB file: ``api`` (pyairtable: the base's schema and records, errors said
clearly), ``schema`` (field types → DuckDB, join tables, what an import was), ``load`` (the records into those
tables: the full build, a refresh's changes). ``duckask import airtable`` itself, which also drafts the semantic
file, is ``semantic.airtable`` (above this package).
"""
