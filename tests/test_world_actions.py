"""Every action's success message and its failure messages in the order they are checked
(spec §4.2, with our departures from /work/shared/spec/decisions.md)."""

from __future__ import annotations

import pytest

from discoverylab.world.actions import ActionExecutor
from discoverylab.world.catalog import place, spawn
from discoverylab.world.npc import NPC
from discoverylab.world.objects import Layer
from world_kit import Player, meadow


@pytest.fixture
def p() -> Player:
    """The player at (5, 5) facing south, on a 12x12 meadow."""
    return Player(meadow(), 5, 5, facing="south")


# ---- PICKUP / DROP ----------------------------------------------------------------------
def test_pickup(p: Player) -> None:
    flag = place(p.world, "flag", 5, 6)
    table = place(p.world, "table", 5, 6)
    assert p.do("PICKUP", table).message == "That object (table) is not movable."
    assert p.do("PICKUP", flag).message == "I picked up the flag."
    assert flag.parent is p.agent and flag.location() == (5, 5)
    assert p.do("PICKUP", flag).message == "The flag is already in my inventory."
    assert [(r.action, r.success) for r in p.history] == [
        ("PICKUP", False),
        ("PICKUP", True),
        ("PICKUP", False),
    ]


def test_pickup_from_an_open_container_and_from_a_carried_jar(p: Player) -> None:
    table = place(p.world, "table", 5, 6)
    jar = spawn(p.world, "jar")
    coin = spawn(p.world, "coin")
    table.add(jar)
    jar.add(coin)
    assert p.do("PICKUP", jar).success
    assert coin.uuid in p.inventory_uuids()  # open containers carried show their contents
    assert p.do("PICKUP", coin).message == "I picked up the coin."  # moves it to the top level
    assert coin.parent is p.agent and jar.contents == []


def test_pickup_takes_from_another_agents_open_inventory(p: Player) -> None:
    friend = Player(p.world, 5, 6, name="friend")
    key = spawn(p.world, "key")
    friend.agent.add(key)
    assert key.uuid in p.accessible_uuids()
    assert p.do("PICKUP", friend.agent).message == "That object (friend) is not movable."
    assert p.do("PICKUP", key).message == "I picked up the key."
    assert key.parent is p.agent and friend.agent.contents == []


def test_drop(p: Player) -> None:
    flag = place(p.world, "flag", 5, 6)
    assert p.do("DROP", flag).message == "That object (flag) is not in my inventory."
    jar = spawn(p.world, "jar")
    p.agent.add(jar)
    jar.add(flag)
    assert p.do("DROP", flag).message == "I dropped the flag."  # from inside a carried jar
    assert flag in p.world.layer_at(5, 5, Layer.OBJECTS) and flag.parent is None


# ---- PUT ------------------------------------------------------------------------------
def test_put_messages_in_order(p: Player) -> None:
    world = p.world
    coin = place(world, "coin", 5, 6)
    jar = spawn(world, "jar")
    flag = spawn(world, "flag")
    for obj in (jar, flag):
        p.agent.add(obj)
    assert p.do("PUT", coin, jar).message == "That object (coin) is not in my inventory."
    assert p.do("PUT", jar, flag).message == "That object (flag) is not a container."
    cabinet = place(world, "bedside_table", 5, 6)
    assert p.do("PUT", flag, cabinet).message == "That container (bedside table) is not open."
    assert p.do("PUT", jar, jar).message == "I can't put the jar into itself."
    cup = spawn(world, "jar", name="cup")
    jar.add(cup)
    assert p.do("PUT", jar, cup).message == "I can't put the jar into something inside itself."
    assert p.do("PUT", flag, jar).message == "I put the flag into the jar."
    assert flag.parent is jar
    # The original checks "open" before "itself": a closed container put into itself.
    lidded = spawn(world, "jar", name="lidded jar", is_open=False)
    p.agent.add(lidded)
    assert p.do("PUT", lidded, lidded).message == "That container (lidded jar) is not open."


def test_put_into_an_npc_is_giving_even_with_a_closed_inventory(p: Player) -> None:
    npc = NPC(p.world, "sally", 5, 6)
    flag = spawn(p.world, "flag")
    p.agent.add(flag)
    assert not npc.is_open
    assert p.do("PUT", flag, npc).message == "I gave the flag to sally."
    assert flag.parent is npc
    assert flag.uuid not in p.accessible_uuids()  # the NPC's inventory is closed


