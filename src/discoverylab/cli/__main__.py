"""`python -m discoverylab.cli` runs the command."""

from discoverylab.cli.main import app

app()
