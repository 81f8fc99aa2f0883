"""Escape attempts on the predictor sandbox: every one must fail and leave files and processes as they were.

Each hostile program returns 1.0 only if its trick worked (or touches a canary file outside the
sandbox); the test asserts no 1.0, an untouched canary, no new file and no process of the sandbox alive.
The process layer is also attacked directly (`sandbox_child.harden` in a throw-away interpreter, then
fork, files, sockets, signals, setuid) so it holds even if the language layer had a hole.
"""

from __future__ import annotations

import errno
import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from discoverylab.labs.sequence import sandbox_child
from discoverylab.labs.sequence.grading import grade_hidden_property
from discoverylab.labs.sequence.heldout import HeldOutSet
from discoverylab.labs.sequence.parsing import FinalAnswer, Hypothesis
from discoverylab.labs.sequence.programs import reference_program
from discoverylab.labs.sequence.properties import (
    DEFAULT_PARAMS,
    EXTRA_PROPERTY_NAMES,
    PROPERTY_NAMES,
    compute,
)
from discoverylab.labs.sequence.sandbox import SandboxResult, run_predictor

IS_ROOT = os.geteuid() == 0
SECRET = "canary-secret-7f3a"


@pytest.fixture
def canary(tmp_path: Path) -> Path:
    path = tmp_path / "canary.txt"
    path.write_text(SECRET)
    return path


def _process_alive(result: SandboxResult) -> list[int]:
    """Independent scan: processes in the child's session or running as the sandbox uid."""
    session = int(result.details.get("child_pid", "-1"))
    uid = result.details.get("uid")
    alive = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            status = (entry / "status").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        uids = next(line.split()[1:] for line in status.splitlines() if line.startswith("Uid:"))
        if fields[0] != "Z" and (int(fields[3]) == session or (uid is not None and uid in uids and uid != "0")):
            alive.append(int(entry.name))
    return alive


def _attack(code: str, canary: Path, inputs: tuple[str, ...] = ("ACGT", "GGCC"), memory_mb: int = 256,
            ) -> SandboxResult:
    before = sorted(p.name for p in canary.parent.iterdir())
    stamp = canary.stat().st_mtime_ns
    result = run_predictor(code.replace("CANARY", str(canary)), list(inputs), min_seconds=1.0,
                           memory_mb=memory_mb)
    assert 1.0 not in result.values, f"escape succeeded: {result}"
    assert canary.read_text() == SECRET and canary.stat().st_mtime_ns == stamp
    assert sorted(p.name for p in canary.parent.iterdir()) == before
    assert result.survivors == 0 and _process_alive(result) == []
    assert "leftover_files" not in result.details
    return result


ISSUE_EXPLOIT = """import functools, collections
def g(): pass
def f(s):
    functools.update_wrapper(g, collections.namedtuple, assigned=(), updated=('__globals__',))
    posix = _sys.modules['posix']
    fd = posix.open('CANARY', 0)
    posix.unlink('CANARY')
    return 1.0
"""

GUARD_WORDS = ("is not allowed", "is not available in the sandbox", "cannot modify", "cannot import name")