# ---- OPEN / CLOSE ---------------------------------------------------------------------------
def test_open_close_containers(p: Player) -> None:
    flag = place(p.world, "flag", 5, 6)
    cabinet = place(p.world, "bedside_table", 5, 6)
    assert p.do("OPEN", flag).message == "That object (flag) is not openable."
    assert p.do("CLOSE", flag).message == "That object (flag) is not closeable."
    assert p.do("CLOSE", cabinet).message == "That object (bedside table) is already closed."
    assert p.do("OPEN", cabinet).message == "I opened the bedside table."
    assert p.do("OPEN", cabinet).message == "That object (bedside table) is already open."
    assert p.do("CLOSE", cabinet).message == "I closed the bedside table."


def test_doors_keys_and_doorways(p: Player) -> None:
    world = p.world
    door = place(world, "door", 5, 6, requires_key=7)
    assert door.describe_state() == "closed locked door"
    assert not world.is_passable(5, 6)
    assert p.do("OPEN", door).message == "That object (door) requires a key to open."
    wrong = spawn(world, "key", key_id=3)
    p.agent.add(wrong)
    assert p.do("OPEN", door).message == "That object (door) requires a key to open."
    rusty = spawn(world, "key", key_id=7, props={"rusted": True})
    p.agent.add(rusty)
    assert rusty.describe_state() == "rusted key"
    assert p.do("OPEN", door).message == "The key is rusted and doesn't work."
    good = spawn(world, "key", key_id=7)
    pouch = spawn(world, "jar", name="pouch")
    p.agent.add(pouch)
    pouch.add(good)  # a key inside an open carried container counts
    assert p.do("OPEN", door).message == "I opened the door."
    assert world.is_passable(5, 6) and door.describe_state() == "open door"
    assert p.do("MOVE_DIRECTION", "south").message == "I moved to (5, 6)."
    assert p.do("CLOSE", door).message == "I can't close the door while I'm standing in it."
    assert p.do("MOVE_DIRECTION", "south").success
    p.do("ROTATE_DIRECTION", "north")
    assert p.do("CLOSE", door).message == "I closed the door."
    assert not world.is_passable(5, 6)
    assert p.do("CLOSE", door).message == "That object (door) is already closed."
    assert (
        p.do("MOVE_DIRECTION", "north").message == "I can't move there. There is something in the way (door)."
    )


# ---- ACTIVATE / DEACTIVATE -------------------------------------------------------------------
def test_activate_deactivate(p: Player) -> None:
    flag = place(p.world, "flag", 5, 6)
    stove = place(p.world, "stove", 5, 6)
    assert p.do("ACTIVATE", flag).message == "That object (flag) is not activatable."
    assert p.do("DEACTIVATE", flag).message == "That object (flag) is not deactivatable."
    # Ours says "already deactivated" (the original's misspelt mode always succeeded).
    assert p.do("DEACTIVATE", stove).message == "That object (stove) is already deactivated."
    assert p.do("ACTIVATE", stove).message == "I activated the stove."
    assert stove.describe_state() == "closed activated stove"
    assert p.do("ACTIVATE", stove).message == "That object (stove) is already activated."
    assert p.do("DEACTIVATE", stove).message == "I deactivated the stove."
    sink = place(p.world, "sink", 5, 6)
    assert sink.describe_state() == "inactive sink"
    assert p.do("ACTIVATE", sink).message == "I activated the sink."
    assert sink.describe_state() == "activated sink"
    fridge = place(p.world, "fridge", 5, 6)
    assert fridge.describe_state() == "closed fridge"  # the fridge shows no switch state (as the original)


# ---- EAT / READ ----------------------------------------------------------------------------
def test_eat(p: Player) -> None:
    flag = place(p.world, "flag", 5, 6)
    mushroom = place(p.world, "mushroom", 5, 6)
    assert p.do("EAT", flag).message == "That object (flag) is not edible."
    result = p.do("EAT", mushroom)
    assert result.success and result.message == "I ate the mushroom."
    assert mushroom.uuid not in p.world.objects and not mushroom.alive
    assert p.agent.poison_counter == 0  # a safe mushroom
    assert p.history[-1].action == "EAT" and p.history[-1].success


