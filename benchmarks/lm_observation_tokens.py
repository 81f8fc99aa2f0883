"""Tokens per observation: the JSON observation vs the language-model form (lm_observation).

For every task and difficulty (seed 0), a seeded random agent plays 30 steps; every 5th
observation is measured in three forms:
  * json: the env's text observation (compact JSON, with availableActions and teleportLocations);
  * original: the same without those two keys (the original's `ui` keys);
  * lm: `lm_observation(obs)` (instructions, action list and task text are sent once per episode).
Tokens are counted with the SmolLM2 tokenizer through the embedded llama.cpp server's /tokenize
route (offline); the one-time instructions are reported separately.

    .venv/bin/python benchmarks/lm_observation_tokens.py
"""

from __future__ import annotations

import argparse
import json
import statistics
import urllib.request

from discoverylab.agents.random_agent import RandomAgent
from discoverylab.env import DiscoveryWorldEnv
from discoverylab.llm import EmbeddedModelServer
from discoverylab.scenarios.registry import all_tasks
from discoverylab.world.lm_observation import lm_instructions, lm_observation


def count_tokens(address: str, text: str) -> int:
    request = urllib.request.Request(f"{address}/tokenize", data=json.dumps({"content": text}).encode(),
                                     headers={"content-type": "application/json"})  # fmt: skip
    with urllib.request.urlopen(request, timeout=60) as response:
        return len(json.load(response)["tokens"])


def main() -> None:
    rows = []
    with EmbeddedModelServer() as server:
        address = server.base_url.removesuffix("/v1")
        for tid, cls in all_tasks().items():
            for diff in cls.difficulties:
                env = DiscoveryWorldEnv(tid, diff)
                text, info = env.reset(seed=0)
                agent = RandomAgent(0)
                sizes: dict[str, list[int]] = {"json": [], "original": [], "lm": [], "json_kb": [], "original_kb": []}
                for step in range(31):
                    obs = info["observation"]
                    if step % 5 == 0:
                        original = json.dumps({k: v for k, v in obs.items() if k not in ("availableActions", "teleportLocations")},
                                              separators=(",", ":"))  # fmt: skip
                        sizes["json"].append(count_tokens(address, text))
                        sizes["original"].append(count_tokens(address, original))
                        sizes["lm"].append(count_tokens(address, lm_observation(obs)))
                        sizes["json_kb"].append(len(text))
                        sizes["original_kb"].append(len(original))
                    text, _, _, _, info = env.step(agent.act(obs))
                first = env.reset(seed=0)[1]["observation"]
                once = count_tokens(address, lm_instructions(True, first.get("teleportLocations")))
                row = {k: statistics.mean(v) for k, v in sizes.items()}
                rows.append((tid, diff, row, once))
                print(f"| {tid} | {diff} | {row['original_kb'] / 1000:.1f} | {row['json']:.0f} | {row['original']:.0f} | "
                      f"{row['lm']:.0f} | {row['lm'] / row['original']:.0%} | {row['lm'] / row['json']:.0%} | {once} |", flush=True)  # fmt: skip
    lm_vs_original = [r[2]["lm"] / r[2]["original"] for r in rows]
    lm_vs_json = [r[2]["lm"] / r[2]["json"] for r in rows]
    print(f"lm/original: mean {statistics.mean(lm_vs_original):.0%}, max {max(lm_vs_original):.0%}; "
          f"lm/json: mean {statistics.mean(lm_vs_json):.0%}, max {max(lm_vs_json):.0%}")  # fmt: skip


if __name__ == "__main__":
    # No options; a parser all the same, so `--help` explains instead of running the whole benchmark.
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    main()