# name -> program; each returns 1.0 (or damages the canary) only if its trick works.
ESCAPES = {
    "update_wrapper_globals_issue_exploit": ISSUE_EXPLOIT,
    "update_wrapper_without_underscores": "import functools, collections\ndef g(): pass\ndef f(s):\n"
        "    functools.update_wrapper(g, collections.namedtuple, assigned=(), updated=('__globals__',))\n"
        "    return 1.0",
    "wraps_decorator_copies_globals": "import functools, collections\n"
        "@functools.wraps(collections.namedtuple, assigned=(), updated=('__globals__',))\n"
        "def g(): pass\ndef f(s):\n    return 1.0",
    "from_functools_import_update_wrapper": "from functools import update_wrapper\ndef f(s):\n    return 1.0",
    "subclasses_walk": "def f(s):\n    for c in ().__class__.__bases__[0].__subclasses__():\n"
        "        if c.__name__ == 'FileIO':\n            return 1.0\n    return 0.0",
    "subclasses_walk_via_format": "def f(s):\n    t = '{0.__class__.__bases__[0].__subclasses__}'.format(())\n"
        "    return 1.0 if 'built-in' in t else 0.0",
    "subclasses_walk_via_mro": "def f(s):\n    return 1.0 if dict.mro() else 0.0",
    "mro_via_format": "def f(s):\n    return 1.0 if 'object' in '{0.mro}'.format(dict) else 0.0",
    "dunder_built_at_run_time": "def f(s):\n    n = '_' * 2 + 'class' + '_' * 2\n"
        "    return 1.0 if 'str' in ('{0.' + n + '}').format(s) else 0.0",
    "gi_frame_f_globals_walk": "def f(s):\n    g = (x for x in [1])\n"
        "    return 1.0 if g.gi_frame.f_back.f_globals else 0.0",
    "gi_frame_via_format": "def f(s):\n    g = (x for x in [1])\n"
        "    return 1.0 if 'frame' in '{0.gi_frame.f_globals}'.format(g) else 0.0",
    "gi_code_via_format_map": "def f(s):\n    g = (x for x in [1])\n"
        "    return 1.0 if '{g.gi_code.co_consts}'.format_map({'g': g}) else 0.0",
    "function_globals": "def f(s):\n    return 1.0 if f.__globals__ else 0.0",
    "function_globals_via_format": "def f(s):\n    return 1.0 if 'builtins' in '{0.__globals__}'.format(f) else 0.0",
    "traceback_frame_via_format": "def f(s):\n    try:\n        1 / 0\n    except Exception as e:\n"
        "        return 1.0 if '{0.__traceback__.tb_frame.f_globals}'.format(e) else 0.0",
    "exception_obj_attribute": "def f(s):\n    try:\n        s.nope\n    except AttributeError as e:\n"
        "        return 1.0 if e.obj == s else 0.0",
    "unbound_str_format": "def f(s):\n    return 1.0 if 'str' in str.format('{0.__class__}', s) else 0.0",
    "format_spec_nested_attribute": "def f(s):\n    return 1.0 if '{0:{1.__class__}}'.format('', s) else 0.0",
    "fstring_dunder": "def f(s):\n    return 1.0 if f'{s.__class__}' else 0.0",
    "import_through_builtins": "def f(s):\n    __builtins__['__import__']('posix').unlink('CANARY')\n    return 1.0",
    "dunder_import_call": "def f(s):\n    __import__('posix').unlink('CANARY')\n    return 1.0",
    "import_os": "import os\ndef f(s):\n    os.unlink('CANARY')\n    return 1.0",
    "import_importlib": "import importlib\ndef f(s):\n    importlib.import_module('os').unlink('CANARY')\n    return 1.0",
    "statistics_leaks_sys": "import statistics\ndef f(s):\n    return 1.0 if statistics.sys else 0.0",
    "module_proxy_overwrite": "import math\ndef f(s):\n    math.sqrt = len\n    return 1.0",
    "decorator_returns_globals": "@lambda fn: fn.__globals__\ndef g(): pass\ndef f(s):\n    return 1.0",
    "decorator_lru_cache_wrapped": "import functools, collections\n"
        "w = functools.lru_cache()(collections.Counter)\ndef f(s):\n"
        "    return 1.0 if 'module' in '{0.__wrapped__.__init__.__globals__}'.format(w) else 0.0",
    "partial_func_globals": "import functools, statistics\np = functools.partial(statistics.mean)\n"
        "def f(s):\n    return 1.0 if '{0.func.__globals__}'.format(p) else 0.0",
    "type_three_arguments": "def f(s):\n    X = type('X', (), {'y': 1})\n    return 1.0",
    "type_of_function": "def f(s):\n    return 1.0 if type(f) else 0.0",
    "class_definition": "class X:\n    pass\ndef f(s):\n    return 1.0",
    "match_class_pattern_attribute": "def f(s):\n    match s:\n        case str(__class__=c):\n"
        "            return 1.0\n    return 0.0",
    "getattr_builtin": "def f(s):\n    return 1.0 if getattr(s, '__class__') else 0.0",
    "globals_builtin": "def f(s):\n    return 1.0 if globals() else 0.0",
    "vars_builtin": "def f(s):\n    return 1.0 if vars() else 0.0",
    "eval_exec_compile": "def f(s):\n    eval('1')\n    exec('x = 1')\n    return 1.0",
    "open_file": "def f(s):\n    return 1.0 if open('CANARY').read() else 0.0",
    "signal_handler": "import signal\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\ndef f(s):\n    return 1.0",
    "fork": "import os\ndef f(s):\n    if os.fork() == 0:\n        while True:\n            pass\n    return 1.0",
    "multiprocessing": "import multiprocessing\ndef f(s):\n    multiprocessing.Process(target=len).start()\n    return 1.0",
    "subprocess_detached": "import subprocess\ndef f(s):\n    subprocess.Popen(['sleep', '60'], start_new_session=True)\n    return 1.0",
    "socket_connect": "import socket\ndef f(s):\n    socket.create_connection(('127.0.0.1', 22))\n    return 1.0",
    "kill_parent": "import os\ndef f(s):\n    os.kill(os.getppid(), 9)\n    return 1.0",
    "with_statement": "import re\ndef f(s):\n    with re.compile('a') as p:\n        return 1.0",
}


