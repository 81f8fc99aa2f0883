"""The suite's xdist groups hold under `make test` (`-n 2 --dist loadgroup`).

pytest-xdist's loadgroup scheduler reads a test's group from an `@group` suffix of its node id;
under pytest >= 9.2 that suffix was silently lost (pytest-xdist#1386) and every group was split
over the workers (two model servers, a module fixture built twice) until `conftest.py`'s
`_name_its_xdist_group` wrote it where pytest reads it. This checks the suffix is there, so a
new pytest or pytest-xdist that breaks grouping again fails here instead of slowing the suite.
"""

from __future__ import annotations

import os

import pytest


@pytest.mark.xdist_group("grouping_check")
def test_a_grouped_test_carries_its_group_in_its_node_id_under_loadgroup(request: pytest.FixtureRequest) -> None:
    if not os.environ.get("PYTEST_XDIST_WORKER") or not getattr(request.config.option, "loadgroup", False):
        pytest.skip("grouping applies under pytest-xdist's --dist loadgroup (make test: -n 2)")
    assert request.node.nodeid.endswith("@grouping_check"), request.node.nodeid


@pytest.mark.llm
def test_an_llm_test_is_grouped_with_the_others_so_one_model_server_runs(request: pytest.FixtureRequest) -> None:
    if not os.environ.get("PYTEST_XDIST_WORKER") or not getattr(request.config.option, "loadgroup", False):
        pytest.skip("grouping applies under pytest-xdist's --dist loadgroup (make test: -n 2)")
    assert request.node.nodeid.endswith("@llm"), request.node.nodeid
