"""The seccomp filter is an allow-list (`sandbox_seccomp`): read back from the kernel, it refuses every number
no call has yet; and a predictor that uses numpy and the standard library still gets the same values.

The attacks on named calls, in the three grader paths, are in test_sandbox_seccomp.py; a number the kernel
does not implement answers ENOSYS with or without a filter, so here the filter the kernel holds for a sealed
process is read back (`PTRACE_SECCOMP_GET_FILTER`, root only) and run on those numbers.
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import platform
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from discoverylab.labs.sequence import sandbox_child, sandbox_seccomp
from discoverylab.labs.sequence.sandbox import run_predictor
from sandbox_kit import use_child_with_seccomp_patch

IS_ROOT = os.geteuid() == 0
HAVE_LIBSECCOMP = sandbox_seccomp.load_library() is not None
pytestmark = pytest.mark.skipif(not (IS_ROOT and HAVE_LIBSECCOMP), reason="needs root (as in CI) and libseccomp")

AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
PTRACE_ATTACH, PTRACE_DETACH, PTRACE_SECCOMP_GET_FILTER = 16, 17, 0x420C
RET_ALLOW, RET_ERRNO = 0x7FFF0000, 0x00050000

_SEALED = r"""
import ctypes, os, sys, time
sys.path.insert(0, sys.argv[1])
import sandbox_seccomp
ctypes.CDLL(None).prctl(38, 1, 0, 0, 0)
ok = sandbox_seccomp.install(sandbox_seccomp.load_library(), os.getpid())
os.write(1, b"ready\n" if ok else b"refused\n")
time.sleep(30)
"""


def _filter_of(pid: int) -> list[tuple[int, int, int, int]]:
    """The first seccomp filter of a stopped process `pid`, as (code, jt, jf, k) instructions."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.ptrace.restype = ctypes.c_long
    libc.ptrace.argtypes = (ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p)
    assert libc.ptrace(PTRACE_ATTACH, pid, None, None) == 0, os.strerror(ctypes.get_errno())
    try:
        os.waitpid(pid, 0)
        count = libc.ptrace(PTRACE_SECCOMP_GET_FILTER, pid, None, None)
        if count < 0:
            pytest.skip(f"the kernel does not show filters: {os.strerror(ctypes.get_errno())}")
        buffer = ctypes.create_string_buffer(8 * count)
        assert libc.ptrace(PTRACE_SECCOMP_GET_FILTER, pid, None, buffer) == count
    finally:
        libc.ptrace(PTRACE_DETACH, pid, None, None)
    return [struct.unpack_from("<HBBI", buffer.raw, 8 * i) for i in range(count)]


