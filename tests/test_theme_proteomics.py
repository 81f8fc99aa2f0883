"""Proteomics rules: the generated data, the proteomics meter, measuring by species, the flag
placement end condition (anti-gold: a wrong statue completes the task unsuccessfully)."""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np
import pytest

from discoverylab.scenarios.proteomics.oracle import outlier_species
from discoverylab.scenarios.proteomics.things import SPECIES, clustering_data
from discoverylab.world.objects import WorldObject
from env_driver import EnvDriver


class Driver(EnvDriver):
    def __init__(self, difficulty: str, seed: int = 0) -> None:
        super().__init__("Proteomics", difficulty, seed)

    def stand(self, x: int, y: int, facing: str = "south") -> None:
        """Put the player on a tile (the test knows the map)."""
        self.env.world.place(self.player, x, y)  # type: ignore[union-attr]
        self.player.facing = facing

    def beside(self, obj: WorldObject) -> None:
        self.player.seen.add(obj.uuid)
        assert self.do("TELEPORT_TO_OBJECT", obj).startswith("I teleported")

    def take_meter_and_flag(self) -> None:
        for obj in (self.scenario.meter, self.scenario.flag):
            self.beside(obj)
            assert self.do("PICKUP", obj) == f"I picked up the {obj.name}."

    @property
    def card(self) -> dict[str, Any]:
        return dict(self.scenario.scorecard.to_dict())

    def scores(self) -> list[int]:
        return [item["score"] for item in self.card["scoreCard"]]


# ---- data ---------------------------------------------------------------------------------
@pytest.mark.parametrize("dims", [2, 3])
@pytest.mark.parametrize("seed", range(30))
def test_clustering_data_geometry(dims: int, seed: int) -> None:
    data = clustering_data(np.random.default_rng(seed), dims)
    assert len(data.inliers) == 5 and len(data.outliers) == 1
    assert all(0.2 <= c <= 0.8 for c in data.center)
    for point in [*data.inliers, *data.outliers]:
        assert len(point) == dims and all(0.0 <= v <= 1.0 for v in point)
    assert all(math.dist(p, data.center) == pytest.approx(0.1) for p in data.inliers)
    assert math.dist(data.outliers[0], data.center) == pytest.approx(0.5)


@pytest.mark.parametrize("difficulty", ["easy", "normal", "challenge"])
@pytest.mark.parametrize("seed", range(5))
def test_answer_species_and_values(difficulty: str, seed: int) -> None:
    scenario: Any = Driver(difficulty, seed).scenario
    expected = scenario.answer
    assert expected in SPECIES and expected in scenario.species
    assert len(scenario.animals) == (3 if difficulty == "easy" else 10)
    dims = 3 if difficulty == "challenge" else 2
    readings = {a.name: tuple(a.props["proteomics"].values()) for a in scenario.animals}
    assert all(len(v) == dims for v in readings.values())
    assert outlier_species(readings) == expected.name
    for animal in scenario.animals:  # both individuals of a species share their values
        assert readings[animal.name] == tuple(animal.props["proteomics"].values())


# ---- the meter -----------------------------------------------------------------------------
@pytest.mark.parametrize("difficulty", ["easy", "challenge"])
def test_meter_reads_the_generated_values(difficulty: str) -> None:
    d = Driver(difficulty, seed=2)
    d.take_meter_and_flag()
    meter = d.scenario.meter
    for animal in d.scenario.animals[:3]:
        d.stand(animal.x - 1, animal.y, "east")
        message = d.do("USE", meter, animal)
        assert message.startswith(f"You use the proteomics meter to investigate the {animal.name}.\n")
        shown = dict(re.findall(r"- (Protein [A-C]): (\d\.\d\d)", message))
        assert shown == {k: f"{v:.2f}" for k, v in animal.props["proteomics"].items()}
    statue = next(iter(d.scenario.statues.values()))
    d.beside(statue)
    assert d.do("USE", meter, statue).endswith("The results are inconclusive.\n")


def test_meter_counts_species_not_individuals_and_only_animals() -> None:
    d = Driver("normal", seed=1)
    d.take_meter_and_flag()
    spheroids = [a for a in d.scenario.animals if a.name == "spheroid"]
    assert len(spheroids) == 2
    for animal in spheroids:
        d.stand(animal.x, animal.y)  # agents share tiles: the animal is on the player's own tile
        assert "Protein A" in d.do("USE", d.scenario.meter, animal)
    d.beside(d.scenario.statues["spheroid"])
    d.do("USE", d.scenario.meter, d.scenario.statues["spheroid"])
    assert d.scores() == [1, 1, 1, 0]


def test_animals_have_no_dialog_and_cannot_be_taken() -> None:
    d = Driver("easy")
    animal = d.scenario.animals[0]
    d.stand(animal.x + 1, animal.y, "west")
    assert d.do("TALK", animal) == f"That agent ({animal.name}) has no dialog tree set."
    assert d.do("PICKUP", animal) == f"That object ({animal.name}) is not movable."


def test_normal_animals_wander_and_easy_animals_stay() -> None:
    for difficulty, moves in (("easy", False), ("normal", True)):
        d = Driver(difficulty, seed=4)
        start = [(a.x, a.y) for a in d.scenario.animals]
        for _ in range(40):
            d.do("WAIT")
        now = [(a.x, a.y) for a in d.scenario.animals]
        assert (now != start) is moves
        for (x0, y0), (x, y) in zip(start, now, strict=True):
            assert math.hypot(x - x0, y - y0) <= 6  # they drift around their area


# ---- the flag ------------------------------------------------------------------------------
def _wrong_species(d: Driver) -> str:
    return next(name for name in d.scenario.statues if name != d.scenario.answer.name)


