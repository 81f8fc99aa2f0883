"""Tutorial: warm the elder's meal in Dr. House, get the key and step outside.

Modules: `scenario` (the registered Scenario), `things` (theme objects), `oracle` (observation-only solver).
"""
