"""Archaeology Dating theme: validate a dating instrument on known artifacts, then flag the oldest.

Modules: `scenario` (the registered Scenario), `things` (theme objects), `oracle` (observation-only solver).
"""
