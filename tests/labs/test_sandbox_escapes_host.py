"""Escape attempts on the predictor sandbox that go round the file system: System V IPC, the grader's
state in the child's memory, the CPU-limit signal, text that crosses back, and a grader without namespaces.

* A program with full Python powers (the language layer bypassed, `raw_child` from
  test_sandbox_escapes_process) once attached the grader's System V shared memory, wrote into its
  message queues and left segments of its own behind (host memory no limit of the child counted, kept
  after the sandbox ended): none of that needs a file descriptor, and the child shared the host's IPC
  namespace. It now gets one of its own and the seccomp filter refuses the calls; both are tested alone.
* Messages the program's exceptions carry cross back into the grade: one whose text could not even be
  rendered (`ValueError(10 ** 5000)`) crashed the child's reporter, losing every later input, and one
  with a lone surrogate (`chr(55296)`) crashed the runner's score file, losing the episode (as a lone
  surrogate in the agent's own JSON still did for the transcript: the record writers now escape them).
Every program returns 1.0 only if its trick worked; `_attack` (from test_sandbox_escapes) also checks the
canary file, the directory listing and that no process is left.
"""

from __future__ import annotations

import ctypes
import fcntl
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from test_sandbox_escapes import IS_ROOT, SECRET, _attack, _user_namespaces, canary
from test_sandbox_escapes_process import _RAW_CHILD

from discoverylab.bench import records
from discoverylab.labs import agents as lab_agents
from discoverylab.labs.jobs import make_jobs
from discoverylab.labs.runner import run_lab_jobs
from discoverylab.labs.sequence import sandbox, sandbox_child, sandbox_seccomp
from discoverylab.labs.sequence.agents import is_final_request, listed_sequences
from discoverylab.labs.sequence.grading import grade_hidden_property
from discoverylab.labs.sequence.heldout import HeldOutSet
from discoverylab.labs.sequence.parsing import FinalAnswer, Hypothesis
from discoverylab.labs.sequence.sandbox import _collect, run_predictor

__all__ = ["canary"]  # the fixture, imported for its name

LIBC = ctypes.CDLL(None, use_errno=True)
LIBC.shmat.restype = ctypes.c_void_p
IPC_CREAT, IPC_RMID, SHM_RDONLY, IPC_NOWAIT = 0o1000, 0, 0o10000, 0o4000
KEY = 0x5EC10000 + os.getpid() % 0xFFFF
HAVE_LIBSECCOMP = sandbox_seccomp.load_library() is not None


def _use_raw_child(monkeypatch: pytest.MonkeyPatch, directory: Path, *, filter_syscalls: bool = True) -> None:
    """`run_predictor` with no language layer (full Python in the hardened child); `filter_syscalls=False`
    also leaves out the seccomp filter, to test the mechanisms behind it alone."""
    raw = _RAW_CHILD.replace("CHILD_PATH", repr(sandbox_child.__file__))
    if not filter_syscalls:
        raw = raw.replace("keep_fds=(out,))", "keep_fds=(out,), filter_syscalls=False)")
    path = directory / "raw_child.py"
    path.write_text(raw)
    monkeypatch.setattr(sandbox, "_CHILD", path)
    monkeypatch.setattr(sandbox, "check_program", lambda code, function="f": "f")


# ---- System V IPC: no file descriptor needed, so neither the chroot nor RLIMIT_NOFILE stops it -----------

def _ipc_objects() -> set[tuple[str, int]]:
    """Every System V object of this (the grader's) IPC namespace, as (kind, id)."""
    found = set()
    for kind in ("shm", "msg", "sem"):
        with open(f"/proc/sysvipc/{kind}") as fh:
            found |= {(kind, int(line.split()[1])) for line in fh.readlines()[1:] if line.strip()}
    return found


def _remove(objects: set[tuple[str, int]]) -> None:
    for kind, ident in objects:
        if kind == "shm":
            LIBC.shmctl(ident, IPC_RMID, None)
        elif kind == "msg":
            LIBC.msgctl(ident, IPC_RMID, None)
        else:
            LIBC.semctl(ident, 0, IPC_RMID)