@pytest.mark.parametrize("code", list(ESCAPES.values()), ids=list(ESCAPES))
def test_escape_attempt_fails(code: str, canary: Path) -> None:
    result = _attack(code, canary)
    if not result.rejected:  # got past the compile policy: a run-time guard must have said no
        reason = result.details.get("call_error") or result.error or ""
        assert any(word in reason for word in GUARD_WORDS), reason


def test_printed_lines_cannot_forge_results(canary: Path) -> None:
    code = ("def f(s):\n    for i in range(50):\n        print('{\"v\": 1.0}')\n"
            "        print('{\"ready\": true, \"network_isolated\": true}')\n    return 0.25")
    result = _attack(code, canary)
    assert result.ok and result.values == [0.25, 0.25]


# ---- the process layer, attacked directly -------------------------------------------------------------

_HARDENED_ATTACKS = r"""
import importlib.util, json, os, resource, socket, subprocess, sys
spec = importlib.util.spec_from_file_location("child", sys.argv[1])
child = importlib.util.module_from_spec(spec)
spec.loader.exec_module(child)
root, canary, port, out = sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
status = child.harden(cpu_seconds=5, memory_bytes=512 << 20, root_dir=root, keep_fds=(out,), max_files=8,
                      filter_syscalls=False)  # the mechanisms behind the seccomp filter, alone
outcomes = {}
def attempt(name, fn):
    try:
        fn()
        outcomes[name] = "ESCAPED"
    except BaseException as exc:
        outcomes[name] = f"{type(exc).__name__}:{getattr(exc, 'errno', '')}"
def connect():
    s = socket.socket()
    s.settimeout(1)
    s.connect(("127.0.0.1", port))
def fork():
    if os.fork() == 0:
        os._exit(0)
def write_file():
    with open("/new-file", "w") as fh:
        fh.write("x")
attempt("read_canary", lambda: open(canary).read())
attempt("delete_canary", lambda: os.unlink(canary))
attempt("create_file", write_file)
attempt("fork", fork)
attempt("spawn", lambda: subprocess.Popen(["/bin/sleep", "60"], start_new_session=True))
attempt("connect_loopback", connect)
attempt("signal_parent", lambda: os.kill(os.getppid(), 0))
attempt("regain_root", lambda: os.setuid(0))
attempt("raise_nproc", lambda: resource.setrlimit(resource.RLIMIT_NPROC, (10, 10)))
attempt("leave_chroot", lambda: os.chroot("/"))
if len(sys.argv) > 6:  # the grader's pid, as the rest of the system numbers it
    attempt("signal_grader", lambda: os.kill(int(sys.argv[6]), 0))
os.write(out, json.dumps({"status": status, "outcomes": outcomes}).encode())
"""