@pytest.mark.parametrize("difficulty", ["normal", "challenge"])
def test_flag_beside_wrong_statue_fails(difficulty: str) -> None:
    d = Driver(difficulty, seed=3)
    d.take_meter_and_flag()
    statue = d.scenario.statues[_wrong_species(d)]
    d.stand(statue.x + 2, statue.y)
    assert d.do("DROP", d.scenario.flag) == "I dropped the flag."
    card = d.card
    assert card["completed"] and not card["completedSuccessfully"] and d.terminated
    assert card["scoreCard"][3]["score"] == 0 and card["scoreCard"][3]["completed"]


def test_flag_counts_only_once_dropped_within_two_tiles_of_the_right_statue() -> None:
    d = Driver("normal", seed=0)
    d.take_meter_and_flag()
    statue = d.scenario.statues[d.scenario.answer.name]
    d.stand(statue.x + 1, statue.y + 1)  # Euclidean distance 1.41
    d.do("WAIT")
    assert not d.card["completed"]  # carried, not placed
    assert d.do("DROP", d.scenario.flag) == "I dropped the flag."
    card = d.card
    assert card["completed"] and card["completedSuccessfully"] and d.terminated
    assert card["scoreCard"][3]["associatedUUIDs"] == [d.scenario.flag.uuid, statue.uuid]


def test_flag_far_from_statues_does_not_end_the_task() -> None:
    d = Driver("normal", seed=0)
    d.take_meter_and_flag()
    d.stand(25, 25)
    d.do("DROP", d.scenario.flag)
    assert not d.card["completed"] and not d.terminated
    assert d.do("PICKUP", d.scenario.flag) == "I picked up the flag."


def test_easy_needs_the_tile_exactly_west_of_the_statue() -> None:
    d = Driver("easy", seed=1)
    d.take_meter_and_flag()
    wrong = d.scenario.statues[_wrong_species(d)]
    d.stand(15, 16)  # below the statues' column: beside nothing
    assert d.do("DROP", d.scenario.flag) == "I dropped the flag."
    assert not d.card["completed"]
    assert d.do("PICKUP", d.scenario.flag) == "I picked up the flag."
    d.stand(wrong.x - 1, wrong.y)
    d.do("DROP", d.scenario.flag)
    assert d.card["completed"] and not d.card["completedSuccessfully"]


def test_easy_statue_teleports_name_the_real_species_and_land_west_of_them() -> None:
    d = Driver("easy", seed=0)
    for name, statue in d.scenario.statues.items():
        location = next(t for t in d.obs["teleportLocations"] if t.endswith(name))
        assert location == statue.name[0].upper() + statue.name[1:]
        msg = d.do("TELEPORT_TO_LOCATION", location)
        assert msg.startswith(f"I teleported to {location} at {statue.x - 1}, {statue.y}")


def test_remembered_statue_beside_the_flag_changes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """The scorer keeps the statue beside each flag tile (statues never move; session 11): the
    oracle's episodes (the flag carried and planted) and random flag drops score as when every
    tick asks afresh."""
    from discoverylab.bench.episode import run_episode
    from discoverylab.scenarios.proteomics.scenario import Proteomics

    def logs() -> list[object]:
        out: list[object] = []
        for difficulty in ("easy", "normal", "challenge"):
            _, log = run_episode("Proteomics", difficulty, 3, "oracle")
            out += [*log[:-1], log[-1]["scorecard"]]
        driver = EnvDriver("Proteomics", "normal", seed=4)
        scenario = driver.scenario
        rng = np.random.default_rng(4)
        for _ in range(300):  # the flag dropped all over the map, statues asked each time
            x, y = (int(v) for v in rng.integers(0, 32, 2))
            driver.world.place(scenario.flag, x, y)
            statue = scenario._statue_beside_flag()
            out.append(None if statue is None else statue.uuid)
        return out

    remembering = logs()
    monkeypatch.setattr(Proteomics, "_statue_beside_flag", lambda self: plain(self))
    original = Proteomics._statue_near

    def plain(self: Proteomics) -> object:
        flag = self.flag
        if flag.parent is not None or flag.layer is None:
            return None
        return original(self, flag.x, flag.y)

    assert logs() == remembering
    assert any(u is not None for u in remembering[-300:])


def test_the_meter_item_set_only_when_the_animals_measured_change(monkeypatch: pytest.MonkeyPatch) -> None:
    """The scorer updates "use the meter" only when a new action measured a new animal (session
    12): the oracle's episodes, and random masked RL episodes, score as when every tick sets it."""
    from discoverylab.bench.episode import run_episode
    from discoverylab.rl import make_rl_env
    from discoverylab.scenarios.proteomics.scenario import Proteomics

    def logs() -> list[object]:
        out: list[object] = []
        for difficulty in ("easy", "normal", "challenge"):
            _, log = run_episode("Proteomics", difficulty, 2, "oracle")
            out += [*log[:-1], log[-1]["scorecard"]]
        env = make_rl_env("Proteomics", "normal", max_steps=400)
        _, info = env.reset(seed=5)
        rng = np.random.default_rng(5)
        for _ in range(400):
            action = int(rng.choice(np.flatnonzero(info["action_mask"])))
            _, reward, term, trunc, info = env.step(action)
            out.append((action, reward))
            if term or trunc:
                break
        out.append(env.unwrapped.scenario.scorecard.to_dict())
        return out

    skipping = logs()
    plain_update = Proteomics.update

    def every_tick(self: Proteomics) -> None:
        plain_update(self)
        self.use_meter.set(len(self.measured))  # what every tick did before
        self.use_meter.associated_uuids = sorted(self.measured.values())

    monkeypatch.setattr(Proteomics, "update", every_tick)
    assert logs() == skipping
    assert any(isinstance(e, dict) and "'Use" in str(e) for e in skipping)