def test_read(p: Player) -> None:
    flag = place(p.world, "flag", 5, 6)
    blank = place(p.world, "sign", 5, 6)
    assert p.do("READ", flag).message == "That object (flag) is not readable."
    result = p.do("READ", blank)
    assert (result.success, result.message, result.important) == (
        False,
        "The sign appears blank. There is nothing to read.",
        True,
    )
    blank.document = "Welcome to the lab."
    result = p.do("READ", blank)
    assert (result.success, result.message, result.important) == (
        True,
        "The sign reads:\nWelcome to the lab.",
        True,
    )


# ---- USE --------------------------------------------------------------------------------------
def test_use_failures(p: Player) -> None:
    flag = place(p.world, "flag", 5, 6)
    tape = place(p.world, "measuring_tape", 5, 6)
    coin = place(p.world, "coin", 5, 6)
    assert p.do("USE", flag, coin).message == "That object (flag) is not usable."
    assert p.do("USE", tape, flag).message == "I'm not sure how to use the measuring tape with the flag."
    assert len(p.history) == 2


def test_use_with_swapped_arguments_records_only_the_attempt_that_ran(p: Player) -> None:
    flag = place(p.world, "flag", 5, 6)
    thermometer = place(p.world, "thermometer", 5, 6)
    result = p.do("USE", flag, thermometer)
    assert result.success and result.important
    assert result.message == (
        "You use the thermometer to measure the temperature of the flag.\n"
        "The thermometer reports a temperature of 20.00 degrees Celsius.\n"
        f"\n Note, the original action failed (USE, arg1:{flag.uuid}, arg2:{thermometer.uuid}), but the arguments "
        f"were switched and the action succeeded (USE, arg1:{thermometer.uuid}, arg2:{flag.uuid}). "
        "Try to enter the arguments in the correct order next time."
    )
    (record,) = p.history
    assert (record.action, record.arg1_uuid, record.arg2_uuid, record.success) == (
        "USE",
        thermometer.uuid,
        flag.uuid,
        True,
    )


def test_use_shovel_on_non_soil(p: Player) -> None:
    shovel = place(p.world, "shovel", 5, 6)
    flag = place(p.world, "flag", 5, 6)
    assert p.do("USE", shovel, flag).message == "You can't use the shovel on that."


# ---- TALK -------------------------------------------------------------------------------------
def test_talk_failures_in_order(p: Player) -> None:
    world = p.world
    flag = place(world, "flag", 5, 6)
    assert p.do("TALK", flag).message == "You can't talk to that (flag)."
    npc = NPC(world, "sally", 5, 6)
    assert p.do("TALK", npc).message == "That agent (sally) has no dialog tree set."
    npc.dialog_tree.add_node("root", "Hi.")  # type: ignore[union-attr]
    npc.dialog_tree.add_option("root", "Bye", "end")  # type: ignore[union-attr]
    npc.dialog_tree.add_node("end", "Bye.")  # type: ignore[union-attr]
    npc.enqueue("goto", priority=5, x=1, y=1)
    assert p.do("TALK", npc).message == "That agent (sally) is busy, try again later."
    npc.clear_queue()
    other = Player(world, 4, 6, facing="east", name="bob")
    assert other.do("TALK", npc).success
    assert p.do("TALK", npc).message == "That agent (sally) is busy talking to (bob)."
    other.say(1)
    result = p.do("TALK", npc)
    assert result.success and result.message == "We are talking.  You said: Hello!\n\nsally said: Hi."
    assert p.agent.dialog_partner is npc and npc.dialog_partner is p.agent


# ---- movement ---------------------------------------------------------------------------------
def test_move_direction_edge_blocked_and_success() -> None:
    p = Player(meadow(), 0, 0, facing="south")
    place(p.world, "wall", 1, 0)
    assert p.do("MOVE_DIRECTION", "north").message == "That would take me beyond the edge of the world."
    assert p.agent.facing == "south"
    assert (
        p.do("MOVE_DIRECTION", "east").message == "I can't move there. There is something in the way (wall)."
    )
    assert p.agent.facing == "south"  # facing changes only on success
    assert p.agent.location() == (0, 0)
    assert p.do("MOVE_DIRECTION", "south").message == "I moved to (0, 1)."
    result = p.do("MOVE_DIRECTION", "east")
    assert result.message == "I moved to (1, 1)." and p.agent.facing == "east"
    assert [r.action for r in p.history] == ["MOVE_DIRECTION"] * 4


