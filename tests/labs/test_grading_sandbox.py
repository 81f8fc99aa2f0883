"""The predictor sandbox: good programs run, malicious ones are refused, runaway ones are killed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest

from discoverylab.labs.sequence import sandbox
from discoverylab.labs.sequence.grading import grade_hidden_property
from discoverylab.labs.sequence.heldout import HeldOutSet
from discoverylab.labs.sequence.parsing import FinalAnswer, Hypothesis
from discoverylab.labs.sequence.properties import DEFAULT_PARAMS, compute
from discoverylab.labs.sequence.sandbox import ProgramRejected, check_program, run_predictor

GC = "import math\nfrom collections import Counter\ndef f(s):\n    c = Counter(s)\n    return (c['G'] + c['C']) / len(s)\n"


def test_good_program_evaluates_every_input() -> None:
    result = run_predictor(GC, ["GGCC", "AAAA", "ACGT"])
    assert result.ok and result.values == [1.0, 0.0, 0.5]


@pytest.mark.parametrize(
    "code",
    [
        "import os\ndef f(s): return 0",
        "import subprocess\ndef f(s): return 0",
        "from socket import socket\ndef f(s): return 0",
        "def f(s): return open('/etc/passwd').read()",
        "def f(s): return eval('1')",
        "def f(s): return ().__class__.__bases__",
        "def f(s): return getattr(s, 'upper')()",
        "def f(s):\n    g = (x for x in [1])\n    return g.gi_frame.f_back",
        "def g(s): return 1\ndef h(s): return 2",  # no f and ambiguous
        "def f(s) return 1",
    ],
)
def test_static_check_refuses_dangerous_or_broken_programs(code: str) -> None:
    with pytest.raises(ProgramRejected):
        check_program(code)
    result = run_predictor(code, ["A"])
    assert result.rejected and result.values == [None]


def test_module_proxies_hide_other_modules() -> None:
    # statistics imports sys; the proxy must not hand it to the predictor.
    code = "import statistics\ndef f(s):\n    return len(statistics.sys.modules)"
    result = run_predictor(code, ["A"])
    assert result.values == [None] and result.call_errors == 1


def test_looping_program_is_killed_and_keeps_earlier_results() -> None:
    code = "def f(s):\n    if s == 'C':\n        while True:\n            pass\n    return 0.25"
    result = run_predictor(code, ["A", "A", "C", "A"], min_seconds=0.5)
    assert result.values == [0.25, 0.25, None, None]
    assert not result.ok and ("time" in (result.error or ""))


def test_memory_hog_is_stopped() -> None:
    code = "def f(s):\n    x = [0] * (10 ** 9)\n    return 0.5"
    result = run_predictor(code, ["A", "C"], memory_mb=128)
    assert result.values == [None, None] and not result.ok


def test_per_call_errors_and_non_numbers_become_none() -> None:
    code = "def f(s):\n    if s == 'A':\n        return 1 / 0\n    return 'x' if s == 'C' else float('nan')"
    result = run_predictor(code, ["A", "C", "G"])
    assert result.ok and result.values == [None, None, None] and result.call_errors == 2


def test_first_call_error_is_reported_without_memory_addresses() -> None:
    code = "def f(s):\n    return {}[f] if s == 'A' else 0.5"
    runs = [run_predictor(code, ["A", "C"]) for _ in range(2)]
    assert runs[0].values == [None, 0.5] and runs[0].call_errors == 1
    assert runs[0].details["call_error"] == runs[1].details["call_error"] == "KeyError: <function f at 0x?>"


def test_the_rules_prompts_state_are_the_rules_the_sandbox_keeps() -> None:
    """`PROGRAM_RULES` (shown to models) names what works and what is refused: check both ways."""
    from discoverylab.labs.llm_formats import DEFAULT_LIMITS, hidden_property_format
    from discoverylab.labs.sequence.sandbox_policy import PROGRAM_RULES

    works = ("import math\nimport statistics\nW = {c: i for i, c in enumerate('ACGT')}\n"
             "def f(s):\n    g = lambda c: c in 'GC'\n    try:\n        x = sum(1 for c in s if g(c)) / len(s)\n"
             "    except ZeroDivisionError:\n        x = 0.0\n    return min(1.0, x + 0 * math.tanh(W['A']))\n")  # fmt: skip
    assert run_predictor(works, ["GGCA", ""]).values == [0.75, 0.0]
    refused = {"classes": "class A:\n    pass\n", "`with`": "def g():\n    with g():\n        pass\n",
               "`match`": "def g(s):\n    match s:\n        case 1:\n            pass\n",
               "names starting with `_`": "_x = 1\n", "imports": "import os\n"}  # fmt: skip
    for rule, code in refused.items():
        assert rule.strip("`") in PROGRAM_RULES or rule == "imports"
        with pytest.raises(ProgramRejected):
            check_program(code + "def f(s):\n    return 0.5\n")
    fmt = hidden_property_format(None, '{"hypotheses": []}', DEFAULT_LIMITS)  # the final-answer format
    assert PROGRAM_RULES in fmt.instructions


_KILLED_GRADER = """
import sys
from discoverylab.labs.sequence.sandbox import run_predictor
run_predictor("def f(s):\\n    while True:\\n        pass", ["A"], min_seconds=60)
"""


def test_the_root_of_a_killed_grader_is_removed_by_the_next_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A grader SIGKILLed mid-run never removes its child's root (the runner's kill tests left one
    or two per suite run in /tmp); the next `run_predictor` does, once it is a minute old. A live
    grader's root and a dead one's fresh root stay."""
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)  # gettempdir() reads TMPDIR again
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    grader = subprocess.Popen([sys.executable, "-c", _KILLED_GRADER], env=env, start_new_session=True)
    deadline = time.monotonic() + 30
    while not list(tmp_path.glob(f"discoverylab-sandbox-{grader.pid}-*")) and time.monotonic() < deadline:
        time.sleep(0.05)
    (killed_root,) = tmp_path.glob(f"discoverylab-sandbox-{grader.pid}-*")
    os.killpg(grader.pid, signal.SIGKILL)  # the grader and its child
    grader.wait()
    live_root = tmp_path / f"discoverylab-sandbox-{os.getppid()}-live"  # a process that exists
    fresh_root = tmp_path / f"discoverylab-sandbox-{grader.pid}-fresh"  # dead, but under a minute old
    live_root.mkdir()
    fresh_root.mkdir()
    old = time.time() - 120
    for path in (killed_root, live_root):
        os.utime(path, (old, old))
    assert run_predictor(GC, ["GGCC"]).values == [1.0]
    assert not killed_root.exists() and live_root.exists() and fresh_root.exists()
    assert not list(tmp_path.glob(f"discoverylab-sandbox-{os.getpid()}-*"))  # and its own root went as before


