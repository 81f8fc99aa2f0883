"""The engine's fast paths give exactly what the plain definitions give: door zones, NPC paths,
object-argument lookup and the distinct-count scorecard items (session 6 speed-ups)."""

from __future__ import annotations

import heapq

import numpy as np
import pytest

from discoverylab.env import DiscoveryWorldEnv
from discoverylab.scoring.scorecard import Scorecard, ScorecardItem
from discoverylab.world import zones
from discoverylab.world.catalog import place
from discoverylab.world.npc import find_path
from discoverylab.world.reach import accessible_object, accessible_objects
from discoverylab.world.world import World
from discoverylab.world.zones import reach_mask, tile_bit


def _reference_zones(size: int, barrier: set[tuple[int, int]]) -> list[list[int]]:
    """Tile-by-tile flood fill, zones numbered in x-major order of their first tile."""
    zones = [[-1] * size for _ in range(size)]
    label = 0
    for x in range(size):
        for y in range(size):
            if zones[x][y] >= 0 or (x, y) in barrier:
                continue
            zones[x][y], frontier = label, [(x, y)]
            while frontier:
                i, j = frontier.pop()
                for a, b in ((i + 1, j), (i - 1, j), (i, j + 1), (i, j - 1)):
                    if 0 <= a < size and 0 <= b < size and zones[a][b] < 0 and (a, b) not in barrier:
                        zones[a][b] = label
                        frontier.append((a, b))
            label += 1
    return zones


def test_door_zones_label_like_a_flood_fill() -> None:
    world = World(0)
    rng = np.random.default_rng(5)
    cases = [set(), {(x, y) for x in range(32) for y in range(32)}, {(x, 10) for x in range(32)} | {(9, y) for y in range(32)}]
    for _ in range(60):  # sparse to dense, some tiles off the grid
        count = int(1100 * rng.random() ** 2)
        cases.append({(int(x), int(y)) for x, y in rng.integers(-1, 33, size=(count, 2))})
    for barrier in cases:
        assert world._label_zones(barrier) == _reference_zones(32, barrier)


def test_a_zone_mask_holds_exactly_the_tiles_the_flood_fill_joins_to_its_seeds() -> None:
    """`zones.reach_mask` (column runs grown by additions, bits reversed for the way down) against
    the plain flood fill: for random barriers (off-map tiles too) and seeds, the mask's tiles
    are those whose reference zone is a seed's zone, on sizes whose masks do and do not fill
    whole bytes."""
    rng = np.random.default_rng(7)
    for size in (32, 7, 13):
        tiles = [(x, y) for x in range(size) for y in range(size)]
        for _ in range(40):
            count = int(size * size * 1.1 * rng.random() ** 2)
            barrier = {(int(x), int(y)) for x, y in rng.integers(-1, size + 1, size=(count, 2))}
            zones = _reference_zones(size, barrier)
            free = sum(tile_bit(size, x, y) for x, y in tiles if zones[x][y] >= 0)
            seeds = [tiles[int(i)] for i in rng.integers(len(tiles), size=int(rng.integers(1, 4)))]
            mask = reach_mask(size, free, sum(tile_bit(size, x, y) for x, y in set(seeds)))
            wanted = {zones[x][y] for x, y in seeds} - {-1}
            assert {t for t in tiles if mask & tile_bit(size, *t)} == {t for t in tiles if zones[t[0]][t[1]] in wanted}


