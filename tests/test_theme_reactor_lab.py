"""Reactor Lab rules: generated data, instrument readings, reactor mechanics, scoring, latching."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from discoverylab.env import DiscoveryWorldEnv
from discoverylab.scenarios.reactor_lab.scenario import DIMENSIONS, KEY_BY_SEED, ReactorLab
from discoverylab.scenarios.reactor_lab.things import PRESS_LIMIT, CrystalReactor, QuantumCrystal
from discoverylab.world.catalog import spawn
from discoverylab.world.world import World


def _env(difficulty: str, seed: int = 0) -> tuple[DiscoveryWorldEnv, ReactorLab]:
    env = DiscoveryWorldEnv("ReactorLab", difficulty)
    env.reset(seed=seed)
    assert isinstance(env.scenario, ReactorLab)
    return env, env.scenario


def _step(env: DiscoveryWorldEnv, action: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    _, _, _, _, info = env.step(action)
    return info["observation"], env.scorecard(reveal=True)


def _item(card: dict[str, Any], name: str) -> int:
    return int(next(i["score"] for i in card["scoreCard"] if i["name"] == name))


@pytest.mark.parametrize("difficulty", ["easy", "normal", "challenge"])
@pytest.mark.parametrize("seed", range(5))
def test_frequencies_follow_the_hidden_model_of_the_key_property(difficulty: str, seed: int) -> None:
    _, sc = _env(difficulty, seed)
    for crystal in sc.crystals:
        x = sc.key_values[crystal.uuid]
        if difficulty == "challenge":
            a, b, c = sc.coefficients
            assert crystal.resonance_freq == round(a * x * x + b * x + c, 2)
            assert 500 <= crystal.resonance_freq < 9999
        else:
            m, b = sc.coefficients
            assert crystal.resonance_freq == round(m * x + b, 2)
            assert (b == 0) == (difficulty == "easy")
    assert len(set(sc.key_values.values())) == len(sc.crystals)
    assert [c.name for c in sc.crystals] == [f"quantum crystal {i + 1}" for i in range(len(sc.crystals))]


def test_the_key_property_and_its_instrument_depend_on_the_seed_per_difficulty() -> None:
    for difficulty in ("easy", "normal", "challenge"):
        keys = set()
        for seed in range(25):
            sc = _env(difficulty, seed)[1]
            keys.add(sc.key)
            assert sc.critical.name == DIMENSIONS[sc.key].reading.split(" (")[0]
        assert keys == set(KEY_BY_SEED[difficulty])  # drawn per seed: 25 seeds see every property
    seed = next(s for s in range(25) if _env("easy", s)[1].key == "spectrum 1")
    _, easy = _env("easy", seed)
    assert [i.name for i in easy.instruments] == ["spectrometer"]  # Easy has only the critical one
    assert all(c.materials[0].spectrum[1:4] == (0.0, 0.0, 0.0) for c in easy.crystals)


def test_instruments_read_the_generated_properties() -> None:
    env, sc = _env("normal", 0)
    world, player = sc.world, sc.player
    crystal = sc.crystals[2]
    tools = {i.name: i for i in sc.instruments}
    for obj in (crystal, *tools.values()):
        player.add(obj)
    world.place(player, 2, 2)  # far from the other crystals
    mat = crystal.materials[0]
    texts = {name: _step(env, {"action": "USE", "arg1": t.uuid, "arg2": crystal.uuid})[0]["lastActionMessage"]
             for name, t in tools.items()}  # fmt: skip
    assert f"approximately {crystal.density:.3f} grams" in texts["densitometer"]
    assert f"temperature of {crystal.temperature_c:.2f} degrees" in texts["thermometer"]
    assert crystal.props["microscope_note"] in texts["microscope"]
    for i, value in enumerate(mat.spectrum):
        assert f"Channel {i + 1}: {value:.2f}" in texts["spectrometer"]
    level = float(re.findall(r"level of ([\d.]+)", texts["radiation meter"])[0])
    assert mat.radiation <= level <= mat.radiation + 0.5  # own value + noise + the grass around


def test_reactor_panel_snaps_truncates_and_clamps() -> None:
    world = World(0)
    reactor = CrystalReactor(world, 3)
    crystal = QuantumCrystal(world, "quantum crystal 3", "quantum crystal", resonance_freq=5153.52)
    assert reactor.name == "crystal reactor (no crystal present)" and not reactor.activated
    reactor.add(crystal)
    reactor.on_change()
    assert reactor.name == "crystal reactor (uncalibrated)" and reactor.props["resonanceFreq"] == 5000
    reactor.adjust({"resonanceFreq": 152})  # 5152: within 2 Hz, runs, integer parts differ
    assert reactor.activated and reactor.props["resonanceFreq"] == 5152
    reactor.adjust({"resonanceFreq": 1})  # 5153: snaps to the crystal's exact value
    assert reactor.activated and reactor.props["resonanceFreq"] == 5153.52
    reactor.adjust({"resonanceFreq": 3})  # 5156.52 -> truncated, out of tolerance
    assert not reactor.activated and reactor.props["resonanceFreq"] == 5156
    assert reactor.name == "crystal reactor (uncalibrated)"
    tree = reactor.dialog_tree
    assert tree is not None
    assert [o.text for o in tree.nodes["root"].options] == [
        "Increase frequency by 1000 Hz", "Increase frequency by 100 Hz", "Increase frequency by 10 Hz",
        "Increase frequency by 1 Hz", "Decrease frequency by 1000 Hz", "Decrease frequency by 100 Hz",
        "Decrease frequency by 10 Hz", "Decrease frequency by 1 Hz", "Exit",
    ]  # fmt: skip
    for _ in range(6):
        tree.choose(1)
    assert reactor.props["resonanceFreq"] == 10000
    reactor.contents.clear()
    reactor.on_change()
    assert reactor.name == "crystal reactor (no crystal present)" and reactor.props["resonanceFreq"] == 10000


def test_the_panel_is_a_dialog_opened_by_talk_or_use() -> None:
    env, sc = _env("easy", 0)
    reactor = sc.reactors[0]
    obs, _ = _step(env, {"action": "TELEPORT_TO_OBJECT", "arg1": reactor.uuid})
    obs, _ = _step(env, {"action": "USE", "arg1": reactor.uuid, "arg2": sc.crystals[0].uuid})
    box = obs["dialog_box"]
    assert box["is_in_dialog"] and box["dialogIn"].startswith("Hello, I am Crystal Reactor #1.")
    assert f"is: {sc.crystals[0].resonance_freq} Hertz" in box["dialogIn"]
    assert box["dialogOptions"]["9"] == "Exit"
    obs, _ = _step(env, {"chosen_dialog_option_int": 9})
    assert obs["lastActionMessage"].endswith("Exiting crystal reactor controls.")
    assert obs["dialog_box"] == {"is_in_dialog": False}
    assert f"crystal reactor (activated) uuid {reactor.uuid}" in obs["nearbyAgents"]["list_of_agents"]


def test_start_state_and_maxima() -> None:
    for difficulty, maximum, on in (("easy", 11, 2), ("normal", 25, 2), ("challenge", 29, 3)):
        env, sc = _env(difficulty, 1)
        card = sc.scorecard.to_dict()
        assert card["maxScore"] == maximum and _item(card, "Reactors On") == on and card["score"] == on
        # Easy asks the law only: its room shows the one instrument, which names the property
        assert len(card["criticalQuestions"]) == (1 if difficulty == "easy" else 2) and not card["completed"]
        assert all(q["goldFacts"] for q in card["knowledgeQuestions"])
        # The unknown crystals' frequencies appear nowhere in what the agent sees.
        seen = json.dumps(env._obs)
        for crystal in sc.crystals[len(sc.crystals) - len(sc.unknown_reactors) :]:
            assert str(crystal.resonance_freq) not in seen


def test_knowledge_questions_name_the_instrument_and_the_coefficients() -> None:
    _, sc = _env("normal", 0)
    m, b = sc.coefficients
    q1, q2 = sc.scorecard.critical_questions
    reading = DIMENSIONS[sc.key].reading
    assert f"{reading} reading" in q1 and f"({m} * {reading} reading) + {b}" in q2
    _, easy = _env("easy", 0)
    assert "and no offset" in easy.scorecard.critical_questions[-1]
    _, hard = _env("challenge", 0)
    a, b2, c = hard.coefficients
    inst = f"{DIMENSIONS[hard.key].reading} reading"
    assert f"{a} * ({inst})^2 + {b2} * ({inst}) + {c}" in hard.scorecard.critical_questions[1]


def _install(
    env: DiscoveryWorldEnv, sc: ReactorLab, crystal: QuantumCrystal, reactor: CrystalReactor
) -> None:
    sc.player.add(crystal)
    if "reactor lab" in sc.world.teleports:  # Normal/Challenge: the reactor room first, to see them
        _step(env, {"action": "TELEPORT_TO_LOCATION", "arg1": "reactor lab"})
    _step(env, {"action": "TELEPORT_TO_OBJECT", "arg1": reactor.uuid})
    _step(env, {"action": "PUT", "arg1": crystal.uuid, "arg2": reactor.uuid})


def test_a_wrong_setting_leaves_the_task_open_and_live_items_follow_the_reactors() -> None:
    env, sc = _env("normal", 0)
    crystal, reactor = sc.crystals[2], sc.unknown_reactors[0]
    _install(env, sc, crystal, reactor)
    assert reactor.name == "crystal reactor (uncalibrated)"
    reactor.adjust({"resonanceFreq": round(crystal.resonance_freq) - 5000 + 30})  # 30 Hz off
    _, card = _step(env, {"action": "WAIT"})
    assert not card["completed"] and _item(card, "Reactors Set") == 0 and _item(card, "Reactors Changed") == 1
    reactor.adjust({"resonanceFreq": -30})
    _, card = _step(env, {"action": "WAIT"})
    assert reactor.activated and _item(card, "Reactors Set") == 1 and _item(card, "Reactors On") == 3
    _step(env, {"action": "PICKUP", "arg1": crystal.uuid})  # taking it out again switches it off
    _, card = _step(env, {"action": "WAIT"})
    assert _item(card, "Reactors Set") == 0 and _item(card, "Reactors On") == 2 and not card["completed"]


def test_success_latches_when_every_reactor_runs() -> None:
    env, sc = _env("easy", 0)
    crystal, reactor = sc.crystals[2], sc.unknown_reactors[0]
    reactor.adjust({"resonanceFreq": round(crystal.resonance_freq) - 5000})
    _install(env, sc, crystal, reactor)
    _, _, terminated, _, info = env.step({"action": "WAIT"})
    assert terminated and info["scorecard"]["completedSuccessfully"]
    sc.player.add(crystal)  # undoing it afterwards does not take the success back
    assert env.world is not None
    env.world.tick()
    assert sc.scorecard.completed and sc.scorecard.success


def test_instrument_items_count_successful_uses_on_crystals_only() -> None:
    env, sc = _env("normal", 0)
    meter = next(i for i in sc.instruments if i.name == "thermometer")
    crystal = sc.crystals[3]
    for obj in (meter, crystal):
        sc.player.add(obj)
    flag = spawn(sc.world, "flag")
    sc.player.add(flag)
    _, card = _step(env, {"action": "USE", "arg1": meter.uuid, "arg2": flag.uuid})
    assert _item(card, "Instruments Used") == 0
    _, card = _step(env, {"action": "USE", "arg1": crystal.uuid, "arg2": meter.uuid})  # swapped: still counts
    assert _item(card, "Instruments Used") == 1 and _item(card, "Crystals Examined") == 1
    assert _item(card, "Quantum Crystals Taken") == 1
    critical = _item(card, "Crystals Examined by Critical Instrument")
    assert critical == (1 if sc.critical is meter else 0)


@pytest.mark.parametrize(("difficulty", "limit"), [("normal", PRESS_LIMIT), ("easy", 30)])
def test_a_reactor_burns_out_on_the_press_after_its_limit_and_the_task_fails(difficulty: str, limit: int) -> None:
    env, sc = _env(difficulty, 0)
    reactor = sc.unknown_reactors[0]
    assert f"Each reactor takes {limit} presses" in sc.description()
    if difficulty == "normal":
        _step(env, {"action": "TELEPORT_TO_LOCATION", "arg1": "reactor lab"})
    _step(env, {"action": "TELEPORT_TO_OBJECT", "arg1": reactor.uuid})
    obs, _ = _step(env, {"action": "TALK", "arg1": reactor.uuid})
    assert f"presses left before I burn out: {limit}." in obs["dialog_box"]["dialogIn"]
    options = obs["dialog_box"]["dialogOptions"]
    up = int(next(k for k, v in options.items() if v == "Increase frequency by 1000 Hz"))
    for n in range(limit):  # every press counts, clamped ones too (5000 + 1000 n > 10000)
        obs, card = _step(env, {"chosen_dialog_option_int": up})
        assert not card["completed"] and not reactor.burnt_out, n
    assert "presses left before I burn out: 0." in obs["dialog_box"]["dialogIn"]
    assert reactor.frequency == 10000
    _, _, terminated, _, info = env.step({"chosen_dialog_option_int": up})
    assert terminated and reactor.burnt_out and reactor.name == "crystal reactor (burnt out)"
    card = env.scorecard(reveal=True)
    assert card["completed"] and not card["completedSuccessfully"]


@pytest.mark.parametrize(("difficulty", "tolerance"), [("easy", 1), ("normal", 2), ("challenge", 2)])
def test_reactors_run_within_the_stated_tolerance(difficulty: str, tolerance: int) -> None:
    """Easy reactors run within 1 Hz (a blind +10 Hz sweep checks 2 Hz per press, not 4)."""
    env, sc = _env(difficulty, 0)
    assert f"tuned within {tolerance} Hz of its crystal" in sc.description()
    reactor = sc.unknown_reactors[0]
    crystal = next(c for c in sc.crystals if not any(r.crystal() is c for r in sc.reactors))
    reactor.add(crystal)
    f = crystal.resonance_freq
    for setting, runs in ((int(f), True), (int(f) - 1, tolerance == 2), (int(f) - 2, False)):
        reactor.props["resonanceFreq"] = setting
        reactor.on_change()
        assert reactor.activated is runs, (setting, f)


def _radiation(env: DiscoveryWorldEnv, meter: Any, target: Any) -> float:
    text = _step(env, {"action": "USE", "arg1": meter.uuid, "arg2": target.uuid})[0]["lastActionMessage"]
    return float(re.findall(r"level of ([\d.]+)", text)[0])


@pytest.mark.parametrize("difficulty", ["normal", "challenge"])
def test_the_shielded_lab_reads_a_lone_crystal_exactly(difficulty: str) -> None:
    """Issue 21: no random background in the two-room lab, so a crystal read alone gives its own
    radiation to 0.01 (the fit of b and c needs it); a carried crystal adds a quarter of its."""
    env, sc = _env(difficulty, 3)
    world, player = sc.world, sc.player
    meter = next(i for i in sc.instruments if i.name == "radiation meter")
    one, other = sc.crystals[-1], sc.crystals[-2]
    player.add(meter)
    world.place(player, 2, 2)  # far from every crystal (the bench crystals would count in the lab)
    blank = _radiation(env, meter, meter)  # the surroundings alone
    player.add(one)
    readings = {_radiation(env, meter, one) for _ in range(5)}
    assert readings == {round(blank + one.materials[0].radiation, 2)}
    player.add(other)
    with_other = _radiation(env, meter, one)
    assert with_other == pytest.approx(blank + one.materials[0].radiation + other.materials[0].radiation / 4, abs=0.011)


def test_easy_radiation_keeps_the_random_background() -> None:
    env, sc = _env("easy", next(s for s in range(30) if _env("easy", s)[1].key == "radiation"))
    meter, crystal = sc.instruments[0], sc.crystals[2]
    sc.player.add(meter)
    sc.player.add(crystal)
    assert len({_radiation(env, meter, crystal) for _ in range(8)}) > 1


@pytest.mark.parametrize("seed", [0, 10, 81])
def test_the_easy_oracle_reports_no_offset(seed: int) -> None:
    """The last reactor can run (and end the task) before its crystal's exact frequency shows; that
    setting is not a fit point (seed 81 fitted 2263.0 for 2262.06 and reported "offset 1.2")."""
    from discoverylab.bench.episode import run_episode

    record, _ = run_episode("ReactorLab", "easy", seed, "oracle", keep_log=False)
    assert record.success and record.knowledge_report is not None
    assert "no offset" in record.knowledge_report["text"] and len(record.knowledge_report["facts"]["coefficients"]) == 1


def test_a_settled_reactor_skipping_its_tick_changes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """A reactor's tick runs `on_change` only when something it reads or writes changed, and a
    generator core renames itself only when the count of running reactors changed (session 11):
    the oracle's episodes (crystals installed, reactors tuned, the generator's share going up)
    give the same observations and scorecards as with `on_change` on every tick."""
    from discoverylab.bench.episode import run_episode
    from discoverylab.scenarios.reactor_lab.things import CrystalReactor, GeneratorPart

    def logs() -> list[object]:
        out: list[object] = []
        for difficulty in ("easy", "normal", "challenge"):
            _, log = run_episode("ReactorLab", difficulty, 1, "oracle")
            out += [*log[:-1], log[-1]["scorecard"]]
        return out

    def plain_generator_tick(self: GeneratorPart) -> None:  # the generator part's tick before session 11
        if self.core:
            running = sum(1 for r in self.reactors if r.activated)
            name = f"generator core ({round(100 * running / len(self.reactors))}% activated)"
            if name != self.name:
                self.name = name
                self.text_changed()

    skipping = logs()
    monkeypatch.setattr(CrystalReactor, "tick", lambda self: self.on_change())
    monkeypatch.setattr(GeneratorPart, "tick", plain_generator_tick)
    assert logs() == skipping
    assert len(skipping) > 100
