"""Archaeology Challenge's knowledge questions: which radioisotope channel dates, and why."""

from __future__ import annotations

from discoverylab.scoring.scorecard import Scorecard


def ask_channel_questions(card: Scorecard, c: int, values: dict[str, float], site: int, lowest: float) -> None:
    """The dating channel `c`'s critical hypothesis and questions; `values` are the known
    artifacts' readings on it, `lowest` the oldest unknown artifact's (at dig site `site`)."""
    card.critical_hypotheses.insert(
        0, f"The lower a value an artifact has on Radioisotope Channel {c}, the older it is."
    )
    # Each question names this instance's dating channel: the eras and decay are common knowledge,
    # the finding is which channel they validate (a report written before playing names none).
    card.ask(
        "Does it clearly make the realization (or assumption) that the known artifacts are from the `stone age`, "
        "`bronze age`, and `iron age` (the stone artifact the oldest, the bronze artifact the middle, the iron "
        f"artifact the youngest), and use that order to find that Radioisotope Channel {c} is the one that dates?",
        "The stone hammer (stone age) is the oldest known artifact, the bronze chisel (bronze age) is in the "
        f"middle and the iron tongs (iron age) are the youngest; only Radioisotope Channel {c} orders them so.",
    )
    card.ask(
        "Does it clearly state that with radioisotope dating, artifacts that are younger should have higher "
        f"radioisotope values, and/or older artifacts should have lower values, on Radioisotope Channel {c}?",
        f"Radioactive decay: the older an artifact, the lower its value on Radioisotope Channel {c}, the dating "
        "radioisotope.",
    )
    card.ask(
        f"Does it clearly state that Radioisotope Channel {c} shows a pattern where the (1) stone artifact has the "
        "lowest value, (2) bronze artifact has a medium value, and (3) iron artifact has the highest value, "
        "making it likely useful for radioisotope dating?",
        f"Radioisotope Channel {c}: stone hammer {values['ancient stone hammer']:.3f} < bronze chisel "
        f"{values['ancient bronze chisel']:.3f} < iron tongs {values['ancient iron tongs']:.3f}; the other "
        "channels show no such pattern.",
    )
    card.ask(
        f"Does it clearly state that the artifact at Dig Site #{site} has the lowest Radioisotope "
        f"Channel {c} value, signifying that it is the oldest of the 3 unknown artifacts?",
        f"The unknown artifact at Dig Site #{site} reads {lowest:.3f} on Radioisotope Channel {c}, "
        "the lowest of the three unknown artifacts, so it is the oldest.",
    )
