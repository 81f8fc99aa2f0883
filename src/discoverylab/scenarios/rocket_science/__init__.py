"""It's (not) Rocket Science! theme: measure the planet and the fuel, then launch into orbit.

Modules: `scenario` (the registered Scenario), `things` (theme objects), `oracle` (observation-only solver).
"""
