"""Issue #26's polish: the rocket has a rocket's sprite, video captions keep the message's lines
apart, the replay names the objects of an action and shows an agent's knowledge report."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from ui_kit import oracle_log

from discoverylab.env import DiscoveryWorldEnv
from discoverylab.render.sprites import sprite, sprite_key
from discoverylab.ui.replay import Replay, load_log
from discoverylab.ui.video import caption_lines


def test_the_rocket_is_not_drawn_with_the_computer_terminal_sprite() -> None:
    env = DiscoveryWorldEnv("RocketScience", "easy")
    env.reset(seed=0)
    assert env.scenario is not None
    objects = {o.name: o for o in env.scenario.world.objects.values()}
    keys = {name: sprite_key(objects[name]) for name in ("rocket", "rocket top", "test rocket", "computer")}
    assert keys["rocket"].startswith("rocket") and keys["rocket top"] == "rocket:top" and keys["test rocket"].startswith("rocket")
    pictures = {name: np.asarray(sprite(key)) for name, key in keys.items()}
    assert not np.array_equal(pictures["rocket"], pictures["computer"])
    assert not np.array_equal(pictures["rocket"], np.asarray(sprite("machine:grey")))


def test_caption_lines_keep_the_message_lines_apart() -> None:
    """'We are talking.  You said: Hello!' and 'Sally said: ...' ran together as one line."""
    lines = caption_lines("We are talking.  You said: Hello!\n\nSally said: pick the apple.")
    assert lines == ["We are talking. You said: Hello!", "Sally said: pick the apple."]
    long = caption_lines("x " * 200 + "\nsecond")
    assert len(long) == 2 and long[1].endswith(" ...")


def test_replay_names_objects_and_shows_an_oracle_report(tmp_path: Path) -> None:
    """Actions appeared as raw ids ('USE 3525 17068') and oracle logs said 'no report'."""
    replay = Replay.build(load_log(oracle_log(tmp_path, "Proteomics", difficulty="easy")))
    labels = [entry["label"] for entry in replay.timeline]
    uses = [label for label in labels if label.startswith("USE")]
    assert uses and all("meter [" in label for label in uses), uses
    knowledge = replay.summary()["knowledge"]
    assert knowledge and "outlier" in knowledge["report"]


def test_ground_filter_never_hides_something_a_task_asks_for() -> None:
    """The page folds ground-like names ("grass", "floor") out of the nearby list unless "show
    all" is ticked; "dirt" was among them, so a Pick and Place level whose target was the dirt
    showed no target. The page's filter and the server's are one list, and no unit test's goal
    object or Pick and Place target is in it."""
    import re
    from pathlib import Path

    from discoverylab.env import DiscoveryWorldEnv
    from discoverylab.scenarios.unit._levels import GOALS
    from discoverylab.ui import games

    script = (Path(games.__file__).parent / "static" / "app.js").read_text()
    page = re.search(r"^const GROUND = /(.+)/;$", script, re.M)
    assert page is not None and page[1] == games.GROUND.pattern
    assert games.GROUND.match("dirt") is None and games.GROUND.match("grass")
    targets = set()
    env = DiscoveryWorldEnv("PickAndPlaceTest")
    for seed in range(60):
        env.reset(seed=seed)
        targets.add(env.scenario.target.name)  # type: ignore[union-attr]
    assert "dirt" in targets or len(targets) >= 5
    hidden = [name for name in (*targets, *(goal[1] for goal in GOALS)) if games.GROUND.match(name)]
    assert not hidden, f"the nearby list would hide task targets: {hidden}"
