"""Level sets for RL: which instances a training env plays when `reset` is given no seed.

Levels are instances of `discoverylab.instances` splits, never a parallel numbering: train on
`train` (seeds 1000 and up), tune on `dev` (seeds 5-999), and report on the sealed `test`
split (the evaluator's key), so a policy is always judged on levels it never saw. `num_levels`
fixes a finite set (indices 0..num_levels-1 of the split), as Procgen's `num_levels` does, to
measure generalisation from few levels.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from discoverylab.instances import PUBLIC_SPLITS, SEALED_SPLIT, InstanceError, make_instance
from discoverylab.world.unpickle import CopiedWhole


class Levels(gym.Wrapper[Any, Any, Any, Any], CopiedWhole):
    """Draw each episode's instance from a split: index uniform in 0..num_levels-1 (or the whole
    split), from the wrapper's own generator (seeded by `reset(seed=...)`). An explicit
    `options["instance"]` still wins.

    Args:
        env: a `DiscoveryWorldEnv` (possibly wrapped).
        split: a public split ("train", "dev", "paper"); the sealed "test" split needs `key`.
        num_levels: how many levels (from index 0); None: the whole split.
        key: the evaluator's key, for `split="test"` only.
    """

    def __init__(self, env: gym.Env[Any, Any], split: str = "train", num_levels: int | None = None,
                 key: bytes | None = None) -> None:  # fmt: skip
        super().__init__(env)
        if split not in PUBLIC_SPLITS and split != SEALED_SPLIT:
            raise InstanceError(f"Unknown split {split!r}; choose one of {', '.join([*PUBLIC_SPLITS, SEALED_SPLIT])}.")
        size = PUBLIC_SPLITS[split][1] if split in PUBLIC_SPLITS else 2**31
        if isinstance(num_levels, np.integer):  # e.g. read from a numpy config array
            num_levels = int(num_levels)
        if num_levels is not None and (isinstance(num_levels, bool) or not isinstance(num_levels, int) or not 1 <= num_levels <= size):
            raise InstanceError(f"num_levels must be a whole number in 1..{size} for the {split} split, not {num_levels!r}.")
        if split == SEALED_SPLIT and key is None:
            raise InstanceError("The test split is sealed: Levels needs the evaluator's key.")
        if split == SEALED_SPLIT:  # checked now, not at the first reset (in a batched env, a worker's)
            if not isinstance(key, (bytes, str)):
                raise InstanceError(f"level_key must be bytes or the key file's text, not {type(key).__name__}.")
            base: Any = env.unwrapped
            make_instance(base.scenario_cls.task_id, base.difficulty, split, 0, key)  # a short key raises
        if split != SEALED_SPLIT and key is not None:  # else dropped: the public split played instead
            raise InstanceError(f"level_key is the evaluator's key for levels='test'; the {split} split is public "
                                "(pass levels='test' to play the sealed split).")  # fmt: skip
        self.split, self.num_levels, self._key = split, num_levels or size, key
        self._rng = np.random.default_rng()
        self.level = -1  # the index of the level being played

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        if options and "instance" in options:
            return self.env.reset(seed=seed, options=options)
        if seed is not None:  # checked: int() would play seed 3.7 as 3 and "3" as 3
            if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
                raise InstanceError(f"A seed is a whole number from 0, not {seed!r}.")
            self._rng = np.random.default_rng(int(seed))
        base: Any = self.env.unwrapped
        self.level = int(self._rng.integers(0, self.num_levels))
        inst = make_instance(base.scenario_cls.task_id, base.difficulty, self.split, self.level, self._key)
        out = self.env.reset(options={**(options or {}), "instance": inst})
        if seed is not None:  # the env played an instance, which leaves its generator alone: seed it
            # from the same seed on a stream of its own (wrappers such as StickyAction draw from it).
            base.np_random = np.random.Generator(np.random.PCG64(np.random.SeedSequence(int(seed), spawn_key=(1,))))
            base._np_random_seed = int(seed)  # gymnasium's `np_random_seed` (its setter records -1)
        return out
