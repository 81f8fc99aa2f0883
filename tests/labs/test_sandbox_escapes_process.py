"""Escape attempts on the predictor sandbox's process layer alone, and on the grader's side of it.

* `RAW_ATTACKS` run with full Python powers in the real hardened child (the policy is bypassed by a
  stand-in child that calls the same `harden`), so the process layer holds even if the language layer
  had a hole (tests/labs/test_sandbox_escapes_more.py attacks that layer alone).
* The grader's parent side is fed hostile record streams (deep JSON, huge ints, forged status lines,
  slow or endless streams, an early close) and hostile sources for its in-process compile check, and
  must give a bounded, truthful result.
Every program returns 1.0 only if its trick worked; `_attack` (from test_sandbox_escapes) also checks the
canary file, the directory listing and that no process is left.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_sandbox_escapes import IS_ROOT, SECRET, _attack, _user_namespaces, canary

from discoverylab.labs.sequence import sandbox, sandbox_child
from discoverylab.labs.sequence.sandbox import _collect, _remove_tree

__all__ = ["canary"]  # the fixture, imported for its name


# ---- the process layer alone: full Python in the real hardened child -----------------------------------
_RAW_CHILD = r"""
import ctypes, errno, fcntl, importlib.util, json, os, resource, signal, socket, struct, sys, time, _thread
spec = importlib.util.spec_from_file_location("child", CHILD_PATH)
child = importlib.util.module_from_spec(spec)
spec.loader.exec_module(child)
child._restart_without_aslr()
payload = json.loads(sys.stdin.buffer.read())
out = int(payload["result_fd"])
scope = {**globals(), "payload": payload, "out": out, "libc": ctypes.CDLL(None, use_errno=True)}
status = child.harden(cpu_seconds=int(payload["cpu_seconds"]), memory_bytes=int(payload["memory_bytes"]),
                      keep_fds=(out,))
child._send(out, {"ready": True, **status})
exec(payload["code"], scope)  # no policy: this program may do anything Python can
for s in payload["inputs"]:
    try:
        record = {"v": child._value(scope["f"](s))}
    except Exception as exc:
        record = {"e": child._describe(exc, 200)}
    child._send(out, record)
