"""Spec + arrays -> results: one define-by-run pass over live Variables."""