def _queued(queue: int) -> int:
    """Messages waiting in the message queue `queue` (/proc/sysvipc/msg's qnum column)."""
    with open("/proc/sysvipc/msg") as fh:
        lines = fh.read().splitlines()
    column = lines[0].split().index("qnum")
    return next(int(row.split()[column]) for row in lines[1:] if int(row.split()[1]) == queue)


_FAIL = "    if {} < 0:\n        raise OSError(ctypes.get_errno(), 'refused')\n"
IPC_ATTACKS = {
    "read_the_graders_shared_memory": "def f(s):\n    libc.shmat.restype = ctypes.c_void_p\n"
        "    sid = libc.shmget(KEY, 0, 0)\n" + _FAIL.format("sid")
        + "    addr = libc.shmat(sid, None, 0o10000)\n    if addr in (None, ctypes.c_void_p(-1).value):\n"
        "        raise OSError(ctypes.get_errno(), 'refused')\n"
        "    return 1.0 if ctypes.string_at(addr, len('SECRET')) == b'SECRET' else 0.0",
    "overwrite_the_graders_shared_memory": "def f(s):\n    libc.shmat.restype = ctypes.c_void_p\n"
        "    sid = libc.shmget(KEY, 0, 0)\n" + _FAIL.format("sid")
        + "    addr = libc.shmat(sid, None, 0)\n    if addr in (None, ctypes.c_void_p(-1).value):\n"
        "        raise OSError(ctypes.get_errno(), 'refused')\n    ctypes.memset(addr, 0x58, 8)\n    return 1.0",
    "send_to_the_graders_message_queue": "def f(s):\n    q = libc.msgget(KEY, 0)\n" + _FAIL.format("q")
        + "    message = ctypes.create_string_buffer(struct.pack('q', 1) + b'hello')\n"
        "    sent = libc.msgsnd(q, message, 5, 0o4000)\n" + _FAIL.format("sent") + "    return 1.0",
    # Inside an IPC namespace of its own these work (0.5) but end with it: nothing may be left on the host.
    "leave_shared_memory_behind": "def f(s):\n    libc.shmat.restype = ctypes.c_void_p\n"
        "    sid = libc.shmget(0, 16 << 20, 0o1600)\n" + _FAIL.format("sid")
        + "    addr = libc.shmat(sid, None, 0)\n    ctypes.memset(addr, 1, 16 << 20)\n"
        "    libc.shmdt(ctypes.c_void_p(addr))\n    return 0.5",
    "leave_a_message_queue_behind": "def f(s):\n    q = libc.msgget(0, 0o1600)\n" + _FAIL.format("q") + "    return 0.5",
    "leave_a_semaphore_set_behind": "def f(s):\n    sem = libc.semget(0, 1, 0o1600)\n" + _FAIL.format("sem")
        + "    return 0.5",
}


