"""`python -m discoverylab` runs the `discoverylab` command (as `python -m discoverylab.cli` does)."""

from discoverylab.cli.main import app

app(prog_name="discoverylab")