# ---- the sweep after the child ends: only the sandbox's own processes, never a pid used again -----------

def test_the_sweep_runs_while_the_childs_pid_is_still_held(monkeypatch: pytest.MonkeyPatch) -> None:
    """The sweep kills what is in the child's session, runs as its uid (UID_BASE + its pid) or is its
    namespace's PID 1. It once ran after the child was reaped, when its pid, and so that session id and
    uid, could already belong to a new process (another grader's sandbox, say). Now the child is dead but
    unreaped (a zombie) for the whole sweep, so no other process can hold its number."""
    seen: list[str] = []
    sweep = sandbox._sweep

    def spy(session: int, *args: object, **kwargs: object) -> int:
        try:
            stat = Path(f"/proc/{session}/stat").read_text()
            seen.append(stat.rsplit(") ", 1)[1][0])
        except OSError:
            seen.append("reaped")
        return sweep(session, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(sandbox, "_sweep", spy)
    assert run_predictor(GC, ["GGCC"]).values == [1.0]
    assert run_predictor("def f(s):\n    while True:\n        pass", ["A"], min_seconds=0.5).error  # killed mid-run
    assert seen == ["Z", "Z"]


def _foreign_namespace_init() -> tuple[subprocess.Popen[bytes], int]:
    """A process that is PID 1 of a PID namespace of its own, but no child of any sandbox: what a reused
    init pid could name (another grader's sandbox child, which runs as its namespace's PID 1)."""
    prefix = ["unshare", "--pid", "--fork"] if os.geteuid() == 0 else ["unshare", "--user", "--map-root-user", "--pid", "--fork"]
    try:
        holder = subprocess.Popen([*prefix, "sleep", "60"], start_new_session=True)
    except OSError:
        pytest.skip("needs util-linux unshare")
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        children = Path(f"/proc/{holder.pid}/task/{holder.pid}/children").read_text().split()
        if children:
            status = Path(f"/proc/{children[0]}/status").read_text()
            if status.split("NSpid:")[1].split("\n")[0].split()[-1] == "1":
                return holder, int(children[0])
        if holder.poll() is not None:
            pytest.skip("cannot make a PID namespace here")
        time.sleep(0.02)
    holder.kill()
    pytest.skip("the namespace's PID 1 never showed")


def test_a_pid_1_of_another_namespace_is_never_taken_for_the_sandboxs(monkeypatch: pytest.MonkeyPatch) -> None:
    """The not-root child reports its PID 1's pid, and the sweep kills the process with that pid if it is
    PID 1 of a namespace. Were that PID 1 gone and its number used again by another namespace's PID 1, the
    sweep killed that one. Now it kills only a process it has pinned (a pidfd) while it was the child's
    go-between's own child; here the reported pid names a stranger, which lives on."""
    holder, stranger = _foreign_namespace_init()
    try:
        monkeypatch.setattr(sandbox, "_namespace_init", lambda data: stranger)
        result = run_predictor(GC, ["GGCC"])
        time.sleep(0.1)
        try:
            state = Path(f"/proc/{stranger}/stat").read_text().rsplit(") ", 1)[1][0]
        except OSError:
            state = "gone"
        assert state not in ("Z", "gone") and result.values == [1.0] and result.survivors == 0
    finally:
        os.killpg(holder.pid, signal.SIGKILL)
        holder.wait()


# ---- the program's compile-time warnings: the agent's to read, not the grader's terminal's --------------

WARNED = "def f(s):\n    pattern = '\\d'\n    return 1.0 if len(s) is 1 else 0.5\n"  # an invalid escape, `is` 1

_GRADER_STDERR = """
import json, sys
from discoverylab.labs.sequence.sandbox import run_predictor
r = run_predictor(sys.argv[1], ["A", "AC"])
print(json.dumps([r.values, r.details.get("compile_warnings")]))
"""


def test_a_programs_syntax_warnings_reach_its_result_not_the_graders_stderr() -> None:
    """`len(s) is 1` and an invalid escape compile with warnings; the grader compiles each program to
    check it, and the warnings once printed on the grader's own stderr (a host's terminal, a server's
    log), while the agent that wrote them never saw them. Now the grader's compile is silent and the
    child's are reported in the result, for feedback, with the program's line numbers."""
    src = str(Path(sandbox.__file__).resolve().parents[3])
    done = subprocess.run([sys.executable, "-c", _GRADER_STDERR, WARNED], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": src})
    assert done.returncode == 0 and "Warning" not in done.stderr, done.stderr
    values, warned = json.loads(done.stdout)
    assert values == [1.0, 0.5]
    assert 'line 3: SyntaxWarning: "is" with a literal' in warned and "line 2:" in warned and "\\d" in warned


@pytest.mark.filterwarnings("ignore::Warning:<predictor>")  # (pytest's own filters come before the grader's)
def test_the_grade_shows_a_programs_warnings_and_only_then() -> None:
    rng = np.random.default_rng(3)
    seqs = ["".join(rng.choice(list("ACGT"), size=8)) for _ in range(20)]
    truth = [compute("gc_content", s, DEFAULT_PARAMS) for s in seqs]
    answer = FinalAnswer(hypotheses=[Hypothesis(rank=1, description="warned", python=WARNED),
                                     Hypothesis(rank=2, description="clean", python=GC)],
                         predictions={}, structured=True)
    score = grade_hidden_property(answer, HeldOutSet(seqs, truth, ["random"] * 20), [], quantum=0.1,
                                  truth={"property": "gc_content"})
    warned, clean = score.details["hypotheses"]
    assert '"is" with a literal' in warned["program_compile_warnings"]
    assert "program_compile_warnings" not in clean  # (a clean program's entry is as it was)