@pytest.fixture
def ipc_alone() -> Iterator[None]:
    """Hold a machine-wide lock while a test counts and removes System V objects: the host's IPC
    namespace is shared by every pytest-xdist worker, and a test that removed "what appeared since it
    started" once removed another worker's segment, whose read then crashed that worker."""
    with open(Path(tempfile.gettempdir()) / "discoverylab-sysv-ipc-tests.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


@pytest.fixture
def grader_ipc(ipc_alone: None) -> Iterator[tuple[int, int]]:
    """A shared memory segment (mode 0666, holding the secret) and a message queue (mode 0622) of the
    grader's, as a database or a display server would keep them; removed afterwards."""
    segment = LIBC.shmget(KEY, 4096, IPC_CREAT | 0o666)
    queue = LIBC.msgget(KEY, IPC_CREAT | 0o622)
    assert segment >= 0 and queue >= 0, ctypes.get_errno()
    address = LIBC.shmat(segment, None, 0)
    ctypes.memmove(address, SECRET.encode(), len(SECRET))
    LIBC.shmdt(ctypes.c_void_p(address))
    yield segment, queue
    _remove({("shm", segment), ("msg", queue)})


def _segment_text(segment: int) -> bytes:
    address = LIBC.shmat(segment, None, SHM_RDONLY)
    assert address not in (None, ctypes.c_void_p(-1).value), f"the grader's segment is gone (errno {ctypes.get_errno()})"
    try:
        return ctypes.string_at(address, len(SECRET))
    finally:
        LIBC.shmdt(ctypes.c_void_p(address))


@pytest.mark.parametrize("layer", ["seccomp_filter", "ipc_namespace_alone"])
@pytest.mark.parametrize("name", list(IPC_ATTACKS))
def test_program_cannot_reach_or_fill_host_ipc(name: str, layer: str, canary: Path, grader_ipc: tuple[int, int],
                                               monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    if layer == "seccomp_filter" and not HAVE_LIBSECCOMP:
        pytest.skip("needs libseccomp")
    if layer == "ipc_namespace_alone" and not (IS_ROOT or _user_namespaces()):
        pytest.skip("no namespaces for this grader (not root, no user namespaces): the filter alone stands")
    _use_raw_child(monkeypatch, tmp_path, filter_syscalls=layer == "seccomp_filter")
    segment, queue = grader_ipc
    before = _ipc_objects()
    try:
        result = _attack(IPC_ATTACKS[name].replace("KEY", str(KEY)).replace("SECRET", SECRET), canary)
        left = _ipc_objects() - before
    finally:
        _remove(_ipc_objects() - before)  # never leak host memory, even when the test fails
    assert left == set(), f"the sandbox left System V objects on the host: {left}"
    assert _segment_text(segment) == SECRET.encode() and _queued(queue) == 0
    if layer == "seccomp_filter":
        assert result.values == [None, None] and result.call_errors == 2
        assert "[Errno 1]" in result.details["call_error"]  # EPERM, the filter's answer
    else:
        assert set(result.values) <= {None, 0.5}, result


# ---- the grader's state never enters the child -----------------------------------------------------------

_GC_WALK = """import gc
found = []
def f(s):
    if found:
        return found[0]
    target = 'REVERSED'[::-1]
    markers = {0.123456789 + i * 1e-9 for i in range(1, 6)}
    for obj in gc.get_objects():
        if obj is markers or obj is found:
            continue
        if isinstance(obj, dict):
            items = list(obj.values()) + list(obj)
        elif isinstance(obj, (list, tuple, set, frozenset)):
            items = list(obj)
        else:
            continue
        if any((isinstance(x, float) and x in markers) or (isinstance(x, str) and x == target) for x in items):
            found.append(1.0)
            return 1.0
    found.append(0.0)
    return 0.0
"""


def test_grader_state_is_not_in_the_childs_memory(canary: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                   ) -> None:
    """A program with full Python powers walks every object of its process (`gc.get_objects`) for the
    held-out truth values and the hidden property's name: the grader sends neither, only the inputs."""
    _use_raw_child(monkeypatch, tmp_path)
    rng = np.random.default_rng(21)
    seqs = ["".join(rng.choice(list("ACGT"), size=10)) for _ in range(5)]
    truth = [0.123456789 + i * 1e-9 for i in range(1, 6)]  # values no program could make by chance
    marker = "secretprop_q7x"  # spelled backwards in the program, so its own source holds no copy
    code = _GC_WALK.replace("REVERSED", marker[::-1])
    answer = FinalAnswer(hypotheses=[Hypothesis(rank=1, description="x", python=code)], predictions={},
                         structured=True)
    score = grade_hidden_property(answer, HeldOutSet(seqs, truth, ["random"] * 5), range(3), quantum=None,
                                  truth={"property": marker, "params": {"marker": truth[0]}})
    entry = score.details["hypotheses"][0]
    assert entry["program_error"] is None and entry["program_call_error"] is None
    assert entry["program"]["missing"] == 0.0 and entry["program"]["mae"] == pytest.approx(0.1234568, abs=1e-6)
    control = run_predictor(_GC_WALK.replace("REVERSED", seqs[0][::-1]), seqs)  # it finds what was sent
    assert control.values == [1.0] * 5


def test_a_program_that_ignores_the_cpu_limit_signal_is_still_stopped(canary: Path, monkeypatch: pytest.MonkeyPatch,
                                                                      tmp_path: Path) -> None:
    """SIGXCPU (the soft CPU limit) and SIGTERM ignored, then an endless loop: the hard CPU limit or the
    grader's SIGKILL ends it within the wall-clock bound, and nothing is left running."""
    _use_raw_child(monkeypatch, tmp_path)
    code = ("def f(s):\n    for sig in (signal.SIGXCPU, signal.SIGTERM, signal.SIGINT, signal.SIGHUP):\n"
            "        signal.signal(sig, signal.SIG_IGN)\n    while True:\n        pass")
    start = time.monotonic()
    result = _attack(code, canary)
    assert time.monotonic() - start < 4.0 and result.values == [None, None] and not result.ok


# ---- text that crosses back: a bounded, truthful message that every writer can store -------------------

@pytest.mark.parametrize(("name", "raise_"), [
    ("int_too_long_to_show", "raise ValueError(10 ** 5000)"),
    ("nesting_too_deep_to_show", "x = []\n        for i in range(100000):\n            x = [x]\n        raise ValueError(x)"),
])
def test_an_exception_message_that_cannot_be_shown_costs_only_its_input(name: str, raise_: str, canary: Path) -> None:
    """`str(exc)` itself raised in the child's reporter, which crashed: every later input was lost and the
    error read "exit status 1". Now the call error names the type and later inputs still score."""
    code = f"def f(s):\n    if s == 'ACGT':\n        {raise_}\n    return 0.25"
    result = _attack(code, canary, ("ACGT", "GGCC", "ACGT", "TTTT"))
    assert result.ok and result.values == [None, 0.25, None, 0.25] and result.call_errors == 2, result
    assert result.details["call_error"] == "ValueError (its message could not be shown)"
    fatal = _attack(raise_.replace("\n        ", "\n") + "\ndef f(s):\n    return 0.25", canary)
    assert fatal.error == "program failed: ValueError (its message could not be shown)", fatal


def test_an_exception_message_with_lone_surrogates_comes_back_storable(canary: Path) -> None:
    result = _attack("def f(s):\n    raise ValueError(chr(55296) + 'x' + chr(57343))", canary)
    assert result.values == [None, None]
    assert result.details["call_error"] == "ValueError: \\ud800x\\udfff"
    result.details["call_error"].encode("utf-8")  # what every file writer does
    fatal = _attack("raise KeyError(chr(55296))\ndef f(s):\n    return 0.5", canary)
    assert fatal.error == "program failed: KeyError: '\\ud800'"


@pytest.mark.parametrize(("name", "line"), [
    ("call_error", '{"e": "A\\ud800B"}'),
    ("fatal", '{"fatal": "A\\udfffB"}'),
])
def test_parent_makes_every_string_from_the_child_storable(name: str, line: str) -> None:
    """A child that lost its language layer could send any string: the parent keeps it readable and
    encodable (lone surrogates as their escapes)."""
    result = _collect('{"ready": true}\n' + line + "\n", 1, False, 0)
    text = result.details.get("call_error") or result.error or ""
    assert "A\\ud" in text and text.encode("utf-8")


class _HostileFinal:
    """A lab agent that samples at random, then answers with the given program and description."""

    def __init__(self, program: str, description: str) -> None:
        self.program, self.description = program, description

    def reset(self, seed: int) -> None:
        pass

    def act(self, message: str) -> str:
        if not is_final_request(message):
            return "RANDOM"
        return json.dumps({"hypotheses": [{"rank": 1, "description": self.description, "python": self.program}],
                           "predictions": {s: 0.5 for s in listed_sequences(message)}})


@pytest.mark.parametrize(("name", "program", "description"), [
    ("program_raises_a_lone_surrogate", "def f(s):\n    raise ValueError(chr(55296))", "x"),
    ("description_holds_a_lone_surrogate", "def f(s):\n    return 0.5", "gc \ud800 rich"),
])
def test_lone_surrogates_from_the_agent_never_lose_the_episode(name: str, program: str, description: str,
                                                               tmp_path: Path) -> None:
    """Both once ended the episode as an error (UnicodeEncodeError while writing the score file or the
    transcript), its result lost; now the episode is graded and its files read back as written."""
    kind = f"hostile-{name}"
    lab_agents.register_agent("sequence", kind, lambda protocol, **_: _HostileFinal(program, description))
    jobs = make_jobs(["sequence/hidden-property"], [0], [kind], {"rounds": 2, "n_predictions": 5})
    (record,) = run_lab_jobs(jobs, tmp_path, plots=False, retry_delay=0)
    assert record.status == "ok", record.error
    assert record.score_file is not None and record.transcript is not None
    score = json.loads((tmp_path / record.score_file).read_text(encoding="utf-8"))
    entry = score["details"]["hypotheses"][0]
    assert entry["description"] == description.strip()  # the writer escaped it; JSON reads it back unchanged
    if name == "program_raises_a_lone_surrogate":
        assert entry["program_call_error"] == "ValueError: \\ud800"
    assert [json.loads(line) for line in (tmp_path / record.transcript).read_text(encoding="utf-8").splitlines()]


def test_record_writers_store_lone_surrogates_losslessly(tmp_path: Path) -> None:
    row = {"text": "a\ud800b\udfffc", "plain": "é"}
    records.append_jsonl(tmp_path / "results.jsonl", row)
    records.write_jsonl(tmp_path / "log.jsonl", [row])
    for name in ("results.jsonl", "log.jsonl"):
        assert json.loads((tmp_path / name).read_text(encoding="utf-8")) == row
    assert "é" in (tmp_path / "log.jsonl").read_text(encoding="utf-8")  # other text stays as it was


# ---- a grader without user namespaces: no chroot, /proc in view; RLIMIT_NOFILE = 0 and the filter hold ---

_NO_NAMESPACE_GRADER = r"""
import json, os, pathlib, sys
from discoverylab.labs.sequence import sandbox, sandbox_seccomp
assert sandbox_seccomp.load_filter(sandbox_seccomp.load_library(), [(sandbox_seccomp.action_errno(1), "unshare", ())])
os.environ["DISCOVERYLAB_EVAL_KEY"] = sys.argv[3]
sandbox._CHILD = pathlib.Path(sys.argv[1])
sandbox.check_program = lambda code, function="f": "f"
for name, code in json.loads(sys.argv[2]).items():  # one line each: a grader killed mid-way shows which
    r = sandbox.run_predictor(code.replace("GRADER", str(os.getpid())), ["A"], min_seconds=1.0)
    print(json.dumps([name, r.values, r.details.get("call_error"), r.network_isolated, r.seccomp, r.survivors]),
          flush=True)
"""
# The pipe's owner gets its I/O signals: F_SETSIG makes that SIGKILL, sent when the grader reads a record.
_SIGNAL_BY_PIPE = ("def f(s):\n    for command, arg in ((8, GRADER), (10, 9), (4, os.O_WRONLY | os.O_ASYNC)):\n"
                   "        if libc.fcntl(out, command, arg) != 0:\n"
                   "            raise OSError(ctypes.get_errno(), 'refused')\n"
                   "    os.write(out, b'{\"v\": 0.25}\\n')\n    time.sleep(0.5)\n    return 0.25")  # read while armed
NO_NAMESPACE_ATTACKS = {
    "read_the_graders_environment": "def f(s):\n    return 1.0 if b'SECRET' in open('/proc/GRADER/environ', 'rb').read() else 0.0",
    "read_the_graders_memory": "def f(s):\n    return 1.0 if open('/proc/GRADER/mem', 'rb') else 0.0",
    "list_the_graders_open_files": "def f(s):\n    return 1.0 if os.listdir('/proc/GRADER/fd') else 0.0",
    "create_a_file_in_the_shared_temp_dir": "def f(s):\n    open('TMP/planted', 'w')\n    return 1.0",
    "read_a_file_of_the_graders": "def f(s):\n    return 1.0 if 'SECRET' in open('CANARY').read() else 0.0",
    "sigkill_the_grader_through_the_result_pipe": _SIGNAL_BY_PIPE,
    # No fd needed: these once answered from the grader's file system and its /proc entries.
    "stat_a_file_of_the_graders": "def f(s):\n    return 1.0 if os.stat('CANARY').st_size else 0.0",
    "readlink_the_graders_working_directory": "def f(s):\n    return 1.0 if os.readlink('/proc/GRADER/cwd') else 0.0",
    "readlink_the_graders_open_files": "def f(s):\n    return 1.0 if os.readlink('/proc/GRADER/fd/1') else 0.0",
    "readlink_own_executable": "def f(s):\n    return 1.0 if os.readlink('/proc/self/exe') else 0.0",
    "change_directory_to_the_graders": "def f(s):\n    os.chdir('TMP')\n    return 1.0",
    # setxattrat (Linux 6.13) is newer than Debian 12's libseccomp, whose filter skipped it
    "set_an_xattr_on_a_file_of_the_graders": "def f(s):\n    libc.syscall.restype = ctypes.c_long\n"
        "    value = ctypes.create_string_buffer(b'x', 1)\n"
        "    args = (ctypes.c_uint64 * 2)(ctypes.addressof(value), 1)\n"
        "    done = libc.syscall(463, -100, b'CANARY', 0, b'user.planted', args, ctypes.c_long(16))\n"
        "    if done != 0:\n        raise OSError(ctypes.get_errno(), 'refused')\n    return 1.0",
}
# Each needs a new fd, which RLIMIT_NOFILE = 0 refuses (EMFILE) where the filter is off; the filter refuses
# every one of them itself (EPERM), opening files included.
OPENING = frozenset({"read_the_graders_environment", "read_the_graders_memory", "list_the_graders_open_files",
                     "create_a_file_in_the_shared_temp_dir", "read_a_file_of_the_graders"})


def _no_namespace_run(work: Path, attacks: dict[str, str], *, filter_syscalls: bool = True) -> dict[str, list[object]]:
    """The raw child under a grader without user namespaces (emulated as uid 1000), one line per attack."""
    os.chmod(work, 0o777)
    (work / "canary.txt").write_text(SECRET)
    child = work / "raw_child.py"
    raw = _RAW_CHILD.replace("CHILD_PATH", repr(sandbox_child.__file__))
    child.write_text(raw if filter_syscalls else raw.replace("keep_fds=(out,))", "keep_fds=(out,), filter_syscalls=False)"))
    programs = {k: v.replace("SECRET", SECRET).replace("TMP", str(work)).replace("CANARY", str(work / "canary.txt"))
                for k, v in attacks.items()}
    src = str(Path(sandbox_child.__file__).resolve().parents[3])
    done = subprocess.run(["unshare", "--user", "--map-user=1000", "--map-group=1000", sys.executable, "-c",
                           _NO_NAMESPACE_GRADER, str(child), json.dumps(programs), SECRET],
                          capture_output=True, text=True, timeout=60, env={**os.environ, "PYTHONPATH": src})
    assert not (work / "planted").exists() and (work / "canary.txt").read_text() == SECRET
    assert os.listxattr(work / "canary.txt") == []
    report: dict[str, list[object]] = {line[0]: line[1:] for line in map(json.loads, done.stdout.splitlines())}
    if done.returncode != 0:  # the grader died: every attack it did not report on is marked so
        report.update({name: [f"the grader died (status {done.returncode})"] for name in programs if name not in report})
    return report


@pytest.fixture(scope="module")
def no_namespace_report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[object]]:
    if not (_user_namespaces() and HAVE_LIBSECCOMP):
        pytest.skip("needs util-linux unshare, user namespaces (to emulate a grader that is not root) and libseccomp")
    return _no_namespace_run(tmp_path_factory.mktemp("no-namespaces"), NO_NAMESPACE_ATTACKS)


@pytest.mark.parametrize("name", list(NO_NAMESPACE_ATTACKS))
def test_without_namespaces_the_program_still_opens_nothing(name: str, no_namespace_report: dict[str, list[object]],
                                                            ) -> None:
    """No chroot and the grader's /proc in plain view (same uid): every read or create needs a new file
    descriptor, which RLIMIT_NOFILE = 0 refuses (EMFILE, tested alone below), and the filter, an allow-list,
    refuses `open` itself (EPERM). The result pipe itself
    once carried SIGKILL to the grader (its owner set with F_SETOWN, the signal with F_SETSIG): the
    grader died when it read the program's first record; the filter now refuses F_SETOWN. Calls that
    need no fd once still answered: `stat` (which of the grader's files exist, their sizes), `readlink`
    (its working directory, what its fds are, the interpreter's path), `chdir`, and `setxattrat` planted
    an xattr on the grader's file (the filter skipped calls its libseccomp did not know)."""
    assert len(no_namespace_report[name]) == 5, no_namespace_report[name]
    values, call_error, network_isolated, seccomp, survivors = no_namespace_report[name]
    assert network_isolated is False and seccomp is True and survivors == 0
    assert values == [None] and "[Errno 1]" in str(call_error), call_error  # EPERM: the filter's own answer


@pytest.mark.skipif(not _user_namespaces(), reason="needs util-linux unshare and user namespaces")
def test_without_namespaces_or_the_filter_opening_still_fails_for_want_of_an_fd(tmp_path: Path) -> None:
    """The mechanism behind the filter alone: the allow-list refuses `open`, and without it RLIMIT_NOFILE = 0
    still refuses every new fd (EMFILE), so reading or creating a file of the grader's stays impossible."""
    report = _no_namespace_run(tmp_path, {name: NO_NAMESPACE_ATTACKS[name] for name in sorted(OPENING)},
                               filter_syscalls=False)
    assert not (tmp_path / "planted").exists()
    for name in OPENING:
        values, call_error, network_isolated, seccomp, survivors = report[name]
        assert (values, network_isolated, seccomp, survivors) == ([None], False, False, 0)
        assert "[Errno 24]" in str(call_error), (name, call_error)


def test_an_over_long_program_is_refused_before_the_grader_parses_it() -> None:
    """The compile check runs in the grader's own process: a program over the length limit is now refused
    for its length before `ast.parse` spends time and memory on it (it used to be parsed whole first, so
    one with a syntax error at its end was refused for that instead)."""
    code = "def f(s):\n    return 0.5\n" + "x = [" + "1, " * 40_000 + "]\n)"
    with pytest.raises(sandbox.ProgramRejected, match="longer than 100000 characters"):
        sandbox.check_program(code)
    assert run_predictor(code, ["A"]).error == "rejected: program is longer than 100000 characters"


_ADDRESSES = ("def f(s):\n    g = (c for c in s)\n"
              "    return ((hash(f) + hash(float('nan')) + int(repr(g).split()[-1][:-1], 16)) % 2 ** 40) / 2 ** 40")


def test_values_do_not_follow_the_graders_temp_dir_or_open_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   ) -> None:
    """`hash(f)`, `hash(nan)` and a generator's repr follow heap addresses, which the payload shaped: it
    held the root's path (the grader's temp dir and pid) and the result pipe's fd number (how many files
    the grader has open), so the same program scored differently from another temp dir. The payload
    now holds neither (the root is the child's working directory; the fd is sent fixed-width)."""
    from test_sandbox_escapes_more import _aslr_can_be_disabled

    if not _aslr_can_be_disabled():
        pytest.skip("personality(ADDR_NO_RANDOMIZE) is refused here: addresses differ on every run anyway")
    baseline = run_predictor(_ADDRESSES, ["ACGT", "GGTA"]).values
    held = [os.open(os.devnull, os.O_RDONLY) for _ in range(40)]  # the pipe's fd gets a two-digit number
    moved = []
    try:
        for length in (10, 60, 100, 200):  # 60 and 100 gave other values (other heap size classes)
            deep = tmp_path / ("d" * length)
            deep.mkdir()
            monkeypatch.setattr(tempfile, "tempdir", str(deep))
            moved.append(run_predictor(_ADDRESSES, ["ACGT", "GGTA"]).values)
    finally:
        for fd in held:
            os.close(fd)
    assert None not in baseline and moved == [baseline] * 4
