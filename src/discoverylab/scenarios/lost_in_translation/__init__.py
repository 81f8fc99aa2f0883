"""Lost in Translation theme: learn an alien language's words to do what is asked.

Modules: `scenario` (the registered Scenario), `things` (theme objects), `oracle` (observation-only solver).
"""