"""


@pytest.fixture
def raw_child(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """`run_predictor` with the language layer switched off: no compile check, a child without policy."""
    path = tmp_path_factory.mktemp("raw-child") / "raw_child.py"
    path.write_text(_RAW_CHILD.replace("CHILD_PATH", repr(sandbox_child.__file__)))
    monkeypatch.setattr(sandbox, "_CHILD", path)
    monkeypatch.setattr(sandbox, "check_program", lambda code, function="f": "f")


_KNOWN_PAYLOAD = "{'code', 'function', 'inputs', 'result_fd', 'cpu_seconds', 'memory_bytes'}"
RAW_ATTACKS = {
    "read_canary": "def f(s):\n    return 1.0 if open('CANARY').read() else 0.0",
    "environment_of_the_grader": "def f(s):\n    return 1.0 if set(os.environ) - {'PYTHONHASHSEED', 'LC_CTYPE'}"
        " or 'SECRET' in str(os.environ) else 0.0",
    "proc_file_system": "def f(s):\n    return 1.0 if os.path.exists('/proc/self') or os.path.exists('/etc') else 0.0",
    "inherited_file_descriptors": "def f(s):\n    fds = []\n    for fd in range(4096):\n        try:\n"
        "            fcntl.fcntl(fd, fcntl.F_GETFD)\n            fds.append(fd)\n        except OSError:\n"
        "            pass\n"
        "    return 1.0 if set(fds) - {0, 1, 2, out} else 0.0",
    "fchdir_out_of_the_chroot": "def f(s):\n    for fd in (0, 1, 2, out):\n        try:\n            os.fchdir(fd)\n"
        "        except OSError:\n            pass\n    return 1.0 if os.path.exists('/etc') else 0.0",
    "classic_chroot_escape": "def f(s):\n    try:\n        os.mkdir('e')\n        os.chroot('e')\n    except OSError:\n"
        "        pass\n    for i in range(64):\n        os.chdir('..')\n    try:\n        os.chroot('.')\n"
        "    except OSError:\n        pass\n    return 1.0 if os.path.exists('/etc') else 0.0",
    "create_in_own_root": "def f(s):\n    os.mkdir('/made-here')\n    return 1.0",
    "signal_every_process": "def f(s):\n    try:\n        os.kill(-1, signal.SIGKILL)\n    except OSError:\n"
        "        pass\n    return 0.5",  # (refused with EPERM by the seccomp filter; without it, kills nothing)
    "signal_the_grader": "def f(s):\n    os.kill(GRADER, 0)\n    return 1.0",
    "ptrace_the_grader": "def f(s):\n    return 1.0 if libc.ptrace(16, GRADER, 0, 0) == 0 else 0.0",
    "read_the_graders_limits": "def f(s):\n    resource.prlimit(GRADER, resource.RLIMIT_NOFILE)\n    return 1.0",
    "raise_own_limits": "def f(s):\n    won = 0\n    for r in (resource.RLIMIT_AS, resource.RLIMIT_CPU, resource.RLIMIT_NOFILE,"
        " resource.RLIMIT_FSIZE, resource.RLIMIT_NPROC):\n        try:\n"
        "            resource.setrlimit(r, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))\n            won += 1\n"
        "        except (ValueError, OSError):\n            pass\n    return 1.0 if won else 0.0",
    "new_session": "def f(s):\n    os.setsid()\n    return 1.0",
    "start_a_thread": "def f(s):\n    _thread.start_new_thread(time.sleep, (60,))\n    return 1.0",
    "memfd_for_exec": "def f(s):\n    os.memfd_create('x')\n    return 1.0",
    "unix_socket": "def f(s):\n    socket.socket(socket.AF_UNIX).connect('\\0discoverylab-esc18')\n    return 1.0",
    "netlink_socket": "def f(s):\n    socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)\n    return 1.0",
    "chmod_dev_null": "def f(s):\n    os.fchmod(1, 0o777)\n    return 1.0",
    "clear_death_signal_and_sleep": "def f(s):\n    libc.prctl(1, 0, 0, 0, 0)\n    time.sleep(60)\n    return 1.0",
    "signal_own_process_group": "def f(s):\n    os.kill(0, signal.SIGKILL)\n    return 1.0",
    # Limits the host grants (limits.conf rtprio, nice) once reached the child: a realtime policy or a
    # negative nice value put it above the grader, and each POSIX timer drew on the user's signal quota.
    "realtime_priority": "def f(s):\n    os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))\n    return 1.0",
    "negative_nice": "def f(s):\n    os.setpriority(os.PRIO_PROCESS, 0, -1)\n    return 1.0",
    "posix_timer": "def f(s):\n    t = ctypes.c_void_p()\n    return 1.0 if libc.timer_create(1, None, ctypes.byref(t)) == 0 else 0.0",
    "limits_inherited_from_the_host": "def f(s):\n    return 1.0 if any(resource.getrlimit(r) != (0, 0) for r in "
        "(resource.RLIMIT_RTPRIO, resource.RLIMIT_RTTIME, resource.RLIMIT_NICE, resource.RLIMIT_SIGPENDING)) else 0.0",
    "payload_holds_no_answers": "def f(s):\n    return 1.0 if set(payload) - " + _KNOWN_PAYLOAD
        + " or not all(isinstance(x, str) for x in payload['inputs']) else 0.0",
}


@pytest.mark.parametrize("name", list(RAW_ATTACKS))
def test_process_layer_alone_holds(name: str, canary: Path, raw_child: None, monkeypatch: pytest.MonkeyPatch,
                                   ) -> None:
    monkeypatch.setenv("DISCOVERYLAB_GRADER_TOKEN", SECRET)
    sleeper = subprocess.Popen(["sleep", "30"])  # a bystander of the grader's: nothing may signal it
    try:
        result = _attack(RAW_ATTACKS[name].replace("GRADER", str(os.getpid())).replace("SECRET", SECRET), canary)
        assert sleeper.poll() is None
    finally:
        sleeper.kill()
        sleeper.wait()
    assert result.network_isolated is True and result.privileges_dropped is True
    if name == "signal_every_process":
        assert result.values == [0.5, 0.5]  # it signalled nothing, not even itself
    else:
        assert set(result.values) <= {None, 0.0}, result  # each attempt raised or failed inside the child


@pytest.mark.parametrize(("name", "limit"), [("realtime_priority", "RLIMIT_RTPRIO"), ("negative_nice", "RLIMIT_NICE")])
def test_priorities_the_host_grants_never_reach_the_program(name: str, limit: str, canary: Path, raw_child: None,
                                                             ) -> None:
    """A host may grant realtime priorities or negative nice values (limits.conf `rtprio`, `nice`, as for
    an audio group); the child inherited them, so a program could make itself SCHED_FIFO and starve the
    grader and its CPU until the CPU limit struck. This grader is granted them for the test, which needs
    CAP_SYS_RESOURCE (root in CI); where the host grants none, RAW_ATTACKS still runs both attempts."""
    kind = getattr(resource, limit)
    saved = resource.getrlimit(kind)
    try:
        resource.setrlimit(kind, (30, 30))
    except (ValueError, OSError):
        pytest.skip("granting this grader the limit needs CAP_SYS_RESOURCE")
    try:
        result = _attack(RAW_ATTACKS[name], canary)
    finally:
        resource.setrlimit(kind, saved)
    assert result.values == [None, None] and "[Errno 1]" in str(result.details.get("call_error")), result


def test_forged_status_and_extra_records_are_not_believed(canary: Path, raw_child: None) -> None:
    code = ("def f(s):\n    os.write(out, b'{\"ready\": true, \"network_isolated\": true, \"uid\": \"0\"}\\n')\n"
            "    return 0.25")
    result = _attack(code, canary)
    assert result.error == "malformed output from the sandbox" and result.values == [None, None]
    if IS_ROOT:
        assert result.details["uid"] != "0"
    flood = _attack("def f(s):\n    for i in range(50):\n        os.write(out, b'{\"v\": 0.25}\\n')\n    os._exit(0)",
                    canary)
    assert flood.values == [0.25, 0.25]  # never more values than inputs


@pytest.mark.parametrize(("name", "code", "bound"), [
    ("slow_stream", "def f(s):\n    while True:\n        os.write(out, b' ')\n        time.sleep(0.3)", 4.0),
    ("endless_stream", "def f(s):\n    while True:\n        os.write(out, b'{\"v\": 0.1}' * 1000)", 4.0),
    ("closes_the_pipe_and_lingers", "def f(s):\n    os.close(out)\n    time.sleep(60)", 1.5),
    ("partial_line_then_exit", "def f(s):\n    os.write(out, b'{\"v\": 0.')\n    os._exit(0)", 1.5),
])
def test_hostile_record_streams_give_bounded_results(name: str, code: str, bound: float, canary: Path,
                                                      raw_child: None) -> None:
    start = time.monotonic()
    result = _attack(code, canary)
    assert time.monotonic() - start < bound and not result.ok and result.values == [None, None], result


@pytest.mark.parametrize(("name", "line"), [
    ("deep_json", "[" * 5000),
    ("int_over_the_digit_limit", '{"v": ' + "9" * 4400 + "}"),
    ("int_beyond_float", '{"v": ' + "9" * 400 + "}"),
    ("infinity", '{"v": 1e999}'),
    ("nan", '{"v": NaN}'),
    ("boolean", '{"v": true}'),
    ("list", "[0.5]"),
    ("late_status", '{"ready": true, "network_isolated": true, "uid": "0"}'),
])
def test_parent_reader_survives_hostile_records(name: str, line: str) -> None:
    first = '{"ready": true, "network_isolated": false, "privileges_dropped": false, "uid": "7"}'
    result = _collect(f"{first}\n{line}\n{{\"v\": 0.5}}\n", 2, False, 0)
    assert result.values[0] is None and result.network_isolated is False and result.details["uid"] == "7"
    forged = _collect(f"{line}\n", 1, False, 0)  # the same line where the status belongs
    assert forged.values == [None] and forged.network_isolated in (None, True) and forged.error


def _as_non_root_grader(tmp_path: Path, code: str, *, filter_syscalls: bool = True,
                        ) -> tuple[list[float | None], dict[str, str], int, list[int]]:
    """`run_predictor` with the raw child, from a grader that sees itself as uid 1000 (emulated with
    `unshare --user`); returns values, details, reported survivors and any raw child still alive.
    `filter_syscalls=False`: without the seccomp filter, to test the mechanisms behind it alone."""
    script = tmp_path / "raw_child.py"
    raw = _RAW_CHILD.replace("CHILD_PATH", repr(sandbox_child.__file__))
    script.write_text(raw if filter_syscalls else raw.replace("keep_fds=(out,))", "keep_fds=(out,), filter_syscalls=False)"))
    driver = ("import json, os, pathlib, sys, time\nfrom discoverylab.labs.sequence import sandbox\n"
              f"sandbox._CHILD = pathlib.Path({str(script)!r})\nsandbox.check_program = lambda code, function='f': 'f'\n"
              "r = sandbox.run_predictor(sys.argv[1], ['A'], min_seconds=1.0)\ntime.sleep(0.3)\nalive = []\n"
              "for e in pathlib.Path('/proc').iterdir():\n    try:\n"
              f"        if e.name.isdigit() and e.name != str(os.getpid()) and {str(script).encode()!r} in (e / 'cmdline').read_bytes()"
              " and (e / 'stat').read_text().rsplit(') ', 1)[1][0] != 'Z':\n"
              "            alive.append(int(e.name))\n            os.kill(int(e.name), 9)\n    except OSError:\n        pass\n"
              "print(json.dumps([r.values, r.details, r.survivors, alive]))")
    src = str(Path(sandbox_child.__file__).resolve().parents[3])
    done = subprocess.run(["unshare", "--user", "--map-user=1000", "--map-group=1000", sys.executable, "-c", driver,
                           code], capture_output=True, text=True, timeout=60, env={**os.environ, "PYTHONPATH": src})
    assert done.returncode == 0, done.stderr[-2000:]
    values, details, survivors, alive = json.loads(done.stdout)
    return values, details, survivors, alive


@pytest.mark.skipif(not _user_namespaces(), reason="needs util-linux unshare and user namespaces")
def test_non_root_child_cannot_fill_its_root(tmp_path: Path) -> None:
    """A grader that is not root: the child is its namespace's root and owns the chroot directory. A
    3000-deep tree there once crashed the grader's clean-up (RecursionError) and stayed on disk; the root
    is now a read-only tmpfs of the child's mount namespace."""
    code = ("def f(s):\n    n = 0\n    try:\n        while n < 3000:\n            os.mkdir('d')\n            os.chdir('d')\n"
            "            n += 1\n    except OSError:\n        pass\n    return 0.5 if n == 0 else 1.0")
    values, details, _, alive = _as_non_root_grader(tmp_path, code)
    assert values == [0.5] and "leftover_files" not in details and alive == []