def _run_filter(program: list[tuple[int, int, int, int]], nr: int, arch: int, args: tuple[int, ...] = ()) -> int:
    """Classic BPF as libseccomp writes it (word loads of seccomp_data, AND, jumps, returns), run on one call."""
    words = [nr, arch, 0, 0] + [w for a in (*args, *[0] * (6 - len(args))) for w in (a & 0xFFFFFFFF, a >> 32)]
    acc, pc = 0, 0
    while True:
        code, jt, jf, k = program[pc]
        pc += 1
        if code == 0x20:  # BPF_LD | BPF_W | BPF_ABS
            acc = words[k // 4]
        elif code == 0x54:  # BPF_ALU | BPF_AND | BPF_K
            acc &= k
        elif code == 0x05:  # BPF_JMP | BPF_JA
            pc += k
        elif code in (0x15, 0x25, 0x35, 0x45):  # BPF_JMP | JEQ, JGT, JGE, JSET (BPF_K)
            taken = {0x15: acc == k, 0x25: acc > k, 0x35: acc >= k, 0x45: bool(acc & k)}[code]
            pc += jt if taken else jf
        elif code == 0x06:  # BPF_RET | BPF_K
            return k
        else:
            raise AssertionError(f"instruction {code:#x} not simulated")


@pytest.mark.skipif(platform.machine() not in AUDIT_ARCH, reason="the audit architecture of x86_64 or aarch64")
def test_the_loaded_filter_refuses_every_number_no_call_has_yet_with_enosys() -> None:
    """A call added to Linux later is refused until the allow-list names it: 470-511 (unassigned today; the
    deny-list allowed them, and refusing them one by one tripled its load time) and far beyond all fall to
    the default, ENOSYS; calls the list knows keep their answers."""
    here = str(Path(sandbox_seccomp.__file__).parent)
    proc = subprocess.Popen([sys.executable, "-I", "-c", _SEALED, here], stdout=subprocess.PIPE)
    try:
        assert proc.stdout is not None and proc.stdout.readline() == b"ready\n"
        program = _filter_of(proc.pid)
    finally:
        proc.kill()
        proc.wait()
    arch = AUDIT_ARCH[platform.machine()]
    unassigned = {nr: _run_filter(program, nr, arch) for nr in [*range(470, 512), 1000, 0x3FFFFFFF]}
    assert {nr: hex(action) for nr, action in unassigned.items() if action != RET_ERRNO | errno.ENOSYS} == {}
    lib = sandbox_seccomp.load_library()
    assert lib is not None

    def action(name: str, *args: int) -> int:
        return _run_filter(program, lib.seccomp_syscall_resolve_name(name.encode()), arch, args)

    assert action("write", 3) == RET_ALLOW and action("exit_group", 0) == RET_ALLOW
    assert action("kill", proc.pid, 0) == RET_ALLOW and action("kill", 1, 9) == RET_ERRNO | errno.EPERM
    assert action("socket", 2, 1) == RET_ERRNO | errno.EPERM and action("mbind") == RET_ERRNO | errno.ENOSYS


_PREDICTOR = r"""
import collections, importlib.util, itertools, json, math, os, random, re, sys
import numpy as np
import numpy.linalg, numpy.random  # (imported lazily by numpy 2: before the seal, as the real child does)
out = os.dup(1)
spec = importlib.util.spec_from_file_location("child", sys.argv[1])
child = importlib.util.module_from_spec(spec)
spec.loader.exec_module(child)
status = child.harden(cpu_seconds=20, memory_bytes=4 << 30, root_dir=sys.argv[2], keep_fds=(out,),
                      filter_syscalls=sys.argv[3] == "on")
def f(s):
    counts = collections.Counter(s)
    runs = max((len(m) for m in re.findall("G+|C+", s)), default=0)
    pairs = sum(1 for a, b in itertools.combinations(s, 2) if a == b)
    noise = random.Random(len(s)).random() + random.random() * 0  # (random.random: seeded at import)
    codes = np.frombuffer(s.encode(), dtype=np.uint8).astype(np.float64)
    square = np.random.default_rng(len(s)).normal(size=(200, 200))
    top = float(np.linalg.eigvalsh(square @ square.T)[-1])
    ordered = np.sort(np.random.default_rng(8).random(1_000_000))  # large: mmap, mremap and munmap
    data = json.loads(json.dumps({"gc": (counts["G"] + counts["C"]) / len(s), "top": top}))
    return data["gc"] + runs / 100 + pairs / 1e4 + math.tanh(codes.mean() / 100) + noise + data["top"] + ordered[0]
try:
    record = {"status": status, "values": [f(s) for s in ("ACGTGGCC", "GGGGAT", "ATATATAT", "C" * 40)]}
except BaseException as exc:
    record = {"status": status, "error": repr(exc)}
os.write(out, (json.dumps(record) + "\n").encode())
"""


def _predict(tmp_path: Path, filter_syscalls: str) -> dict[str, Any]:
    """The stand-in's status and values, with the filter "on" or "off" (one BLAS thread: the seal comes after
    numpy's import, and a filter binds only the thread that loads it)."""
    root = tmp_path / f"root-{filter_syscalls}"
    root.mkdir()
    done = subprocess.run([sys.executable, "-I", "-c", _PREDICTOR, sandbox_child.__file__, str(root), filter_syscalls],
                          capture_output=True, timeout=120, env={"OPENBLAS_NUM_THREADS": "1", "PYTHONHASHSEED": "0"})
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    record: dict[str, Any] = json.loads(done.stdout)
    return record


def test_a_predictor_using_numpy_and_the_standard_library_gets_the_same_values_with_the_filter(tmp_path: Path,
                                                                                               ) -> None:
    """Full Python after the real `harden` (no language layer): numpy (linear algebra, random generators, a
    sort of a million floats), math, random, re, itertools, collections and json need nothing the
    allow-list refuses, so the values are those of the same program without the filter."""
    with_filter, without = _predict(tmp_path, "on"), _predict(tmp_path, "off")
    assert with_filter["status"]["seccomp"] is True and without["status"]["seccomp"] is False
    assert "error" not in with_filter and "error" not in without, (with_filter, without)
    assert with_filter["values"] == without["values"] and len(with_filter["values"]) == 4


# only what the list allows; anything else kills the process
_STRICT = ("module.install = lambda lib, pid: module.load_filter(lib, [rule for rule in module.sandbox_rules(pid) "
           "if rule[0] == module.ACT_ALLOW], default=module.ACT_KILL_PROCESS)")


@pytest.mark.parametrize("name", ["ordinary", "call_errors", "memory_error", "recursion_error"])
def test_an_ordinary_grade_makes_no_call_the_list_refuses(name: str, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The real child, through run_predictor, under the allow-list with every refusal made fatal: were a call
    the interpreter makes (growing memory, failing to, unwinding, exiting) missing from the list, the child
    would die of SIGSYS and lose its values."""
    code = {
        "ordinary": "import math, itertools, collections, re, statistics, functools\n"
                    "def f(s):\n    c = collections.Counter(s)\n    runs = [len(m) for m in re.findall('[GC]+', s)] or [0]\n"
                    "    big = sorted(i * 1.5 for i in range(300000))\n    print('ignored', len(big))\n"
                    "    pairs = len(list(itertools.combinations(s[:12], 2)))\n"
                    "    return (statistics.mean(runs) + math.sqrt(c['A']) + functools.reduce(max, runs) + pairs) % 1\n",
        "call_errors": "def f(s):\n    return 1 / (len(s) - 4) if len(s) > 4 else 'text'\n",
        "memory_error": "def f(s):\n    x = [0] * (10 ** 9)\n    return 1.0\n",
        "recursion_error": "def f(s):\n    return f(s)\n",
    }[name]
    expected = {"ordinary": (None, None), "call_errors": (None, "TypeError: a prediction must be a number, not str 'text'"),
                "memory_error": ("program failed: MemoryError", None),
                "recursion_error": ("program failed: RecursionError", None)}[name]
    use_child_with_seccomp_patch(_STRICT, tmp_path / "strict_child.py", monkeypatch)
    result = run_predictor(code, ["ACGT", "GGCCA", "T" * 50])
    assert (result.error, result.details.get("call_error")) == expected and result.seccomp is True
    if name in ("ordinary", "call_errors"):
        assert len([v for v in result.values if v is not None]) == (3 if name == "ordinary" else 2), result


_THREAD_BEFORE_THE_SEAL = r"""
import ctypes, json, os, sys, threading
sys.path.insert(0, sys.argv[1])
import sandbox_seccomp
go, done, seen = threading.Event(), threading.Event(), {}
def elsewhere():  # a thread that was running before the seal, as a library's worker would be
    go.wait()
    try:
        os.mkdir(sys.argv[2])
        seen["thread"] = "made"
    except OSError as exc:
        seen["thread"] = exc.errno
    done.set()
    threading.Event().wait()  # never returns: the process ends by exit_group below
threading.Thread(target=elsewhere, daemon=True).start()
ctypes.CDLL(None).prctl(38, 1, 0, 0, 0)
seen["loaded"] = sandbox_seccomp.install(sandbox_seccomp.load_library(), os.getpid())
go.set()
done.wait(20)
os.write(1, json.dumps(seen).encode())
os._exit(0)
"""


def test_attack_a_thread_started_before_the_seal_is_sealed_too(tmp_path: Path) -> None:
    """Before, the filter bound only the thread that loaded it: a thread already running (a library's
    worker) kept every call, and code that broke out of the language layer can reach any thread's stack.
    Now the filter is synced to every thread (TSYNC): that thread's mkdir is refused like the caller's."""
    target = tmp_path / "made-by-the-other-thread"
    out = subprocess.run([sys.executable, "-c", _THREAD_BEFORE_THE_SEAL, str(Path(sandbox_seccomp.__file__).parent),
                          str(target)], capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    seen = json.loads(out.stdout or "{}")
    assert seen.get("loaded") is True, (out.stdout, out.stderr)
    assert seen.get("thread") == errno.EPERM and not target.exists(), seen