def test_door_reach_kept_across_worlds_gives_what_a_fresh_process_gives() -> None:
    """`zones.door_reach` keeps each free mask's plan and zones across worlds (`_PLANS`): worlds
    that repeat a layout (a house at the same site, the Doors task's rooms) read the zones an
    earlier world grew. For every tile of several unit-test worlds (seeds repeated, doors
    opened and closed), the mask equals the one grown with nothing kept; and the cache stays
    bounded."""
    rng = np.random.default_rng(3)
    for task in ("DoorsTest", "NavigationHouseTest", "DoorsWithKeysTest"):
        env = DiscoveryWorldEnv(task, max_steps=10**9)
        for seed in (0, 1, 0, 2, 1):
            env.reset(seed=seed)
            world = env.world
            assert world is not None
            doors = [o for o in world.objects.values() if o.is_passage]
            for _ in range(3):
                for door in doors:
                    door.is_open = bool(rng.random() < 0.3)
                for locked_only in (False, True):
                    kept = [world.door_reach(locked_only, x, y) for x in range(-1, 33) for y in range(-1, 33)]
                    saved, zones._PLANS = zones._PLANS, {}
                    world._reach = {}
                    try:
                        fresh = [world.door_reach(locked_only, x, y) for x in range(-1, 33) for y in range(-1, 33)]
                    finally:
                        zones._PLANS = saved
                        world._reach = {}
                    assert kept == fresh
    assert 0 < len(zones._PLANS) <= zones._PLANS_LIMIT
    saved, limit = zones._PLANS, zones._PLANS_LIMIT
    zones._PLANS, zones._PLANS_LIMIT = {}, 2
    try:  # least recently used out first
        for free in (1, 3, 7, 3, 1):
            zones._shared_plan(3, free)
        assert list(zones._PLANS) == [(3, 3), (3, 1)]
    finally:
        zones._PLANS, zones._PLANS_LIMIT = saved, limit


def _reference_path(world: World, start: tuple[int, int], goal: tuple[int, int]) -> list[tuple[int, int]] | None:
    """A* exactly as first written: cost looked up per neighbour, ties by push order."""

    def cost(x: int, y: int) -> float | None:
        blocker = world.blocker_at(x, y)
        if blocker is None:
            return 1.0
        return 20.0 if blocker.is_passage and not blocker.requires_key else None

    frontier = [(0.0, 0, start)]
    came: dict[tuple[int, int], tuple[int, int] | None] = {start: None}
    best = {start: 0.0}
    counter = 0
    while frontier:
        _, _, cur = heapq.heappop(frontier)
        if cur == goal:
            path = []
            node: tuple[int, int] | None = cur
            while node is not None and node != start:
                path.append(node)
                node = came[node]
            return path[::-1]
        for dx, dy in ((0, -1), (1, 0), (0, 1), (-1, 0)):
            nx, ny = cur[0] + dx, cur[1] + dy
            if not world.in_bounds(nx, ny):
                continue
            step = cost(nx, ny) if (nx, ny) != goal else (cost(nx, ny) or 1.0)
            if step is None:
                continue
            new = best[cur] + step
            if new < best.get((nx, ny), float("inf")):
                best[(nx, ny)] = new
                came[(nx, ny)] = cur
                counter += 1
                heapq.heappush(frontier, (new + abs(goal[0] - nx) + abs(goal[1] - ny), counter, (nx, ny)))
    return None


def test_find_path_takes_the_same_path_as_the_plain_search() -> None:
    rng = np.random.default_rng(9)
    for seed in range(6):
        world = World(seed)
        for _ in range(int(rng.integers(60, 300))):
            x, y = (int(v) for v in rng.integers(0, 32, 2))
            kind = "door" if rng.random() < 0.15 else "wall"
            door = place(world, kind, x, y)
            if kind == "door" and rng.random() < 0.3:
                door.requires_key = 7
        for _ in range(40):
            start = tuple(int(v) for v in rng.integers(0, 32, 2))
            goal = tuple(int(v) for v in rng.integers(0, 32, 2))
            assert find_path(world, start, goal) == _reference_path(world, start, goal)  # type: ignore[arg-type]
        for start, goal in (((-1, 5), (3, 4)), ((3, 4), (-1, 5)), ((0, 0), (40, 40)), ((5, 5), (5, 5))):
            assert find_path(world, start, goal) == _reference_path(world, start, goal)  # off the grid too


