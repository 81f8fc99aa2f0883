"""The Tutorial's kitchen fridge: the engine's appliance, asleep while its contents are settled.

The fridge is switched on from the start and holds the meal at its set point (-4 C): every
tick it walked the pot and mushrooms to add 0 C to each, ~10% of a Tutorial step. Once a tick
changed no temperature (`Appliance.heat`), the next changes none either until something on its
tile changes (a pot put in or taken out, the door opened), which `World.watch_tiles` reports:
only appliances change temperatures in the Tutorial, and its builder sets them before the
first tick. So the fridge leaves the tick loop (`World.pause_tick_until_touched`) until then
and ticks again in its place in the order; the village's covered soil sleeps the same way, so
this adds no tile watcher.
"""

from __future__ import annotations

from discoverylab.world.catalog import templates
from discoverylab.world.materials import material
from discoverylab.world.things import Appliance
from discoverylab.world.world import World


class KitchenFridge(Appliance):
    """`Appliance`, leaving the tick loop after a tick that changed nothing (see the module)."""

    def tick(self) -> None:
        if self.activated and not self.heat():
            self.world.pause_tick_until_touched(self)


def make_fridge(world: World) -> KitchenFridge:
    """What `catalog.spawn(world, "fridge")` builds (the template's name, type, materials and
    attributes, the same UUID draw), as a `KitchenFridge`."""
    tpl = templates()["fridge"]
    materials = [material(m) for m in tpl.get("materials", [])]
    return KitchenFridge(world, tpl["name"], tpl["type"], materials, **tpl.get("attrs", {}))
