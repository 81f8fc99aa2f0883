"""Space Sick theme: find which food makes the colonists ill, and feed the colony safely.

Modules: `scenario` (the registered Scenario), `things` (theme objects and instruments),
`colony` (the Normal/Challenge town and its characters), `oracle` (observation-only solver).
"""
