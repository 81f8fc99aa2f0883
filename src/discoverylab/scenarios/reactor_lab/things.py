"""Reactor Lab pieces: quantum crystals, the crystal reactors (NPC devices tuned through their
dialog menu) and the generator that shows how many reactors run.

A crystal's measurable properties are ordinary object state (density, temperature) and one
generated material (radiation, spectrum, microscope text), so the shared instruments read
them; its resonance frequency is hidden state that only a reactor reacts to.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from discoverylab.world.devices import Device, Number
from discoverylab.world.materials import Material, material
from discoverylab.world.objects import Layer, WorldObject
from discoverylab.world.world import World

DEFAULT_FREQUENCY = 5000
FREQUENCY_RANGE = (0, 10000)
TOLERANCE = 2.0  # a reactor runs when |setting - crystal frequency| < 2 Hz
# Easy's reactors are finer (1 Hz: the two whole settings around the frequency): its frequency is
# computed exactly, while a blind +10 Hz sweep catches 2 Hz per press instead of 4 (with 30
# presses, the best training-learnt window caught 6.3% of 300 training seeds at 2 Hz).
TOLERANCES = {"easy": 1.0, "normal": TOLERANCE, "challenge": TOLERANCE}
FREQ = "resonanceFreq"
STEPS = (1000, 100, 10, 1)
# Frequency button presses a reactor takes; one more burns it out and ends the task. Without it
# a blind sweep (+10 Hz presses, no measuring) activated every reactor on some seeds; the
# oracle needs at most 57 presses on a reactor (seeds 0-9, every difficulty). Easy's one unknown
# crystal's frequency is computed exactly from one measurement: reaching any setting its
# generator can draw takes at most 18 presses (the oracle used at most 23, 10 on the median seed
# 0-99), while with 100 presses a blind +10 Hz sweep activated 16 in 100 seeds.
PRESS_LIMIT = 100
PRESS_LIMITS = {"easy": 30, "normal": PRESS_LIMIT, "challenge": PRESS_LIMIT}
PRESSES_LEFT = "pressesLeft"
REACTOR_TEXT = (
    "Hello, I am Crystal Reactor #{number}.\n"
    "The current resonance frequency is: {resonanceFreq} Hertz.\n"
    "The allowable range is 0 to 10,000 Hz.\n"
    "Frequency button presses left before I burn out: {pressesLeft}."
)
QUANTUM_GAP = "The quantum gap of this crystal appears to be {:.2f} nm."


@dataclass(frozen=True, slots=True)
class CrystalData:
    """One crystal's generated properties (all rounded to 2 decimals)."""

    density: float
    temperature: float
    quantum_size: float
    radiation: float
    spectrum: tuple[float, ...]


class QuantumCrystal(WorldObject):
    """A crystal with a hidden resonance frequency (Hz)."""

    resonance_freq: float = 0.0


def make_crystal(world: World, data: CrystalData, frequency: float) -> QuantumCrystal:
    generated = Material(
        key="quantum_crystal",
        name="quantum crystal",
        microscope="A translucent, finely faceted crystal lattice",
        color="violet",
        spectrum=data.spectrum,
        ph=7.0,
        radiation=data.radiation,
    )
    crystal = QuantumCrystal(
        world, "quantum crystal", "quantum crystal", [generated], density=data.density,
        temperature_c=data.temperature, resonance_freq=frequency, sprite="quantum_crystal",
    )  # fmt: skip
    crystal.props["microscope_note"] = QUANTUM_GAP.format(data.quantum_size)
    return crystal


