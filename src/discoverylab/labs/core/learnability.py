"""Can a lab's hidden property be learned at all? Checks viii and ix of `verify` (issue #22).

viii, learnability: with the protocol's budget of labelled queries (rounds x batch, half uniform,
half from the lab's sampler across the range), some learner of a fixed panel (nearest neighbour on
the raw objects; ridge regression and 5-nearest neighbours on generic features plus the lab's public
vocabulary of families; ridge on the vocabulary alone) must predict fresh objects clearly better than
the best constant. A property that is noise to every learner (a hash of the sequence, say) cannot be
discovered by any agent, however good, so the lab is refused.

ix, determinism across processes: a fresh Python process (with a different hash seed) builds the lab
from the spec and must compute byte-identical values on the same objects; Python's salted `hash()`
or any process-dependent state fails it.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from typing import Any

import numpy as np

MIN_SKILL = 0.25
"""Held-out skill 1 - MAE/MAE(best constant) the best learner must reach."""
N_TEST = 500
CHILD_TIMEOUT_S = 120.0


def _features(codes: np.ndarray, others: np.ndarray, q: int) -> np.ndarray:
    """Position one-hot, composition, adjacent-pair frequencies, and the lab's other properties."""
    n, length = codes.shape
    onehot = np.zeros((n, length * q))
    onehot[np.repeat(np.arange(n), length), (np.arange(length) * q)[None, :].repeat(n, 0).ravel() + codes.ravel()] = 1
    comp = np.stack([(codes == a).mean(axis=1) for a in range(q)], axis=1)
    pair_codes = codes[:, :-1].astype(np.int64) * q + codes[:, 1:]
    pairs = np.stack([(pair_codes == p).mean(axis=1) for p in range(q * q)], axis=1) if length > 1 else \
        np.zeros((n, 0))
    return np.hstack([onehot, comp, pairs, others])


def _ridge(xtr: np.ndarray, ytr: np.ndarray, xte: np.ndarray) -> np.ndarray:
    """Ridge regression, penalty chosen by leave-one-out error (closed form)."""
    mu, sd = xtr.mean(axis=0), xtr.std(axis=0) + 1e-9
    a, b = (xtr - mu) / sd, (xte - mu) / sd
    ym = ytr.mean()
    best: tuple[float, np.ndarray] | None = None
    for alpha in (0.01, 0.1, 1.0, 10.0, 100.0):
        gram = a @ a.T + alpha * np.eye(len(a))
        inv = np.linalg.inv(gram)
        hat = a @ a.T @ inv
        resid = (ytr - ym) - hat @ (ytr - ym)
        loo = float(np.mean((resid / np.maximum(1.0 - np.diag(hat), 1e-6)) ** 2))
        if best is None or loo < best[0]:
            best = (loo, b @ a.T @ inv @ (ytr - ym) + ym)
    assert best is not None
    return best[1]


def _knn(xtr: np.ndarray, ytr: np.ndarray, xte: np.ndarray, k: int, metric: str) -> np.ndarray:
    if metric == "hamming":
        dist = (xte[:, None, :] != xtr[None, :, :]).sum(axis=2).astype(np.float64)
    else:
        mu, sd = xtr.mean(axis=0), xtr.std(axis=0) + 1e-9
        a, b = (xtr - mu) / sd, (xte - mu) / sd
        dist = ((b[:, None, :] - a[None, :, :]) ** 2).sum(axis=2)
    idx = np.argsort(dist, axis=1, kind="stable")[:, :k]
    return np.asarray(ytr[idx].mean(axis=1))


