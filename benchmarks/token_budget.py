"""How far the agents' token budgets were off: 4 characters a token and our estimate vs the real count.

For every discovery task at its first difficulty (seed 0), a seeded random agent plays 10 steps;
each observation in the language-model form (`lm_observation`) and each ReAct history entry
(thought, action, result) is counted three ways: characters / 4 (the old budget count),
`agents.tokens.estimate_tokens` (the fallback when no tokenizer is reachable) and the embedded
SmolLM2 tokenizer through llama.cpp's /tokenize route (what `TokenCounter` uses for that model).

    PYTHONPATH=src .venv/bin/python benchmarks/token_budget.py
"""

from __future__ import annotations

import argparse
import json

from discoverylab.agents.random_agent import RandomAgent
from discoverylab.agents.tokens import TokenCounter, estimate_tokens
from discoverylab.env import DiscoveryWorldEnv
from discoverylab.llm import EmbeddedModelServer
from discoverylab.scenarios.registry import all_tasks
from discoverylab.world.lm_observation import lm_observation


def main() -> None:
    totals = {"chars/4": 0, "estimate": 0, "real": 0}
    worst_estimate = 10.0
    with EmbeddedModelServer() as server:
        counter = TokenCounter(None, server.base_url)
        for tid, cls in all_tasks().items():
            if cls.suite != "discovery":
                continue
            env = DiscoveryWorldEnv(tid, cls.difficulties[0])
            _, info = env.reset(seed=0)
            agent = RandomAgent(0)
            agent.reset(info["observation"])
            texts = []
            for _ in range(10):
                obs = info["observation"]
                action = agent.act(obs)
                _, _, terminated, truncated, info = env.step(action)
                result = info["observation"]["lastActionMessage"][:600]
                texts += [lm_observation(obs), f"Thought: (none)\nAction: {json.dumps(action)}\nObservation: {result}"]
                if terminated or truncated:
                    break
            real = sum(counter.count(t) for t in texts)
            four = sum(len(t) // 4 + 1 for t in texts)
            est = sum(estimate_tokens(t) for t in texts)
            worst_estimate = min(worst_estimate, *(estimate_tokens(t) / max(1, counter.count(t)) for t in texts))
            totals["chars/4"] += four
            totals["estimate"] += est
            totals["real"] += real
            print(f"{tid:24s} real {real:6d}  chars/4 {four:6d} ({real / four:.2f}x under)  estimate {est:6d} ({est / real:.2f}x)")
    print(f"{'all':24s} real {totals['real']:6d}  chars/4 {totals['chars/4']:6d} ({totals['real'] / totals['chars/4']:.2f}x under)"
          f"  estimate {totals['estimate']:6d} ({totals['estimate'] / totals['real']:.2f}x); lowest estimate/real of one text "
          f"{worst_estimate:.2f} (tokenizer: {counter.kind})")


if __name__ == "__main__":
    # No options; a parser all the same, so `--help` explains instead of running the whole benchmark.
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    main()
