"""The `discoverylab` command (`main`, `saved_runs`, `options`) and its terminal commands (`textui`)."""

from discoverylab.cli.main import app

__all__ = ["app"]
