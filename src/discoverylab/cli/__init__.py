"""The `discoverylab` command (`main`) and its terminal commands (`textui`)."""

from discoverylab.cli.main import app

__all__ = ["app"]