def test_rotate_forward_backward_cw_ccw(p: Player) -> None:
    assert p.do("ROTATE_DIRECTION", "west").message == "I rotated to face west."
    assert p.agent.facing == "west" and p.agent.location() == (5, 5)
    assert p.do("ROTATE_CW").message == "I rotated to face north."
    assert p.do("ROTATE_CCW").message == "I rotated to face west."
    assert p.do("ROTATE_CCW").message == "I rotated to face south."
    assert p.do("MOVE_FORWARD").message == "I moved to (5, 6)."
    assert p.do("MOVE_BACKWARD").message == "I moved to (5, 5)."
    assert p.agent.facing == "south"  # backward keeps the facing
    place(p.world, "wall", 5, 4)
    assert p.do("MOVE_BACKWARD").message == "I can't move there. There is something in the way (wall)."
    assert p.agent.facing == "south"


def test_wait(p: Player) -> None:
    result = p.do("WAIT")
    assert result.success and result.message == "I waited."
    assert p.history[-1].action == "WAIT"


# ---- teleports -------------------------------------------------------------------------------
def test_teleport_to_location_lands_on_the_nearest_passable_tile(p: Player) -> None:
    world = p.world
    world.teleports.update({"lab": (8, 8), "garden": (2, 2)})
    assert p.do("TELEPORT_TO_LOCATION", "moon").message == (
        "That's not a known teleport location ('moon'). I know about the following locations: ['garden', 'lab']"
    )
    assert p.do("TELEPORT_TO_LOCATION", "garden").message == "I teleported to garden at 2, 2."
    assert p.agent.facing == "south"  # unchanged
    place(world, "table", 8, 8)
    assert (
        p.do("TELEPORT_TO_LOCATION", "lab").message == "I teleported to lab at 7, 8."
    )  # ties: smallest (x, y)
    # Nearest by straight-line distance, even when a closer Chebyshev ring is blocked.
    for x in range(14, 27):
        for y in range(14, 27):
            if abs(x - 20) <= 3 and abs(y - 20) <= 3 and (x, y) != (23, 23):
                place(world, "wall", x, y)
            elif max(abs(x - 20), abs(y - 20)) == 4 and (x, y) != (24, 20):
                place(world, "wall", x, y)
    world.teleports["vault"] = (20, 20)
    assert p.do("TELEPORT_TO_LOCATION", "vault").message == "I teleported to vault at 24, 20."


def test_teleport_to_object_needs_a_seen_uuid_and_faces_the_object(p: Player) -> None:
    world = p.world
    flag = place(world, "flag", 10, 10)
    result = p.do("TELEPORT_TO_OBJECT", flag)
    assert not result.success and f"you have not observed an object with UUID {flag.uuid}" in result.message
    p.agent.seen.add(flag.uuid)
    # The tiles N, E, S, W of the object (the original's order): the first passable one wins
    # and the agent faces the object.
    assert (
        p.do("TELEPORT_TO_OBJECT", flag).message
        == f"I teleported to the object with UUID {flag.uuid} (flag) at (10, 9)."
    )
    assert p.agent.facing == "south" and flag.uuid in p.accessible_uuids()
    place(world, "wall", 10, 9)
    assert p.do("TELEPORT_TO_OBJECT", flag).message.endswith("at (11, 10).") and p.agent.facing == "west"
    place(world, "wall", 11, 10)
    assert p.do("TELEPORT_TO_OBJECT", flag).message.endswith("at (10, 11).") and p.agent.facing == "north"
    place(world, "wall", 10, 11)
    assert p.do("TELEPORT_TO_OBJECT", flag).message.endswith("at (9, 10).") and p.agent.facing == "east"
    place(world, "wall", 9, 10)
    assert p.do("TELEPORT_TO_OBJECT", flag).message == (
        f"I couldn't find a valid location beside the object (flag, uuid: {flag.uuid}) to teleport to."
    )


def test_teleport_to_a_contained_object_goes_to_its_holder(p: Player) -> None:
    table = place(p.world, "table", 3, 3)
    coin = spawn(p.world, "coin")
    table.add(coin)
    p.agent.seen.add(coin.uuid)
    assert p.do("TELEPORT_TO_OBJECT", coin).message.endswith("at (3, 2).")
    assert coin.uuid in p.accessible_uuids()


def test_teleport_to_an_object_that_is_gone(p: Player) -> None:
    mushroom = place(p.world, "mushroom", 5, 6)
    p.observe()
    assert p.do("EAT", mushroom).success
    result = p.do("TELEPORT_TO_OBJECT", mushroom)
    assert not result.success
    assert (
        result.message == f"arg1: the object with UUID {mushroom.uuid} no longer exists (eaten or used up)."
    )


