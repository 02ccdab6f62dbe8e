"""Delivering results: files (``export``: csv, parquet, json, xlsx) and email (``mail``: SMTP)."""