def test_paths_read_off_open_rectangles_are_the_plain_search_s(monkeypatch: pytest.MonkeyPatch) -> None:
    """`paths._open_rectangle` (session 14: a character re-planning its way home from each tile
    it steps on, across open ground) gives the plain search's path for start and goal pairs up
    to 8 tiles apart in every direction, on sparse worlds of walls and open, closed and locked
    doors (inside the rectangle, on its edge, on the goal), goals on walls and doors included,
    with one `costs` table shared by the searches as `_PathCache` shares it; and, in every
    direction, one wall or door (closed, locked, open) on each tile of a rectangle in turn.
    Fails when the rule for the leading direction goes stale or a door on the path is let through."""
    from discoverylab.world import paths

    used = [0, 0]
    rectangle = paths._open_rectangle

    def counted(*args: object) -> list[tuple[int, int]] | None:
        path = rectangle(*args)  # type: ignore[arg-type]
        used[path is None] += 1
        return path

    monkeypatch.setattr(paths, "_open_rectangle", counted)
    for gx, gy in ((13, 12), (13, 8), (7, 12), (7, 8), (10, 13), (13, 10)):
        for x in range(min(gx, 10), max(gx, 10) + 1):
            for y in range(min(gy, 10), max(gy, 10) + 1):
                for kind, is_open, key in (("wall", False, 0), ("door", False, 0), ("door", False, 7), ("door", True, 0)):
                    world = World(0)
                    if (x, y) != (10, 10):
                        thing = place(world, kind, x, y)
                        thing.is_open, thing.requires_key = is_open, key
                    assert paths._search(world, (10, 10), (gx, gy), {}) == _reference_path(world, (10, 10), (gx, gy))
    rng = np.random.default_rng(14)
    for seed in range(4):
        world = World(seed)
        blocked = []
        for _ in range(int(rng.integers(10, 50))):
            x, y = (int(v) for v in rng.integers(0, 32, 2))
            if not world.stacks[x][y]:
                kind = ("door", "wall", "wall")[int(rng.integers(0, 3))]
                thing = place(world, kind, x, y)
                thing.is_open = kind == "door" and rng.random() < 0.3
                thing.requires_key = 7 if kind == "door" and rng.random() < 0.3 else 0
                blocked.append((x, y))
        costs: dict[int, float] = {}
        for i in range(1500):
            start = tuple(int(v) for v in rng.integers(0, 32, 2))
            if i % 3:
                goal = tuple(min(max(v + int(rng.integers(-8, 9)), 0), 31) for v in start)
            else:
                goal = blocked[int(rng.integers(0, len(blocked)))]
            path = paths._search(world, start, goal, costs)  # type: ignore[arg-type]
            assert path == _reference_path(world, start, goal), (start, goal)  # type: ignore[arg-type]
    assert used[0] > 2000 and used[1] > 1000  # read off open rectangles, and searched


