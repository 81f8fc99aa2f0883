"""Plant Nutrients theme: infer the soil-nutrient rule under which seeds grow.

Modules: `scenario` (the registered Scenario), `things` (theme objects), `oracle` (observation-only solver).
"""
