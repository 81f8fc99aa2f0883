"""Adapters for evaluation and training harnesses (Inspect AI, verifiers). Thin by design: every
episode runs through `discoverylab.server.session.EpisodeSession`, the same core as env-serve."""