@pytest.mark.parametrize("unheard", [False, True, "if_free"])
def test_remembered_paths_follow_doors_walls_and_held_things(unheard: bool | str) -> None:
    """`find_path` remembers results per world (session 11): after every kind of change a path
    depends on (a door opened, closed or locked, a wall placed or removed, a blocking thing carried
    onto a tile by a character, a character stepping) it still answers what the plain search does,
    and hands out a new list each time (callers consume it). Characters' steps through
    `walk_unheard` (session 12: not reported to the cache while the walker is passable and
    carries nothing) too, with the walker made impassable now and then; and (session 14) while
    it carries a passable thing that holds nothing (still unheard) or holds the impassable one
    (heard), and through `walk_if_free` (a step only onto a free tile)."""
    from discoverylab.world.agent import Agent
    from discoverylab.world.paths import walk_if_free, walk_unheard

    rng = np.random.default_rng(4)
    for seed in range(3):
        world = World(seed)
        doors = []
        for _ in range(220):
            x, y = (int(v) for v in rng.integers(0, 32, 2))
            if not world.stacks[x][y]:
                kind = "door" if rng.random() < 0.2 else "wall"
                (doors if kind == "door" else []).append(place(world, kind, x, y))
        walker = Agent(world, "walker", 0, 0)
        crate = place(world, "wall", 31, 31)  # something impassable to carry around
        bag = place(world, "wall", 30, 31, passable=True)  # passable: carried unheard, unless it holds the crate
        pairs = [tuple(tuple(int(v) for v in rng.integers(0, 32, 2)) for _ in range(2)) for _ in range(12)]
        for _ in range(60):
            for start, goal in pairs:
                found = find_path(world, start, goal)  # type: ignore[arg-type]
                assert found == _reference_path(world, start, goal)  # type: ignore[arg-type]
                if found:
                    found.pop()  # a caller consuming its copy changes nothing remembered
            change = int(rng.integers(0, 7))
            door = doors[int(rng.integers(0, len(doors)))]
            if change == 0:
                door.is_open = not door.is_open
                door.text_changed()
            elif change == 1:
                door.requires_key = 0 if door.requires_key else 3
                door.text_changed()
            elif change == 2:
                x, y = (int(v) for v in rng.integers(0, 32, 2))
                wall = place(world, "wall", x, y)
                if rng.random() < 0.5:
                    wall.remove_from_world()
            elif change == 3:  # the walker carries the impassable thing (closed contents block too)
                walker.add(crate) if crate.parent is None else world.place(crate, walker.x, walker.y)
            elif change == 4 and unheard:  # an impassable walker blocks where it stands
                walker.passable = not walker.passable
                world.touch(walker.x, walker.y)
            elif change == 5:  # the walker carries the passable bag, or puts it down
                walker.add(bag) if bag.parent is not walker else world.place(bag, walker.x, walker.y)
            elif change == 6 and crate.parent is None:  # the crate into the bag (a blocking content)
                bag.add(crate)
            x, y = (int(v) for v in rng.integers(0, 32, 2))
            if unheard == "if_free":
                walk_if_free(world, walker, x, y)
            else:
                (walk_unheard if unheard else World.walk)(world, walker, x, y)


def test_remembered_paths_follow_the_players_moves_and_teleports() -> None:
    """The player's own moves and teleports (session 14: `world/movement.py` walks it through
    `paths.walk_unheard`, so a passable player carrying only passable things that hold nothing
    is not reported to the path cache: checked) leave every remembered path equal to the plain search's,
    while the player carries an impassable crate, a passable bag (empty, or holding the crate),
    or is made impassable itself. Fails when a step that changes a tile's cost goes unheard."""
    from tests.world_kit import Player

    rng = np.random.default_rng(16)
    heard_steps = unheard_steps = 0
    for seed in range(3):
        world = World(seed)
        doors = []
        for _ in range(60):
            x, y = (int(v) for v in rng.integers(0, 16, 2))
            if not world.stacks[x][y] and (x, y) != (8, 8):
                kind = "door" if rng.random() < 0.3 else "wall"
                (doors if kind == "door" else []).append(place(world, kind, x, y))
        player = Player(world, 8, 8)
        agent = player.agent
        world.teleports = {"corner": (2, 2), "middle": (8, 9), "edge": (15, 3)}
        crate = place(world, "wall", 20, 20)  # impassable: heard wherever the player takes it
        bag = place(world, "wall", 21, 20, passable=True)
        pairs = [tuple(tuple(int(v) for v in rng.integers(0, 16, 2)) for _ in range(2)) for _ in range(16)]
        for _ in range(250):
            for start, goal in pairs:
                assert find_path(world, start, goal) == _reference_path(world, start, goal)  # type: ignore[arg-type]
            change = int(rng.integers(0, 8))
            if change == 0:
                agent.add(crate) if crate.parent is None else world.place(crate, 20, 20)
            elif change == 1:
                agent.add(bag) if bag.parent is not agent else world.place(bag, 21, 20)
            elif change == 2 and crate.parent is None:
                bag.add(crate)
            elif change == 3:
                agent.passable = not agent.passable
                world.touch(agent.x, agent.y)
            before, quiet = (agent.x, agent.y), not world.caches["npc_paths"].changed  # type: ignore[attr-defined]
            action = int(rng.integers(0, 6))
            if action < 4:
                player.do("MOVE_DIRECTION", ("north", "east", "south", "west")[action])
            elif action == 4:
                player.do("TELEPORT_TO_LOCATION", ("corner", "middle", "edge")[int(rng.integers(0, 3))])
            elif doors:
                player.do("TELEPORT_TO_OBJECT", doors[int(rng.integers(0, len(doors)))])
            if (agent.x, agent.y) != before:
                light = agent.passable and all(not c.contents and c.passable for c in agent.contents)
                heard_steps += not light
                unheard_steps += light
                if light and quiet:  # the skipped work: a light step reports no tile
                    assert not world.caches["npc_paths"].changed  # type: ignore[attr-defined]
    assert heard_steps > 100 and unheard_steps > 100  # both kinds of step were checked


