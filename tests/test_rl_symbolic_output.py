"""The symbolic observation's arrays: each a plain, writable, C-contiguous uint8 array over
its step's own buffer, a field view of one structured array of `_record_of`'s record (`encode`
returns `whole[name]` per key; an `item()` call for all keys was measured dearer and dropped)."""

from __future__ import annotations

import numpy as np
import pytest

from discoverylab.rl import make_rl_env


@pytest.mark.parametrize("notes", [False, True])
def test_each_steps_arrays_are_field_views_of_their_own_buffer(notes: bool) -> None:
    env = make_rl_env("PickAndPlaceTest", notes=notes)
    obs, _ = env.reset(seed=0)
    space = env.observation_space
    earlier = {k: v.copy() for k, v in obs.items()}
    later, *_ = env.step(0)
    assert list(obs) == list(later) and sorted(obs) == sorted(space.spaces)
    for key, value in obs.items():
        assert type(value) is np.ndarray and value.dtype == np.uint8 and value.shape == space[key].shape
        assert value.flags.c_contiguous and value.flags.writeable and not value.flags.owndata
        whole = value.base
        assert whole is not None and whole.shape == () and whole.dtype.names == tuple(obs)
        field = whole[key]  # what `encode` returns: the same view
        assert field.flags == value.flags and field.strides == value.strides
        assert field.__array_interface__ == value.__array_interface__
        assert not np.shares_memory(value, later[key])  # a later step writes elsewhere
        np.testing.assert_array_equal(value, earlier[key])
    env.close()
