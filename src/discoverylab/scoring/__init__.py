"""Scorecards: task completion, procedural items and knowledge questions."""

from discoverylab.scoring.scorecard import Scorecard, ScorecardItem

__all__ = ["Scorecard", "ScorecardItem"]
