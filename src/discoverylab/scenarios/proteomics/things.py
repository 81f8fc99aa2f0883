"""Proteomics pieces: the species, their statues and animals, the proteomics meter and the
clustering/outlier data generator.

Importing this module registers the proteomics meter's reader in `instruments.READERS`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from discoverylab.world import instruments
from discoverylab.world.instruments import Instrument
from discoverylab.world.materials import material
from discoverylab.world.npc import NPC
from discoverylab.world.objects import Layer, WorldObject
from discoverylab.world.world import World, WorldError

METER = "proteomics meter"
WANDER_SLOW = 0.25  # the original's WanderSlow: a random step about every fourth tick


@dataclass(frozen=True, slots=True)
class Species:
    name: str
    article: str  # "a" / "an", for the statue's name
    sprite: str
    lore: str

    @property
    def statue_name(self) -> str:
        return f"statue of {self.article} {self.name}"


SPECIES = (
    Species("spheroid", "a", "enemy01_04_",
            "This statue depicts a spheroid, a creature that is known for its round shape and ability to roll "
            "around like a ball.  It is a common sight in the fields of the discovery world, and is known to be a "
            "peaceful creature."),
    Species("echojelly", "an", "enemy06_04_",
            "This statue depicts an echojelly, a creature that is known for its transparent body and ability to "
            "reflect light in a dazzling display.  It is a common sight in both the land and waters of the "
            "discovery world, and is known to be a peaceful creature."),
    Species("vortisquid", "a", "enemy10_02_",
            "This statue depicts a vortisquid, a creature that is known for its tentacles and ability to move "
            "quickly through land and water.  It is a common sight on discovery world, and is known to be a "
            "peaceful creature."),
    Species("animaplant", "an", "enemy11_01_",
            "This statue depicts an animaplant, a creature that is known for its ability to blend in with the "
            "plants around it.  It is a common sight in the forests of the discovery world, and is known to be a "
            "peaceful creature."),
    Species("prismatic beast", "a", "enemy16_03_",
            "This statue depicts a prismatic beast, a creature that is known for its appearance, which resembles a "
            "bear made out of crystals.  It is a rare sight in the discovery world, and is known to be a peaceful "
            "creature."),
)  # fmt: skip


class Statue(WorldObject):
    """An immovable, impassable statue with a readable plaque."""

    default_layer = Layer.FURNITURE
    movable = False
    passable = False
    readable = True


def make_statue(world: World, species: Species) -> Statue:
    return Statue(world, species.statue_name, "statue", [material("rock")], document=species.lore)


def make_meter(world: World) -> Instrument:
    return Instrument(world, METER, METER, [material("metal")])


def make_animal(
    world: World, species: Species, x: int, y: int, values: dict[str, float], wander: bool
) -> NPC:
    """An animal: an NPC with a closed inventory and no dialog tree, carrying its protein values.
    Wandering animals drift slowly around their starting point."""
    animal = NPC(world, species.name, x, y, facing="east", sprite=species.sprite)
    animal.dialog_tree = None  # TALK answers "has no dialog tree set"
    animal.props["proteomics"] = dict(values)
    if wander:
        animal.enqueue("wander", priority=0, x=x, y=y, probability=WANDER_SLOW)
    return animal


def _proteomics_reader(inst: Instrument, obj: WorldObject) -> str:
    head = f"You use the proteomics meter to investigate the {obj.name}.\n"
    values: dict[str, Any] = obj.props.get("proteomics") or {}
    if not values:
        return head + "The results are inconclusive.\n"
    lines = "".join(f"- {protein}: {float(value):.2f}\n" for protein, value in values.items())
    return head + "The results are as follows:\n" + lines


instruments.READERS[METER] = _proteomics_reader


# ---- data -------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class ClusterData:
    """Inliers on a circle/sphere of radius 0.1 around `center`, outliers on one of radius 0.5;
    every coordinate within [0, 1]."""

    center: tuple[float, ...]
    inliers: list[tuple[float, ...]]
    outliers: list[tuple[float, ...]]


INLIER_RADIUS = 0.1
OUTLIER_RADIUS = 0.5
_TRIES = 1000


def _ring_points(
    rng: np.random.Generator, n: int, radius: float, center: np.ndarray
) -> list[tuple[float, ...]] | None:
    """`n` points at `radius` from `center` (2-D: one angle; 3-D: two angles, both U(0, 2pi),
    as in the original), rejecting any outside the unit square/cube; None after 1000 draws."""
    points: list[tuple[float, ...]] = []
    offset: tuple[float, ...]
    for _ in range(_TRIES):
        if len(points) == n:
            break
        if len(center) == 2:
            a = rng.uniform(0, 2 * math.pi)
            offset = (math.cos(a), math.sin(a))
        else:
            a, b = rng.uniform(0, 2 * math.pi), rng.uniform(0, 2 * math.pi)
            offset = (math.cos(a) * math.sin(b), math.sin(a) * math.sin(b), math.cos(b))
        point = tuple(float(c + radius * o) for c, o in zip(center, offset, strict=True))
        if all(0.0 <= v <= 1.0 for v in point):
            points.append(point)
    return points if len(points) == n else None


def clustering_data(
    rng: np.random.Generator, dims: int, n_inliers: int = 5, n_outliers: int = 1
) -> ClusterData:
    """The original's generator: a centre drawn from U(0.2, 0.8)^dims, redrawn until both the
    inliers and the outliers fit in the unit space."""
    if dims not in (2, 3):
        raise ValueError(f"The clustering data has 2 or 3 dimensions, not {dims}.")
    for _ in range(_TRIES):
        center = rng.uniform(0.2, 0.8, size=dims)
        inliers = _ring_points(rng, n_inliers, INLIER_RADIUS, center)
        outliers = _ring_points(rng, n_outliers, OUTLIER_RADIUS, center)
        if inliers is not None and outliers is not None:
            return ClusterData(tuple(float(c) for c in center), inliers, outliers)
    raise WorldError("Could not generate the proteomics clustering data.")


def protein_values(point: tuple[float, ...]) -> dict[str, float]:
    """{"Protein A": x, "Protein B": y[, "Protein C": z]}."""
    return {f"Protein {chr(ord('A') + i)}": v for i, v in enumerate(point)}
