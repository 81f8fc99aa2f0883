"""Evaluation: run episodes, write JSONL records and logs, summarise into tables."""