def test_teleports_can_be_disabled() -> None:
    world = meadow()
    p = Player(world)
    p.executor = ActionExecutor(p.agent, teleport=False)
    world.teleports["lab"] = (1, 1)
    result = p.do("TELEPORT_TO_LOCATION", "lab")
    assert not result.success and "disabled" in result.message
    assert p.history == []  # rejected input is not an action


# ---- DiscoveryFeed -------------------------------------------------------------------------
def test_feed_updates_show_the_last_seven(p: Player) -> None:
    feed = p.world.feed
    for i in range(9):
        feed.add_update(i, f"author{i}", f"post number {i}")
    result = p.do("DISCOVERY_FEED_GET_UPDATES")
    assert result.success and result.important
    text = result.message
    assert text.startswith(
        "DiscoveryFeed (Update Posts)\nDiscoveryFeed contains 10 update posts.\nShowing the most recent 7 posts.\n\n"
    )
    assert "Post 4\nPosted by author2 on Step 2:\npost number 2\n---\n" in text
    assert "post number 1" not in text and "Welcome" not in text
    assert text.endswith(
        "Post 10\nPosted by author8 on Step 8:\npost number 8\n(ABOVE WAS MOST RECENT POST)\n"
    )


def test_feed_post_by_id_and_articles(p: Player) -> None:
    feed = p.world.feed
    article = feed.add_article(3, "Dr. Ana", "On mushrooms", "Red ones are safe.")
    assert article.post_id == 2
    head = "DiscoveryFeed (Search)\nSearch results for DiscoveryFeed document ID "
    assert p.do("DISCOVERY_FEED_GET_POST_BY_ID", 1).message == (
        head + "1:\n\nPost 1\nPosted by Colony Founder on Step 0:\nWelcome to Discovery World!\n"
    )
    assert p.do("DISCOVERY_FEED_GET_POST_BY_ID", "2").message == (
        head + "2:\n\nArticle 2: On mushrooms\nSubmitted by Dr. Ana on Step 3:\n\nRed ones are safe.\n"
    )
    missing = p.do("DISCOVERY_FEED_GET_POST_BY_ID", 9)
    assert not missing.success and missing.message == head + "9:\n\nNo post found with ID 9\n"
    articles = p.do("DISCOVERY_FEED_GET_ARTICLES").message
    assert articles.startswith("DiscoveryFeed (Scientific Articles)\nDiscoveryFeed contains 1 articles.\n")
    assert "Article 2: On mushrooms" in articles


def test_read_posts_reads_back_what_post_render_writes() -> None:
    """Readers of the feed's text (the unit oracle, the RL notes) parse it with `read_posts`,
    kept beside the formatter: it returns every update's author and content, and no article."""
    from discoverylab.world.feed import Post, read_posts

    posts = [Post(3, 1, "Ada", "Please pick up the key and place it in the pot."), Post(4, 2, "Bo", "Hello there.")]
    article = Post(5, 2, "Cy", "Body", kind="article", title="Title")
    text = "".join(p.render() for p in (posts[0], article, posts[1]))
    assert read_posts(text) == [(p.author, p.content) for p in posts]


# ---- dispatch ---------------------------------------------------------------------------
def test_every_action_runs_its_own_handler() -> None:
    """`ActionExecutor._run` calls each action's `_do_<name>` directly (no `getattr`): every
    action of the vocabulary reaches its own handler, with its arguments in order."""
    from discoverylab.world.action_specs import ACTION_SPECS
    from discoverylab.world.objects import ActionResult

    class Recorder(ActionExecutor):
        pass

    for name in ACTION_SPECS:
        def handler(self: ActionExecutor, *args: object, _name: str = name) -> ActionResult:
            return ActionResult(True, f"{_name} {args}")

        setattr(Recorder, f"_do_{name.lower()}", handler)
    p = Player(meadow())
    executor = Recorder(p.agent)
    flag, coin = place(p.world, "flag", 5, 6), place(p.world, "coin", 5, 6)  # (compiled: typed arguments)
    for name, spec in ACTION_SPECS.items():
        kinds = spec.args + ("object",) * (2 - len(spec.args))
        values = {"object": (flag, coin), "direction": ("west", "east"), "location": ("here", "there"), "post_id": (7, 8)}
        a, b = values[kinds[0]][0], values[kinds[1]][1]
        assert executor._run(name, a, b).message == f"{name} {(a, b)[: len(spec.args)]}"
