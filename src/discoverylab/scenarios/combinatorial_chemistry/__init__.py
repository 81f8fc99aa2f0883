"""Combinatorial Chemistry theme: mix the rust remover and unlock the shed.

Modules: `scenario` (the registered Scenario), `things` (theme objects), `oracle` (observation-only solver).
"""
