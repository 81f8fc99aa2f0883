"""Terminal play: short human commands (the text view itself is `render.text.render_text`).

The parser is the browser UI's command line (`ui.commands`): objects by name or UUID,
teleport names in any case, and a command it cannot parse costs no step.
"""

from __future__ import annotations

from discoverylab.ui.commands import HELP, parse_command

__all__ = ["HELP", "parse_command"]
