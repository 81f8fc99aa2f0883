"""Attacks through the world's random streams: a stream's spawned children once were the same in
every instance (a blank placeholder sequence), so Proteomics' cluster values repeated."""

from __future__ import annotations

from discoverylab.env import DiscoveryWorldEnv
from discoverylab.instances import make_instance


def _proteomics(split: str, index: int) -> tuple[str, dict[str, dict[str, float]]]:
    """(the answer species, every species' protein values) of a Proteomics Normal instance."""
    env = DiscoveryWorldEnv("Proteomics", "normal")
    env.reset(options={"instance": make_instance("Proteomics", "normal", split, index)})
    scenario = env.scenario
    return scenario.answer.name, scenario.values  # type: ignore[union-attr]


def test_attack_remembered_outlier_values_name_the_answer() -> None:
    """Remember the outlier's protein values from one public instance; in others, name the
    species showing those values. Must do no better than chance."""
    answer, values = _proteomics("train", 0)
    remembered = values[answer]
    hits = trials = 0
    for index in range(1, 9):
        answer, values = _proteomics("dev", index)
        named = [species for species, measured in values.items() if measured == remembered]
        hits += named == [answer]
        trials += 1
    assert hits <= trials // 2, f"remembered values named the answer in {hits} of {trials} instances"