class CrystalReactor(Device):
    """An open container for one crystal; runs when tuned to its crystal's frequency.

    The menu has one option per step (+/- 1000, 100, 10, 1 Hz, clamped to 0..10000) and Exit.
    Every press uses one of `press_limit` presses; a press beyond them burns the reactor out (it
    never runs again, and the scenario ends the task unsuccessfully).
    After every press and every tick: with a crystal inside, the reactor is activated iff the
    setting is within `tolerance` (2 Hz; 1 in Easy) of the crystal's frequency; the setting snaps to the crystal's exact
    frequency when their integer parts match, else it is truncated to an integer. Without a
    crystal nothing changes but the name.
    """

    needs_tick = True
    is_container = True
    is_open = True
    default_layer = Layer.OBJECTS

    def __init__(self, world: World, number: int, frequency: float = DEFAULT_FREQUENCY,
                 press_limit: int = PRESS_LIMIT, tolerance: float = TOLERANCE) -> None:  # fmt: skip
        super().__init__(world, "crystal reactor", "crystal reactor", [material("metal")],
                         variables={FREQ: frequency, "number": number, PRESSES_LEFT: press_limit},
                         sprite="crystal_reactor")  # fmt: skip
        self.number = number
        self.tolerance = tolerance
        self.burnt_out = False
        self._settled: tuple[object, ...] = ()  # `_state()` after the last tick's `on_change`
        self.add_node("root", REACTOR_TEXT)
        for sign, verb in ((1, "Increase"), (-1, "Decrease")):
            for step in STEPS:
                self.add_option("root", f"{verb} frequency by {step} Hz", "root",
                                modify={FREQ: sign * step}, clamp=FREQUENCY_RANGE)  # fmt: skip
        self.add_option("root", "Exit", "exit")
        self.add_node("exit", "Exiting crystal reactor controls.")
        self.on_change()

    @property
    def frequency(self) -> float:
        return float(self.props[FREQ])

    def crystal(self) -> QuantumCrystal | None:
        for obj in self.contents:  # a loop, not next() over a generator: every tick
            if isinstance(obj, QuantumCrystal):
                return obj
        return None

    def _state(self) -> tuple[object, ...]:
        """What `on_change` reads and writes (the setting with its type: 5000.0 shows otherwise than 5000)."""
        crystal = self.crystal()
        setting = self.props[FREQ]
        return (self.burnt_out, crystal, crystal and crystal.resonance_freq, setting, type(setting),
                self.name, self.activated, self.tolerance)  # fmt: skip

    def adjust(self, steps: Mapping[str, Number], clamp: tuple[Number, Number] | None = None) -> None:
        """A frequency button press: it uses one press, or burns the reactor out if none is left."""
        if self.burnt_out:
            return
        if self.props[PRESSES_LEFT] <= 0:
            self.burnt_out = True
            self.on_change()
            return
        self.props[PRESSES_LEFT] -= 1
        super().adjust(steps, clamp)

    def on_change(self) -> None:
        self.text_changed()  # its name and activation show (the tile is redescribed when next seen)
        if self.burnt_out:
            self.activated = False
            self.name = "crystal reactor (burnt out)"
            return
        crystal = self.crystal()
        if crystal is None:
            self.activated = False
            self.name = "crystal reactor (no crystal present)"
            return
        setting = self.props[FREQ]
        target = crystal.resonance_freq
        self.activated = abs(setting - target) < self.tolerance
        self.props[FREQ] = target if int(setting) == int(target) else int(setting)
        self.name = "crystal reactor (activated)" if self.activated else "crystal reactor (uncalibrated)"

    def tick(self) -> None:
        """`on_change`, unless nothing it reads or writes changed since it last ran: then it would
        write the same values again and only report its tile to the watchers (which would
        describe and encode the same tile again, every tick, for every reactor)."""
        state = self._state()
        if state != self._settled:
            self.on_change()
            self._settled = self._state()


class GeneratorPart(WorldObject):
    """A segment of the generator; cores show the share of linked reactors running."""

    default_layer = Layer.FURNITURE
    movable = False
    passable = False
    needs_tick = True

    def __init__(self, world: World, core: bool, reactors: Sequence[CrystalReactor], sprite: str) -> None:
        super().__init__(world, "generator", "generator", [material("metal")], sprite=sprite)
        self.core = core
        self.reactors = list(reactors)
        self._shown: tuple[int, str] | None = None  # (running reactors, the name that gives) once ticked
        self.tick()

    def tick(self) -> None:
        if self.core:
            running = 0
            for reactor in self.reactors:  # a loop, not sum() over a generator: every tick
                if reactor.activated:
                    running += 1
            if (running, self.name) == self._shown:  # the name this count gives, as last tick
                return
            name = f"generator core ({round(100 * running / len(self.reactors))}% activated)"
            self._shown = (running, name)
            if name != self.name:
                self.name = name
                self.text_changed()


def place_generator(world: World, x: int, y: int, cores: int, reactors: Sequence[CrystalReactor]) -> None:
    """Left side, `cores` cores, right side, in a row starting at (x, y)."""
    parts = ["generator_left"] + ["generator_core"] * cores + ["generator_right"]
    for i, sprite in enumerate(parts):
        world.place(GeneratorPart(world, sprite == "generator_core", reactors, sprite), x + i, y)
