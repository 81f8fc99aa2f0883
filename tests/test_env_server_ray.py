"""The env server scaled out on Ray: one actor per N sessions, same results as in-process."""

from __future__ import annotations

import pytest

from discoverylab.agents.oracle import OracleAgent
from discoverylab.server.session import EpisodeSession, ResetRequest

ray = pytest.importorskip("ray", reason="the ray scale-out is optional: pip install 'discoverylab[ray]'")
# One test worker runs the Ray tests one after another (`--dist loadgroup`): each starts a local
# Ray, 10-20 s on a small machine, and two at once on two cores would only slow both.
pytestmark = pytest.mark.xdist_group("ray")


def test_sessions_spread_over_actors_and_match_in_process_play():
    from discoverylab.server.ray_sessions import RaySessions

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        pool = RaySessions(sessions_per_actor=3, num_cpus=0.25)
        sids = [pool.create() for _ in range(7)]
        assert len(pool.actors) == 3 and pool.counts == [3, 3, 1]
        firsts = {sid: pool.reset(sid, task="PickAndPlaceTest", seed=n, structured=True) for n, sid in enumerate(sids)}
        agents = {sid: OracleAgent("PickAndPlaceTest") for sid in sids}
        for sid, agent in agents.items():
            agent.reset(firsts[sid].structured)
        results = dict(firsts)
        while not all(r.done for r in results.values()):
            live = {sid: agents[sid].act(r.structured) for sid, r in results.items() if not r.done}
            results.update(pool.step_many(live))
        assert all(r.scorecard["completedSuccessfully"] for r in results.values())
        local = EpisodeSession()
        first = local.reset(ResetRequest(task="PickAndPlaceTest", seed=0))
        assert first.observation == firsts[sids[0]].observation
        for sid in sids:
            pool.close(sid)
        assert pool.counts == [0, 0, 0]
        pool.shutdown()
    finally:
        ray.shutdown()


def test_attack_sealed_instance_replayed_on_another_actor_is_refused():
    """A sealed test instance plays once per pool: resetting it again in a session that lives on
    another actor (one ledger actor serves them all) is refused as on one server."""
    from discoverylab.server.ray_sessions import RaySessions
    from discoverylab.server.session import AlreadyPlayed

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        pool = RaySessions(sessions_per_actor=1, num_cpus=0.25, key=b"k" * 32)
        first, second = pool.create(), pool.create()
        assert pool.where[first] != pool.where[second]  # two actors
        pool.reset(first, task="PickAndPlaceTest", split="test", index=3)
        with pytest.raises(AlreadyPlayed, match="plays once"):
            pool.reset(second, task="PickAndPlaceTest", split="test", index=3)
        assert pool.reset(second, task="PickAndPlaceTest", split="test", index=4).instance["index"] == 4
        pool.shutdown()
    finally:
        ray.shutdown()


def test_a_discovery_episode_on_the_pool_hands_in_its_answer_sheet():
    """The pool played a discovery task to its end, but had no way to hand in its answer sheet
    (env-serve has POST .../answers): the sheet's grade, and with it the gold, never came."""
    from discoverylab.env import GOLD_KEYS
    from discoverylab.server.ray_sessions import RaySessions
    from discoverylab.server.session import SessionError
    from env_server_kit import oracle_episode

    actions, knowledge, answers = oracle_episode("ArchaeologyDating", "easy", 0)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        pool = RaySessions(sessions_per_actor=1, num_cpus=0.25)
        sid = pool.create()
        result = pool.reset(sid, task="ArchaeologyDating", difficulty="easy", seed=0)
        for action in actions:
            result = pool.step(sid, action)
        assert result.done and result.answer_sheet == pool.answer_sheet(sid) is not None
        assert pool.hand_in(sid, answers, knowledge)["score"] == 1.0
        assert all(key in pool.state(sid)["scorecard"] for key in GOLD_KEYS)
        with pytest.raises(SessionError, match="already handed in"):
            pool.hand_in(sid, answers)
        pool.shutdown()
    finally:
        ray.shutdown()