@pytest.mark.skipif(not _user_namespaces(), reason="needs util-linux unshare and user namespaces")
def test_non_root_child_cannot_outlive_the_grader_by_leaving_its_session(tmp_path: Path) -> None:
    """Not root, the program runs as PID 1 of its own PID namespace, forked from the go-between, so
    `setsid` works: it once left the process group and session the grader kills and sweeps, cleared
    its parent-death signal and slept on (reported as 0 survivors). The grader now also kills the
    namespace's PID 1, whose pid the child reports before any program code runs. (The seccomp filter
    now refuses both calls; this checks the sweep behind it, without the filter.)"""
    code = "def f(s):\n    libc.prctl(1, 0, 0, 0, 0)\n    os.setsid()\n    time.sleep(30)\n    return 1.0"
    values, _, survivors, alive = _as_non_root_grader(tmp_path, code, filter_syscalls=False)
    assert values == [None] and alive == [] and survivors == 1  # found, killed and reported truthfully


def test_parent_removes_a_tree_deeper_than_the_recursion_limit(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    fd = os.open(root, os.O_RDONLY)
    for _ in range(1500):  # os.makedirs itself would recurse too deep
        os.mkdir("d", dir_fd=fd)
        fd, old = os.open("d", os.O_RDONLY, dir_fd=fd), fd
        os.close(old)
    os.close(fd)
    _remove_tree(str(root))
    assert not root.exists()




# ---- the process layer's network and kernel surface, with some files allowed (max_files=8) ----------
_HARDENED_MORE = r"""
import ctypes, fcntl, importlib.util, json, os, socket, struct, sys
spec = importlib.util.spec_from_file_location("child", sys.argv[1])
child = importlib.util.module_from_spec(spec)
spec.loader.exec_module(child)
root, out = sys.argv[2], int(sys.argv[5])
libc = ctypes.CDLL(None, use_errno=True)
status = child.harden(cpu_seconds=5, memory_bytes=512 << 20, root_dir=root, keep_fds=(out,), max_files=8,
                      filter_syscalls=False)  # the mechanisms behind the seccomp filter, alone
outcomes = {}
def attempt(name, fn):
    try:
        fn()
        outcomes[name] = "ESCAPED"
    except BaseException as exc:
        outcomes[name] = f"{type(exc).__name__}:{getattr(exc, 'errno', '')}"
def check(result):
    if result != 0:
        raise OSError(ctypes.get_errno(), "refused")
def unix_abstract():
    socket.socket(socket.AF_UNIX).connect(LISTENER)
def loopback_up():  # SIOCSIFFLAGS with IFF_UP on lo
    fcntl.ioctl(socket.socket(socket.AF_INET, socket.SOCK_DGRAM), 0x8914, struct.pack("16sH14s", b"lo", 1, b""))
def udp_out():
    socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("192.0.2.1", 53))
attempt("unix_abstract_socket", unix_abstract)
attempt("loopback_up", loopback_up)
attempt("udp_out", udp_out)
attempt("packet_socket", lambda: socket.socket(socket.AF_PACKET, socket.SOCK_RAW))
attempt("ptrace_parent", lambda: check(libc.ptrace(16, os.getppid(), 0, 0)))
attempt("new_user_namespace", lambda: check(libc.unshare(0x10000000)))
attempt("new_network_namespace", lambda: check(libc.unshare(0x40000000)))
attempt("mount_proc", lambda: check(libc.mount(b"proc", b"/", b"proc", 0, None)))
attempt("list_proc", lambda: os.listdir("/proc"))
os.write(out, json.dumps({"status": status, "outcomes": outcomes}).encode())
"""


@pytest.mark.parametrize("as_user", [False, True], ids=["root_grader", "non_root_grader"])
def test_hardened_process_network_and_kernel_surface(as_user: bool, canary: Path, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """An abstract unix socket the grader listens on, raising the loopback, a packet socket, ptrace, new
    user or network namespaces (the classic way back out of a chroot), mounting /proc: all refused."""
    import socket

    import test_sandbox_escapes

    if not IS_ROOT or (as_user and not _user_namespaces()):
        pytest.skip("needs root (as in CI), and user namespaces for the non-root emulation")
    name = f"\0discoverylab-escape-{os.getpid()}"
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(name)
    listener.listen()
    monkeypatch.setattr(test_sandbox_escapes, "_HARDENED_ATTACKS", _HARDENED_MORE.replace("LISTENER", repr(name)))
    try:
        report, _ = test_sandbox_escapes._run_hardened_attacks(canary, tmp_path / "empty-root", as_user=as_user)
    finally:
        listener.close()
    outcomes = report["outcomes"]
    assert len(outcomes) == 9 and "ESCAPED" not in outcomes.values(), outcomes
    assert outcomes["unix_abstract_socket"].startswith("ConnectionRefusedError")  # another netns
    assert report["status"]["chrooted"] and outcomes["new_user_namespace"] == "PermissionError:1"  # EPERM in a chroot
    assert outcomes["list_proc"] in ("FileNotFoundError:2", "PermissionError:13")  # root: cannot even list /
    assert report["status"]["read_only_root"] is as_user
    assert canary.read_text() == SECRET


@pytest.mark.parametrize(("name", "code"), [
    ("attribute_chain", "def f(s):\n    return s" + ".upper()" * 900),
    ("addition_chain", "def f(s):\n    return 1" + "+1" * 30000),
    ("nested_lambdas", "f = " + "lambda s: " * 9000 + "0.5"),
    ("unary_chain", "def f(s):\n    return " + "-" * 90000 + "1"),
    ("many_item_updates", "d = {1: 0}\n" + "d[1] += 1\n" * 9000 + "def f(s):\n    return 0.5"),
    ("many_functions", "".join(f"def g{i}(s):\n    return s[0]\n" for i in range(2700)) + "def f(s):\n    return 0.5"),
    ("int_literal_over_the_digit_limit", "def f(s):\n    return " + "9" * 5000),
    ("over_the_length_limit", "def f(s):\n    return 0.5\n" + "#" * 100_001),
])
def test_hostile_source_is_checked_quickly_in_the_grader(name: str, code: str) -> None:
    """The compile check runs in the grader's own process (no limits): deep, long or huge sources must
    be accepted or rejected with a clear reason within a bounded time, never crash it."""
    start = time.monotonic()
    try:
        sandbox.check_program(code)
    except sandbox.ProgramRejected as exc:
        assert str(exc)
    assert time.monotonic() - start < 5.0
