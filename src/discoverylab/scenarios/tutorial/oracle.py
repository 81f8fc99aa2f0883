"""Tutorial oracle: warm the meal on the stove, hand it over, take the key, open the door, step out."""

from __future__ import annotations

from typing import Any

from discoverylab.scenarios import oracle_tools as ot
from discoverylab.scenarios.base import OracleGen


# ---- oracle ---------------------------------------------------------------------------------
def _entry(obs: ot.Obs, name: str, where: str = "accessible") -> dict[str, Any]:
    found = ot.find_accessible(obs, name) if where == "accessible" else ot.find_nearby(obs, name)
    return ot.require(found, f"{'an accessible' if where == 'accessible' else 'a visible'} {name!r}")


def _carried(obs: ot.Obs, name: str) -> int:
    return int(ot.require(ot.find_inventory(obs, name), f"{name!r} in the inventory")["uuid"])


def _elder_uuid(obs: ot.Obs) -> int:
    for uid, name in ot.nearby_agents(obs).items():
        if name == "Elder":
            return uid
    raise ot.OracleFailure("the elder is not in view")


def _say(obs: ot.Obs, uuid: int, wanted: str) -> ot.Steps:
    """Talk to the elder choosing `wanted` at the first menu, then leave the conversation."""

    def pick(box: dict[str, Any]) -> int:
        options: dict[str, str] = box["dialogOptions"]
        return ot.option_index(options, wanted) if wanted in options.values() else int(min(options, key=int))

    return (yield from ot.converse(obs, uuid, pick))


def solve(obs: ot.Obs) -> OracleGen:
    obs = yield from ot.checked(ot.act("TELEPORT_TO_LOCATION", "Near Elder"))
    elder = _elder_uuid(obs)
    obs = yield from ot.checked(ot.act("TELEPORT_TO_OBJECT", elder))
    obs = yield from _say(obs, elder, "Of course. What can I do?")
    if "fridge" not in obs["lastActionMessage"] or "stove" not in obs["lastActionMessage"]:
        raise ot.OracleFailure(f"unexpected request: {obs['lastActionMessage']}")
    # Fetch the meal from the fridge and heat it in the stove until the mushrooms are cooked.
    obs = yield from ot.checked(ot.act("TELEPORT_TO_LOCATION", "Kitchen"))
    obs = yield from ot.go_to_object(obs, "fridge")
    obs = yield from ot.checked(ot.act("OPEN", _entry(obs, "fridge")["uuid"]))
    obs = yield from ot.checked(ot.act("PICKUP", _entry(obs, "pot")["uuid"]))
    obs = yield from ot.go_to_object(obs, "stove")
    stove = _entry(obs, "stove")["uuid"]
    obs = yield from ot.checked(ot.act("OPEN", stove))
    obs = yield from ot.checked(ot.act("PUT", _carried(obs, "pot"), stove))
    obs = yield from ot.checked(ot.act("ACTIVATE", stove))
    for _ in range(30):
        if any(e["name"] == "mushroom" and "cooked" in e.get("description", "")
               for e in obs["accessibleEnvironmentObjects"]):  # fmt: skip
            break
        obs = yield ot.act("WAIT")
    else:
        raise ot.OracleFailure("the mushrooms never cooked")
    obs = yield from ot.checked(ot.act("PICKUP", _entry(obs, "pot")["uuid"]))
    obs = yield from ot.checked(ot.act("DEACTIVATE", stove))
    # Serve it, ask how it is, and take the key the elder drops.
    obs = yield from ot.checked(ot.act("TELEPORT_TO_LOCATION", "Near Elder"))
    obs = yield from ot.checked(ot.act("TELEPORT_TO_OBJECT", elder))
    obs = yield from ot.checked(ot.act("PUT", _carried(obs, "pot"), elder))
    obs = yield from _say(obs, elder, "How's your meal?")
    if "perfect" not in obs["lastActionMessage"]:
        raise ot.OracleFailure(f"the elder did not like the meal: {obs['lastActionMessage']}")
    obs = yield from ot.checked(ot.act("PICKUP", _entry(obs, "key")["uuid"]))
    # Unlock the front door and walk out.
    obs = yield from ot.checked(ot.act("TELEPORT_TO_LOCATION", "Front Door"))
    # Face the door from inside (teleporting "beside" it could land outside the house).
    obs = yield from ot.checked(ot.act("ROTATE_DIRECTION", "south"))
    door = _entry(obs, "door")
    if "open" not in door.get("description", "") or "closed" in door.get("description", ""):
        obs = yield from ot.checked(ot.act("OPEN", door["uuid"]))
    for _ in range(3):
        if obs["taskProgress"][0]["completed"]:
            return
        obs = yield from ot.checked(ot.act("MOVE_DIRECTION", "south"))
    raise ot.OracleFailure("could not leave the house")
