"""Scientific instruments: USE <instrument> ON <target> reads the target's materials.

Every reading is computed from the object tree (materials, parts, contents), never from a
scenario's answer key, so agents can only learn what the world physically shows.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

from mypy_extensions import mypyc_attr

from discoverylab.world.objects import ActionResult, WorldObject

if TYPE_CHECKING:
    from discoverylab.world.agent import Agent

Reader = Callable[["Instrument", WorldObject], str | None]


def microscope_text(obj: WorldObject) -> str:
    """What the microscope shows: parts, material descriptions, modifiers, then each part."""
    text = ""
    if obj.parts:
        text += f"Observing the {obj.name}, you see the following parts: {', '.join(p.name for p in obj.parts)}. \n"
    descs = [m.microscope for m in obj.materials if m.microscope]
    if "microscope" in obj.props:
        descs = [str(obj.props["microscope"])]
    if descs:
        text += f"Observing the {obj.name}, you see the following: {', '.join(descs)}.\n"
    else:
        text += f"Observing the {obj.name}, you don't observe anything particularly noteworthy.\n"
    if "microscope_note" in obj.props:
        text += f"{obj.props['microscope_note']}\n"
    for part in obj.parts:
        text += microscope_text(part)
    return text


def _microscope(inst: Instrument, obj: WorldObject) -> str:
    return f"You use the microscope to observe the {obj.name}.\n" + microscope_text(obj)


def _spectrum(obj: WorldObject) -> list[float] | None:
    if "spectrum" in obj.props:
        return [float(v) for v in obj.props["spectrum"]]
    mats = list(obj.all_materials())
    if not mats:
        return None
    return [sum(m.spectrum[i] for m in mats) for i in range(5)]


def _spectrometer(inst: Instrument, obj: WorldObject) -> str:
    head = f"You use the spectrometer to examine the {obj.name}.\n"
    spectrum = _spectrum(obj)
    if spectrum is None:
        return head + "The results are inconclusive.\n"
    lines = "".join(f"- Channel {i + 1}: {v:.2f}\n" for i, v in enumerate(spectrum))
    return head + "The results are as follows:\n" + lines


def _ph(inst: Instrument, obj: WorldObject) -> str:
    head = f"You use the PH meter to investigate the {obj.name}.\n"
    if "ph" in obj.props:
        value: float | None = float(obj.props["ph"])
    else:
        mats = list(obj.all_materials(include_contents=True))
        value = sum(m.ph for m in mats) / len(mats) if mats else None
    if value is None:
        return head + "The results are inconclusive.\n"
    return head + f"The PH meter reports a PH of {value:.1f}.\n"


def _radiation_of(obj: WorldObject) -> float:
    return sum(m.radiation for m in obj.all_materials())


def _radiation(inst: Instrument, obj: WorldObject) -> str:
    world = inst.world
    level = _radiation_of(obj) + float(world.rng_noise.random()) * world.background_radiation
    mx, my = inst.location()
    for x in range(mx - 2, mx + 3):
        for y in range(my - 2, my + 3):
            if not world.in_bounds(x, y):
                continue
            weight = (math.hypot(x - mx, y - my) + 2) ** 2
            for top in world.top_level_at(x, y):
                for thing in (top, *top.all_contents()):
                    if thing is not obj:  # the target's contents count here (a jar of ore reads high)
                        level += _radiation_of(thing) / weight
    return (
        f"You use the radiation meter to investigate the {obj.name}.\n"
        f"The radiation meter reports a level of {level:.2f} micro Seiverts per hour.\n"
    )


def _thermometer(inst: Instrument, obj: WorldObject) -> str:
    return (
        f"You use the thermometer to measure the temperature of the {obj.name}.\n"
        f"The thermometer reports a temperature of {obj.temperature_c:.2f} degrees Celsius.\n"
    )


def _densitometer(inst: Instrument, obj: WorldObject) -> str:
    head = f"You use the densitometer to examine the {obj.name}.\n"
    if obj.density <= 0:
        return head + "The results are inconclusive.\n"
    return (
        head + "The results are as follows:\n"
        f"The density of the {obj.name} appears to be approximately {obj.density:.3f} grams per cubic centimeter.\n"
    )


READERS: dict[str, Reader] = {
    "microscope": _microscope,
    "spectrometer": _spectrometer,
    "PH meter": _ph,
    "radiation meter": _radiation,
    "thermometer": _thermometer,
    "densitometer": _densitometer,
}


@mypyc_attr(allow_interpreted_subclasses=True)
class Instrument(WorldObject):
    """A measuring device; its `type` picks the reader (scenarios can register more)."""

    usable = True

    def use_with(self, agent: Agent, target: WorldObject) -> ActionResult:
        reader = READERS.get(self.type)
        if reader is None:
            return super().use_with(agent, target)
        text = reader(self, target)
        if text is None:
            return ActionResult(False, f"The {self.name} cannot measure the {target.name}.", True)
        return ActionResult(True, text, True)