def test_walk_if_free_walks_exactly_where_blocker_at_finds_nothing() -> None:
    """`paths.walk_if_free` (session 14: a wandering character's step reads the tile's stack in
    place) walks onto a tile exactly when `blocker_at` finds nothing there, on tiles of every
    kind: empty, grass, walls, doors open, closed and locked (their own passability rule), a
    passable holder with an impassable thing inside, another character; the walker ends where
    the plain calls would leave it."""
    from discoverylab.world.agent import Agent
    from discoverylab.world.paths import walk_if_free

    rng = np.random.default_rng(14)
    for seed in range(3):
        world = World(seed)
        for _ in range(300):
            x, y = (int(v) for v in rng.integers(0, 32, 2))
            kind = int(rng.integers(0, 6))
            if kind == 0:
                place(world, "wall", x, y)
            elif kind == 1:
                door = place(world, "door", x, y)
                door.is_open = bool(rng.random() < 0.5)
                door.requires_key = 3 if rng.random() < 0.3 else 0
            elif kind == 2:
                holder = place(world, "wall", x, y, passable=True)
                if rng.random() < 0.5:
                    holder.add(place(world, "wall", 0, 0))  # an impassable thing held
            elif kind == 3:
                place(world, "grass", x, y)
            elif kind == 4:
                Agent(world, "other", x, y).passable = bool(rng.random() < 0.5)
        walker = Agent(world, "walker", 0, 0)
        kinds = set()
        for x in range(32):
            for y in range(32):
                free = world.blocker_at(x, y) is None
                before = (walker.x, walker.y)
                assert walk_if_free(world, walker, x, y) is free, (x, y)
                assert (walker.x, walker.y) == ((x, y) if free else before)
                kinds.add(free)
        assert kinds == {True, False}


