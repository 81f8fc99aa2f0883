"""Measure the embedded offline model: server start, first request, JSON-constrained tokens/s.

Run: .venv/bin/python benchmarks/llm_local_speed.py [--repeats 3]
Prints one JSON object. Figures depend heavily on machine load (the server uses one thread).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from discoverylab.llm import EmbeddedModelServer

SCHEMA = {
    "type": "object",
    "properties": {
        "hypothesis": {"type": "string", "maxLength": 300},
        "experiment": {"type": "string", "pattern": "^[ACGT]{8,20}$"},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
    },
    "required": ["hypothesis", "experiment", "confidence"],
    "additionalProperties": False,
}
MESSAGES = [
    {"role": "system", "content": "You are a scientist studying a hidden property of DNA sequences."},
    {"role": "user", "content": "State a hypothesis, the next sequence to test, and your confidence."},
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    if args.repeats < 1:  # the median of no requests was a traceback after the server had started
        parser.error("--repeats must be at least 1")

    started = time.perf_counter()
    with EmbeddedModelServer() as server:
        start_s = time.perf_counter() - started
        client = server.client(max_tokens=400)
        first = client.complete([{"role": "user", "content": "Say hello."}], max_tokens=16)
        rates, latencies, tokens = [], [], []
        for repeat in range(args.repeats):
            # A different seed per repeat so the prompt cache does not make repeats trivially cheap.
            result = client.complete_structured(MESSAGES, SCHEMA, name="plan", clamp=True, seed=repeat)
            rates.append(result.completion.tokens_per_second)
            latencies.append(result.completion.latency_s)
            tokens.append(result.completion.completion_tokens)
    print(
        json.dumps(
            {
                "server_start_s": round(start_s, 3),
                "first_request_latency_s": round(first.latency_s, 3),
                "json_call_latency_s_median": round(statistics.median(latencies), 3),
                "json_call_completion_tokens": tokens,
                "json_tokens_per_s_median": round(statistics.median(rates), 1),
                "usage": {"requests": client.usage.requests, "total_tokens": client.usage.total_tokens},
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