def _queries(lab: Any, hidden: str, n: int, rng: np.random.Generator) -> np.ndarray:
    """What an agent can ask for with `n` queries: half uniform, half from the lab's sampler at
    targets spread over the property's range (the protocol's SAMPLE)."""
    prop = lab.properties[hidden]
    lo, hi = prop.feasible_range(lab.space)
    n_targeted = n // 2
    parts = [lab.space.random_batch(rng, n - n_targeted)]
    targets = np.linspace(lo, hi, max(1, n_targeted // 5))
    for target in targets:
        batch = lab.sampler.sample({hidden: (float(target), 0.1)}, 5, rng)
        parts.append(lab.space.encode([s.obj for s in batch.samples]))
    return np.concatenate(parts)[:n]


def learnability(lab: Any, hidden: str, n_train: int, rng: np.random.Generator) -> dict[str, Any]:
    """Held-out skill of each learner of the panel trained on `n_train` queries of the hidden property.

    Features: position one-hot, composition, adjacent pairs and the lab's public vocabulary
    (`lab.vocabulary(batch)`, the families at default parameters), never the spec's own properties
    (the hidden one is among them)."""
    prop = lab.properties[hidden]
    q = len(getattr(lab.space, "alphabet", "")) or 4
    vocab = getattr(lab, "vocabulary", None)
    xtr, xte = _queries(lab, hidden, n_train, rng), _queries(lab, hidden, N_TEST, rng)
    ytr, yte = prop.batch(xtr), prop.batch(xte)

    def feats(x: np.ndarray) -> np.ndarray:
        return _features(x, vocab(x) if callable(vocab) else np.zeros((len(x), 0)), q)

    ftr, fte = feats(xtr), feats(xte)
    baseline = float(np.abs(yte - np.median(ytr)).mean())
    preds = {"nearest_neighbour": _knn(xtr, ytr, xte, 1, "hamming"), "ridge": _ridge(ftr, ytr, fte),
             "knn5_features": _knn(ftr, ytr, fte, 5, "euclidean")}
    if callable(vocab):
        preds["vocabulary_ridge"] = _ridge(vocab(xtr), ytr, vocab(xte))
    skills = {name: (max(0.0, 1.0 - float(np.abs(p - yte).mean()) / baseline) if baseline > 1e-12 else 0.0)
              for name, p in preds.items()}
    best = max(skills, key=lambda k: skills[k])
    return {"skills": skills, "best": best, "best_skill": skills[best], "n_train": n_train}


# ---------------------------------------------------------------------- determinism across processes
def _values_digest(spec_json: str, seed: int, n: int) -> dict[str, str]:
    """sha256 of every property's values on `n` objects drawn from a fixed stream."""
    from discoverylab.labs.core.lab import build_lab
    from discoverylab.labs.core.spec import LabSpec

    lab = build_lab(LabSpec.model_validate_json(spec_json), seed)
    batch = lab.space.random_batch(np.random.default_rng(np.random.SeedSequence([seed, 0xD37E])), n)
    return {name: hashlib.sha256(np.ascontiguousarray(p.batch(batch), dtype=np.float64).tobytes()).hexdigest()
            for name, p in lab.properties.items()}


_CHILD = """
import importlib, json, sys
payload = json.loads(sys.stdin.read())
sys.path[:0] = payload["path"]
for module in payload["modules"]:
    importlib.import_module(module)
from discoverylab.labs.core.learnability import _values_digest
sys.stdout.write(json.dumps(_values_digest(payload["spec"], payload["seed"], payload["n"])))
"""


def cross_process_digests(spec_json: str, seed: int, modules: list[str], n: int = 200) -> tuple[dict[str, str],
                                                                                                 dict[str, str]]:
    """(this process's digests, a fresh process's digests); the child runs with another hash seed."""
    here = _values_digest(spec_json, seed, n)
    mine = os.environ.get("PYTHONHASHSEED", "")
    env = {**os.environ, "PYTHONHASHSEED": str(int(mine) + 1) if mine.isdigit() else "0"}
    payload = json.dumps({"spec": spec_json, "seed": seed, "n": n, "modules": modules,
                          "path": [p for p in sys.path if p]})
    out = subprocess.run([sys.executable, "-c", _CHILD], input=payload, capture_output=True, text=True,
                         timeout=CHILD_TIMEOUT_S, env=env, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"child process failed: {out.stderr.strip().splitlines()[-1:]}")
    there: dict[str, str] = json.loads(out.stdout.strip().splitlines()[-1])
    return here, there
