"""`discoverylab audit RUN_DIR --eval-key-file K`: the key holder's check of a saved run.

Every record (bench, run or lab run) carries its instance's split, index and commitment; audit
re-derives each commitment from the evaluator's key and fails on any mismatch (a record made with
another key, or edited). Raw-seed records are checked against their public seed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from discoverylab.cli.options import EvalKeyOpt, console, err, fail, split_key


def audit(
    run_dir: Annotated[Path, typer.Argument(help="a folder written by `bench --out` / `run --out`")],
    eval_key_file: EvalKeyOpt = None,
) -> None:
    """The key holder's check of a run (bench, run or lab run): every record's commitment matches its split and index."""
    from discoverylab.bench.records import parse_line
    from discoverylab.bench.rundir import RunDirError, saved_results

    key = split_key("test", eval_key_file)
    assert key is not None
    try:
        path = saved_results(run_dir, "a bench, run or lab run command")
    except RunDirError as exc:
        fail(str(exc))
    checked = sealed = 0
    bad: list[str] = []
    skipped = 0  # torn, not JSON, not an object, not an episode's: said, never silently passed over
    with path.open("rb") as fh:  # one reading: lines a runner appends meanwhile are counted once or not at all
        rows = [parse_line(raw) for raw in fh if raw.strip()]
    for rec in rows:
        if rec is None or not ("task" in rec or "protocol" in rec):
            skipped += 1
            continue
        public = {k: rec.get(k) for k in ("split", "index", "commitment")}
        if public["split"] in (None, "seed"):  # raw seeds: the seed is the instance
            public["split"], public["index"] = "seed", rec.get("seed")
        # Tiny Labs records: the protocol is the task, with no difficulty
        task, difficulty = (str(rec["task"]), str(rec["difficulty"])) if "task" in rec else (str(rec["protocol"]), "")
        checked += 1
        sealed += public["split"] == "test"
        if not _verified(public, task, difficulty, key):
            bad.append(f"{task} {difficulty} {public['split']}#{public['index']} ({rec.get('agent')})")
    for line in bad:
        err.print(f"[red]commitment mismatch:[/red] {escape(line)}", soft_wrap=True)
    if sealed and len(bad) >= sealed:  # not one sealed record matches: the key, not the records, is the suspect
        err.print(f"[red]None of the {sealed} sealed records matches: this is probably another key than the run's"
                  f"{_key_ids(run_dir, key)}.[/red]", soft_wrap=True)  # fmt: skip
    if skipped:
        err.print(f"[yellow]{skipped} line(s) of {escape(str(path))} are no records (torn, not JSON, or not an episode's) and "
                  "were not checked[/yellow]", soft_wrap=True)  # fmt: skip
    console.print(f"{checked - len(bad)} of {checked} records verified against the key")
    if bad or not checked:
        raise typer.Exit(1)


def _verified(public: dict[str, object], task: str, difficulty: str, key: bytes) -> bool:
    from discoverylab.instances import from_seed, verify

    if public["split"] == "seed":
        try:
            inst = from_seed(task, difficulty, int(public["index"]))  # type: ignore[call-overload]
        except (TypeError, ValueError):
            return False
        return inst.commitment == public.get("commitment")
    return verify(public, task, difficulty, key)


def _key_ids(run_dir: Path, key: bytes) -> str:
    """Both fingerprints, when the run's `run.json` names its key's (bench and run do)."""
    import json

    from discoverylab.instances import key_id

    try:
        stored = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))["config"]["eval_key_id"]
    except (OSError, ValueError, KeyError, TypeError):
        return f" (this key's eval_key_id is {key_id(key)})"
    return f" (run.json: eval_key_id {stored}; this key's: {key_id(key)})"
