"""Delivering results: files (export.py) and email (mail.py)."""
