"""Object templates (data/objects.json) and the factory that builds objects from them."""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from discoverylab.world import instruments, things
from discoverylab.world.materials import material, shared_material
from discoverylab.world.objects import Container, Layer, WorldObject

if TYPE_CHECKING:
    from discoverylab.world.world import World

CLASSES: dict[str, type[WorldObject]] = {
    "WorldObject": WorldObject,
    "Container": Container,
    "Terrain": things.Terrain,
    "Wall": things.Wall,
    "Door": things.Door,
    "Sign": things.Sign,
    "Jar": things.Jar,
    "Pot": things.Pot,
    "Appliance": things.Appliance,
    "Food": things.Food,
    "Mold": things.Mold,
    "SoilTile": things.SoilTile,
    "Shovel": things.Shovel,
    "FertilizerBag": things.FertilizerBag,
    "Key": things.Key,
    "Instrument": instruments.Instrument,
}


@lru_cache(maxsize=1)
def templates() -> dict[str, dict[str, Any]]:
    raw = json.loads(resources.files("discoverylab.data").joinpath("objects.json").read_text("utf-8"))
    return {k: v for k, v in raw.items() if not k.startswith("_")}


def spawn(world: World, kind: str, **overrides: Any) -> WorldObject:
    """Create an object from its template. `name`/`type_` and any attribute can be overridden."""
    try:
        tpl = templates()[kind]
    except KeyError:
        raise KeyError(f"Unknown object kind {kind!r}; known: {sorted(templates())}") from None
    cls = CLASSES[tpl["class"]]
    attrs = dict(tpl.get("attrs", {}))
    name = overrides.pop("name", tpl["name"])
    type_ = overrides.pop("type_", tpl["type"])
    props = overrides.pop("props", None)
    attrs.update(overrides)
    if "layer" in tpl:
        attrs.setdefault("layer_hint", Layer[tpl["layer"]])
    make_material = shared_material if issubclass(cls, things.Terrain) else material
    obj = cls(world, name, type_, [make_material(m) for m in tpl.get("materials", [])], **attrs)
    obj.props.update(tpl.get("props", {}))
    if props:
        obj.props.update(props)
    if kind == "soil":
        obj.add(spawn(world, "dirt"))
    return obj


def place(world: World, kind: str, x: int, y: int, **overrides: Any) -> WorldObject:
    """Spawn and put on the grid on the template's layer."""
    return world.place(spawn(world, kind, **overrides), x, y)
