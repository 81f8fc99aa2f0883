"""Proteomics theme: find the animal species whose protein profile is the outlier.

Modules: `scenario` (the registered Scenario), `things` (theme objects), `oracle` (observation-only solver).
"""
