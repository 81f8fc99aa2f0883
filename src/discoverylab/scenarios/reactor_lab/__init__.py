"""Reactor Lab theme: find which property sets a crystal's resonance frequency, then tune the reactor.

Modules: `scenario` (the registered Scenario), `things` (theme objects), `oracle` (observation-only solver).
"""