def test_a_path_off_an_open_rectangle_answers_for_each_of_its_tiles(monkeypatch: pytest.MonkeyPatch) -> None:
    """A path read off an open rectangle is remembered for each of its tiles too (session 23:
    a character walking home searched again from every tile it stepped on): from any tile on
    it, `find_path` answers the rest of it without a search, and that is the plain search's
    path; after a wall lands on it, the plain search's again. Random sparse worlds, goals in
    every direction (both legs' orders), walls and doors as goals."""
    from discoverylab.world import paths

    calls = [0, 0]
    plan = paths._plan

    def counted(*args: object) -> object:
        result = plan(*args)  # type: ignore[arg-type]
        calls[result[1]] += 1
        return result

    monkeypatch.setattr(paths, "_plan", counted)
    rng = np.random.default_rng(11)
    checked = 0
    for seed in range(4):
        world = World(seed)
        for _ in range(40):
            x, y = (int(v) for v in rng.integers(0, 32, 2))
            place(world, "door" if rng.random() < 0.2 else "wall", x, y)
        for _ in range(150):
            start = tuple(int(v) for v in rng.integers(0, 32, 2))
            goal = tuple(int(start[i] + rng.integers(-5, 6)) % 32 for i in range(2))
            before = list(calls)
            found = find_path(world, start, goal)  # type: ignore[arg-type]
            assert found == _reference_path(world, start, goal)  # type: ignore[arg-type]
            if not found or calls[1] == before[1]:
                continue  # not read off an open rectangle (or remembered from before)
            searched = list(calls)
            for tile in found[:-1]:
                rest = find_path(world, tile, goal)  # type: ignore[arg-type]
                assert rest == _reference_path(world, tile, goal), (start, tile, goal)
                checked += 1
            assert calls == searched  # no search for any of them
            if len(found) > 2:  # a wall on the way: the plain search's path again
                wall = place(world, "wall", *found[len(found) // 2])
                assert find_path(world, found[0], goal) == _reference_path(world, found[0], goal)  # type: ignore[arg-type]
                wall.remove_from_world()
    assert checked > 500


def test_npc_walks_plan_the_plain_search_s_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rollouts with walking characters (fetching dog, wandering animals and villagers): every
    path an NPC plans through the remembered results is the plain search's path."""
    import discoverylab.world.npc as npc_module

    remembered = npc_module.find_path
    calls = []

    def checked(world: World, start: tuple[int, int], goal: tuple[int, int]) -> list[tuple[int, int]] | None:
        path = remembered(world, start, goal)
        assert path == _reference_path(world, start, goal)
        calls.append(start)
        return path

    monkeypatch.setattr(npc_module, "find_path", checked)
    for task in ("LostInTranslation", "Proteomics", "MovingAgentsTest"):
        env = DiscoveryWorldEnv(task, "normal", max_steps=10**6)
        env.reset(seed=2)
        rng = np.random.default_rng(2)
        actions = ["MOVE_FORWARD", "ROTATE_CW", "ROTATE_CCW", "MOVE_BACKWARD"]
        for _ in range(400):
            env.step({"action": actions[int(rng.integers(0, 4))]})
    assert len(calls) > 300


@pytest.mark.parametrize("task", ["PickAndPlaceTest", "DoorsWithKeysTest", "PickAndGiveTest"])
def test_accessible_object_agrees_with_the_accessible_dict(task: str) -> None:
    env = DiscoveryWorldEnv(task, "normal", max_steps=10**6)
    env.reset(seed=1)
    rng = np.random.default_rng(1)
    moves = ["MOVE_FORWARD", "ROTATE_CW", "ROTATE_CCW", "MOVE_BACKWARD"]
    assert env.world is not None
    uids = sorted(env.world.objects)
    for _ in range(150):
        agent = env.executor.agent
        reach = accessible_objects(agent)
        for uid in [*reach, *(uids[int(i)] for i in rng.integers(0, len(uids), 20))]:
            assert accessible_object(agent, uid) is reach.get(uid)
        reachable = [u for u in reach if env.world.objects[u].movable]
        if reachable and rng.random() < 0.3:
            env.step({"action": "PICKUP", "arg1": reachable[0]})
        else:
            env.step({"action": moves[int(rng.integers(0, 4))]})


def _full_update(item: ScorecardItem, uuids: list[int]) -> tuple[object, ...]:
    """What `add_distinct` did before its early return: the state it leaves."""
    copy = ScorecardItem(item.name, item.description, item.max_score, item.score, item.completed, list(item.associated_uuids), item.notes)
    if not copy.completed:
        known = set(copy.associated_uuids) | set(uuids)
        copy.associated_uuids = sorted(known)
        copy.set(len(known))
    return copy.score, copy.completed, copy.associated_uuids, copy.notes


def test_add_distinct_early_return_leaves_what_the_full_update_leaves() -> None:
    item = ScorecardItem("open", "Open doors", 5)
    steps: list[tuple[str, object]] = [
        ("add", []), ("add", [4]), ("add", [4]), ("add", [2, 4]), ("add", [2]),
        ("set", 0),  # a scorer resetting the score: the next call must recount
        ("add", [2]), ("assign", [9, 3]),  # an unsorted list a scenario assigned: same length as the score
        ("add", [3]), ("add", []), ("add", [1, 5, 6]), ("add", [7]),
    ]  # fmt: skip
    for op, arg in steps:
        if op == "add":
            assert isinstance(arg, list)
            expected = _full_update(item, arg)
            item.add_distinct(iter(arg))
            assert (item.score, item.completed, item.associated_uuids, item.notes) == expected
        elif op == "set":
            item.set(int(arg))  # type: ignore[call-overload]
        else:
            item.associated_uuids = list(arg)  # type: ignore[call-overload]
    assert item.completed and item.score == 5


def test_a_zero_item_distinct_count_completes_on_its_first_update() -> None:
    item = ScorecardItem("none", "Nothing to find", 0)
    item.add_distinct([])
    assert item.completed


def test_all_completed() -> None:
    card = Scorecard("t", "d")
    assert card.all_completed()
    a, b = card.add("a", "", 1), card.add("b", "", 2)
    a.set(1)
    assert not card.all_completed()
    b.set(2)
    assert card.all_completed()


def reference_uuids(seed: int) -> list[int]:
    """The UUID order of world/uuids.py written the slow, plain way: first occurrences of uniform
    draws from 1..65535 in blocks of 2,048, then the last 4,096 values by one permutation."""
    rng = np.random.default_rng(np.random.SeedSequence(seed).spawn(5)[4])
    order: dict[int, None] = {}
    while 65535 - len(order) > 4096:
        for value in rng.integers(1, 65536, 2048, dtype=np.uint16).tolist():
            if value not in order:
                order[value] = None
    rest = np.array(sorted(set(range(1, 65536)) - set(order)), dtype=np.int64)
    return [*order, *rng.permutation(rest).tolist()]


def test_uuids_follow_the_seeded_pool_across_chunks_and_the_pool_ends_clearly() -> None:
    """`register` draws the pool a block at a time (session 10): UUIDs are the scheme's values in
    creation order, past every block boundary and into the tail, and the 65,536th object is refused."""
    from discoverylab.world.catalog import spawn
    from discoverylab.world.world import UUID_LIMIT, WorldError

    world = World(11)
    uuids = [spawn(world, "grass").uuid for _ in range(UUID_LIMIT)]
    assert uuids == reference_uuids(11)
    assert len(set(uuids)) == UUID_LIMIT and min(uuids) == 1 and max(uuids) == UUID_LIMIT
    assert uuids[:2000] != reference_uuids(12)[:2000]
    with pytest.raises(WorldError, match="exhausted"):
        spawn(world, "grass")


def test_dispose_frees_a_finished_world_without_the_cyclic_collector() -> None:
    """After `dispose` a world with characters in dialog, held objects and containers is freed
    by reference counting alone (nothing left for `gc.collect` to find)."""
    import gc
    import weakref

    from discoverylab.world.catalog import spawn

    env = DiscoveryWorldEnv("DialogTest", max_steps=10**6)
    env.reset(seed=3)
    world = env.world
    assert world is not None
    player, npc = world.agents[0], world.agents[1]
    player.dialog_partner, npc.dialog_partner = npc, player  # as TALK leaves them: a cycle
    held = place(world, "flag", player.x, player.y)
    player.add(held)  # parent <-> contents: another
    jar = place(world, "jar", player.x, player.y)
    jar.add(spawn(world, "flag"))
    jar.remove_from_world()  # destroyed with its contents: both out of `world.objects`
    env.step({"action": "WAIT"})
    watched = [weakref.ref(world), weakref.ref(player), weakref.ref(npc), weakref.ref(held), weakref.ref(jar)]
    watched.append(weakref.ref(jar.contents[0]))
    watched += [weakref.ref(o) for o in list(world.objects.values())[:50]]
    del world, player, npc, held, jar
    gc.collect()
    gc.disable()
    try:
        env.reset(seed=4)  # disposes the old world
        # grass the new world reused (`world/spares.py`) lives on there; nothing else of the old one
        assert all(ref() is None or ref().world is env.world for ref in watched)  # type: ignore[union-attr]
        assert watched[0]() is None
    finally:
        gc.enable()


def test_dispose_unties_plain_scenery_that_became_a_holder() -> None:
    """`dispose` visits registered objects and holders only: inline grass and a wall given
    contents or parts (never registered) are untied all the same, and freed with the world
    by reference counting alone."""
    import gc
    import weakref

    from discoverylab.world import spares
    from discoverylab.world.catalog import all_cells, place_each, spawn

    world = World(11)
    place_each(world, "grass", all_cells(world.size))
    wall = place(world, "wall", 4, 4)
    grass = world.stacks[2][2][0]
    assert grass.type == "grass" and grass.uuid not in world._built and wall.uuid not in world._built
    grass.add(spawn(world, "flag"))
    wall.add_part(spawn(world, "coin"))
    watched = [weakref.ref(world), weakref.ref(grass), weakref.ref(wall), weakref.ref(grass.contents[0])]
    watched.append(weakref.ref(wall.parts[0]))
    gc.collect()
    gc.disable()
    try:
        world.dispose()
        assert grass.contents == [] and wall.parts == []
        del world, grass, wall
        spares.clear()  # the fill kept for the next world's (`world/spares.py`)
        assert all(ref() is None for ref in watched)
    finally:
        gc.enable()


@pytest.mark.parametrize("task", ["DoorsTest", "SpaceSick", "LostInTranslation", "PlantNutrients", "ReactorLab"])
def test_a_played_world_is_freed_by_reference_counting_after_reset(task: str) -> None:
    """After a random walk of 150 steps (pick-ups, drops, talks, growth), `reset` frees the old
    world and every object it held without the cyclic collector."""
    import gc
    import weakref

    from discoverylab.rl import make_rl_env

    env = make_rl_env(task)
    _, info = env.reset(seed=5)
    rng = np.random.default_rng(0)
    for _ in range(150):
        *_, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        if term or trunc:
            break
    world = env.unwrapped.world
    refs = [weakref.ref(o) for o in world.objects.values()] + [weakref.ref(world)]
    del world
    gc.collect()
    gc.disable()
    try:
        env.reset(seed=6)  # grass the new world reused (`world/spares.py`) lives on there
        new = env.unwrapped.world
        assert sum(ref() is not None and ref().world is not new for ref in refs) == 0  # type: ignore[union-attr]
        assert refs[-1]() is None
    finally:
        gc.enable()


@pytest.mark.parametrize("kind", ["grass", "floor", "wall", "soil"])
def test_place_each_builds_what_a_loop_of_place_builds(kind: str) -> None:
    from discoverylab.world.catalog import place_each

    cells = [(x, y) for x in range(3, 9) for y in range(2, 5)]
    plain, bulk = World(5), World(5)
    for x, y in cells:
        place(plain, kind, x, y)
    place_each(bulk, kind, cells)

    def picture(world: World) -> list[tuple[object, ...]]:
        return [(o.uuid, type(o).__name__, o.name, o.type, o.x, o.y, o.layer, [m.key for m in o.materials],
                 dict(o.props), [c.uuid for c in o.contents]) for o in world.objects.values()]  # fmt: skip

    assert picture(bulk) == picture(plain) and len(plain.objects) >= len(cells)
    for x, y in cells:  # the same objects on the same layers and in the same stacking order
        assert [o.uuid for o in bulk.stacks[x][y]] == [o.uuid for o in plain.stacks[x][y]]