def _run_hardened_attacks(canary: Path, root: Path, as_user: bool = False) -> tuple[dict[str, Any], subprocess.Popen[bytes]]:
    """Run `_HARDENED_ATTACKS` in a throw-away interpreter sealed into the empty directory `root`
    (`as_user`: started through `unshare --user --map-user=1000`, and told the grader's pid to
    signal); return its report and the finished process."""
    root.mkdir(mode=0o700)
    server = socket.create_server(("127.0.0.1", 0))
    read_fd, write_fd = os.pipe()
    prefix = ["unshare", "--user", "--map-user=1000", "--map-group=1000"] if as_user else []
    extra = [str(os.getpid())] if as_user else []
    try:
        proc = subprocess.Popen(
            [*prefix, sys.executable, "-I", "-c", _HARDENED_ATTACKS, sandbox_child.__file__, str(root), str(canary),
             str(server.getsockname()[1]), str(write_fd), *extra],
            pass_fds=(write_fd,), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
        os.close(write_fd)
        _, stderr = proc.communicate(timeout=20)
        with os.fdopen(read_fd, "rb") as fh:
            report = json.loads(fh.read() or b"{}")
    finally:
        server.close()
    assert report, stderr.decode()[-2000:]
    return report, proc


@pytest.mark.skipif(not IS_ROOT, reason="privilege drop and chroot need the grader to start as root (as in CI)")
def test_hardened_process_blocks_files_processes_network_and_signals(canary: Path, tmp_path: Path) -> None:
    root = tmp_path / "empty-root"
    report, proc = _run_hardened_attacks(canary, root)
    assert report["status"]["privileges_dropped"] and report["status"]["uid"] >= sandbox_child.UID_BASE
    assert report["status"]["network_isolated"] and report["status"]["chrooted"]
    outcomes = report["outcomes"]
    assert len(outcomes) == 10 and "ESCAPED" not in outcomes.values()
    assert outcomes["fork"] == outcomes["spawn"] == f"BlockingIOError:{errno.EAGAIN}"  # RLIMIT_NPROC
    assert outcomes["connect_loopback"] == f"OSError:{errno.ENETUNREACH}"  # empty network namespace
    assert outcomes["signal_parent"] == outcomes["regain_root"] == f"PermissionError:{errno.EPERM}"
    assert canary.read_text() == SECRET and list(root.iterdir()) == []
    fake = SandboxResult(values=[], details={"child_pid": str(proc.pid), "uid": str(report["status"]["uid"])})
    assert _process_alive(fake) == []


def _user_namespaces() -> bool:
    try:
        return subprocess.run(["unshare", "--user", "--map-user=1000", "true"], capture_output=True,
                              timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


@pytest.mark.skipif(not _user_namespaces(), reason="needs util-linux unshare and user namespaces")
def test_hardened_process_as_a_non_root_grader(canary: Path, tmp_path: Path) -> None:
    """The non-root path of `harden` (most researchers run the grader as themselves): it enters a
    user namespace of its own, chroots there, drops every capability and runs as PID 1 of a PID
    namespace of its own. Emulated from root with `unshare --user --map-user=1000`, so the process
    sees itself as uid 1000. What the emulation cannot show: RLIMIT_NPROC is judged by the uid
    outside every namespace (root in CI), so fork is not asserted here."""
    report, proc = _run_hardened_attacks(canary, tmp_path / "empty-root", as_user=True)
    status, outcomes = report["status"], report["outcomes"]
    assert status["uid"] == 1000 and status["network_isolated"] and status["chrooted"]
    assert status["privileges_dropped"]  # the namespace's root holds no capability any more
    assert outcomes["read_canary"] == outcomes["delete_canary"] == f"FileNotFoundError:{errno.ENOENT}"
    assert outcomes["connect_loopback"] == f"OSError:{errno.ENETUNREACH}"
    assert outcomes["leave_chroot"] == f"PermissionError:{errno.EPERM}"  # CAP_SYS_CHROOT dropped
    assert outcomes["raise_nproc"] == "ValueError:"  # cannot raise a hard limit back
    assert outcomes["create_file"] != "ESCAPED"  # inside its own empty root at most, and size-capped
    assert outcomes["signal_grader"] == f"ProcessLookupError:{errno.ESRCH}"  # not in its PID namespace
    assert proc.returncode == 0  # the go-between ends as its child did
    assert canary.read_text() == SECRET


_GRADE_AS_USER = r"""
import json, sys
from discoverylab.labs.sequence.sandbox import run_predictor
out = {}
for name, code in (("ok", "def f(s):\n    return 0.25"), ("err", "def f(s):\n    return 1 / 0"),
                   ("mem", "def f(s):\n    x = [0] * (10 ** 9)\n    return 1.0")):
    r = run_predictor(code, ["A", "C"])
    out[name] = [r.values, r.error, r.details.get("call_error"), r.survivors, r.network_isolated, r.privileges_dropped]
print(json.dumps(out))
"""


@pytest.mark.skipif(not _user_namespaces(), reason="needs util-linux unshare and user namespaces")
def test_grading_works_for_a_non_root_grader() -> None:
    """`run_predictor` end to end from a grader that sees itself as uid 1000 (emulated as above):
    values, call errors and memory errors come back as for root, and nothing is left running."""
    src = str(Path(sandbox_child.__file__).resolve().parents[3])
    done = subprocess.run(["unshare", "--user", "--map-user=1000", "--map-group=1000", sys.executable, "-c",
                           _GRADE_AS_USER], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": src})
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout)
    assert out["ok"] == [[0.25, 0.25], None, None, 0, True, True]
    assert out["err"] == [[None, None], None, "ZeroDivisionError: division by zero", 0, True, True]
    assert out["mem"][1] == "program failed: MemoryError" and out["mem"][3:] == [0, True, True]


# ---- resource cases ----------------------------------------------------------------------------------

def test_infinite_loop_is_killed_and_earlier_results_kept(canary: Path) -> None:
    code = "def f(s):\n    if s == 'C':\n        while True:\n            pass\n    return 0.25"
    result = _attack(code, canary, ("A", "A", "C", "A"))
    assert result.values == [0.25, 0.25, None, None] and not result.ok


def test_module_level_loop_is_killed(canary: Path) -> None:
    result = _attack("while True:\n    pass\ndef f(s):\n    return 1.0", canary)
    assert result.values == [None, None] and not result.ok


def test_memory_bomb_is_contained(canary: Path) -> None:
    result = _attack("def f(s):\n    x = [0] * (10 ** 9)\n    return 1.0", canary)
    assert not result.ok and "MemoryError" in (result.error or "")


def test_runaway_recursion_is_contained(canary: Path) -> None:
    result = _attack("def f(s):\n    return f(s + 'A')", canary)
    assert not result.ok and "RecursionError" in (result.error or "")


def test_huge_output_is_contained(canary: Path) -> None:
    result = _attack("def f(s):\n    while True:\n        print('x' * 1000000)", canary, memory_mb=128)
    assert not result.ok
    big = _attack("def f(s):\n    return 'x' * 20000000", canary, memory_mb=128)
    assert big.values == [None, None]


def test_sandbox_reports_its_isolation() -> None:
    result = run_predictor("def f(s):\n    return 0.5", ["A"])
    assert result.ok and result.network_isolated is not None and result.privileges_dropped is not None
    if IS_ROOT:
        assert result.network_isolated and result.privileges_dropped


# ---- legitimate programs still score ----------------------------------------------------------------

def test_reference_programs_of_every_property_are_exact() -> None:
    rng = np.random.default_rng(3)
    seqs = ["".join(rng.choice(list("ACGT"), size=10)) for _ in range(40)]
    for name in [*PROPERTY_NAMES, *EXTRA_PROPERTY_NAMES, "alternation_2", "entropy_3"]:
        result = run_predictor(reference_program(name, DEFAULT_PARAMS, 10), seqs)
        truth = [compute(name, s, DEFAULT_PARAMS) for s in seqs]
        assert result.ok, (name, result.error)
        assert result.values == pytest.approx(truth, abs=1e-9), name


def test_everyday_python_still_works() -> None:
    code = """import math, re, statistics, itertools, functools
from collections import Counter, defaultdict, deque

@functools.lru_cache(maxsize=None)
def pairs(s):
    return tuple(a + b for a, b in itertools.pairwise(s))

def f(s):
    counts = defaultdict(int)
    for p in pairs(s):
        counts[p] += 1
    d = {'x': [1, 2]}
    d['x'][0] += 2
    n = 0
    n += len(re.findall('GC', s))
    label = '{0}:{1:.2f}'.format(s[:2], 0.5) + f'{n!r:>3}'
    q = deque(s, maxlen=3)
    a, (b, c) = 1, (2, 3)
    first, *rest = s
    seen = 0

    def bump(k):
        nonlocal seen
        seen += k

    bump(len(rest))
    d['x'][1] += seen - len(s) + 1
    total = statistics.mean([a, b, c]) + math.sqrt(4) + functools.reduce(lambda x, y: x + y, [1, 2])
    print(label, total)
    return Counter(s)['G'] / len(s) if printed and q and counts and d['x'] == [3, 2] and total == 7 else -1.0
"""
    result = run_predictor(code, ["GGCA", "AAAA"])
    assert result.ok and result.values == [0.5, 0.0]


def test_grading_hostile_answers_keeps_files_and_processes(canary: Path) -> None:
    """The grader runs every hypothesis; hostile ones score as failures and change nothing outside."""
    rng = np.random.default_rng(5)
    seqs = ["".join(rng.choice(list("ACGT"), size=10)) for _ in range(60)]
    truth = [compute("gc_content", s, DEFAULT_PARAMS) for s in seqs]
    hostile = [ESCAPES[k].replace("CANARY", str(canary)) for k in
               ("update_wrapper_globals_issue_exploit", "dunder_built_at_run_time", "fork")]
    good = reference_program("gc_content", DEFAULT_PARAMS, 10)
    answer = FinalAnswer(hypotheses=[Hypothesis(rank=i + 1, description="x", python=code)
                                     for i, code in enumerate([*hostile, good])],
                         predictions={s: 0.5 for s in seqs[:5]}, structured=True)
    before = sorted(p.name for p in canary.parent.iterdir())
    score = grade_hidden_property(answer, HeldOutSet(seqs, truth, ["random"] * 60), range(5), quantum=0.1,
                                  truth={"property": "gc_content"})
    entries = score.details["hypotheses"]
    assert [e["program_label"] for e in entries] == ["fail", "fail", "fail", "pass"]
    assert all(e["program_error"] or e["program"]["exact"] == 0.0 for e in entries[:3])
    if IS_ROOT:
        assert entries[1]["program_network_isolated"] is True
    assert canary.read_text() == SECRET and sorted(p.name for p in canary.parent.iterdir()) == before
