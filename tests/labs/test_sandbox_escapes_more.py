"""More escape attempts on the predictor sandbox, each layer attacked on its own and both together.

* `LANGUAGE_ATTACKS` run through `run_predictor` (both layers) AND through the policy alone in a
  throw-away interpreter with no process layer at all, so the language layer holds by itself.
* `RAW_ATTACKS` run with full Python powers in the real hardened child (the policy is bypassed by a
  stand-in child that calls the same `harden`), so the process layer holds by itself.
* The grader's parent side is fed hostile record streams (deep JSON, huge ints, forged status lines,
  slow or endless streams, an early close) and must give a bounded, truthful result.
Every program returns 1.0 only if its trick worked; `_attack` (from test_sandbox_escapes) also checks the
canary file, the directory listing and that no process is left.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_sandbox_escapes import ESCAPES, GUARD_WORDS, IS_ROOT, SECRET, _attack, _user_namespaces, canary

from discoverylab.labs.sequence import sandbox, sandbox_child, sandbox_policy
from discoverylab.labs.sequence.sandbox import _collect, _remove_tree, run_predictor

__all__ = ["canary"]  # the fixture, imported for its name

# ---- the language layer: refused by the compile policy or a run-time guard ---------------------------
REFUSED = {
    "operator_attrgetter": "import operator\ndef f(s):\n    return 1.0 if operator.attrgetter('__class__')(s) else 0.0",
    "operator_methodcaller_from_import": "from operator import methodcaller\ndef f(s):\n    return 1.0",
    "functools_reduce_getattr": "import functools\ndef f(s):\n"
        "    return 1.0 if functools.reduce(getattr, ['__class__', '__base__'], s) else 0.0",
    "string_formatter_get_field": "import string\ndef f(s):\n"
        "    return 1.0 if string.Formatter().get_field('0.__class__', [s], {}) else 0.0",
    "functools_singledispatch_registry": "import functools\ndef f(s):\n"
        "    return 1.0 if functools.singledispatch(len).registry else 0.0",
    "format_map_defaultdict_dunder": "import collections\ndef f(s):\n    d = collections.defaultdict(lambda: s)\n"
        "    return 1.0 if 'str' in '{x.__class__}'.format_map(d) else 0.0",
    "format_item_then_dunder": "def f(s):\n    return 1.0 if '{0[0].__class__}'.format([s]) else 0.0",
    "format_spec_nested_item_dunder": "def f(s):\n    return 1.0 if '{0:{1[0].__class__}}'.format('', [s]) else 0.0",
    "unbound_format_map": "def f(s):\n    return 1.0 if str.format_map('{a.__class__}', {'a': s}) else 0.0",
    "format_through_map": "def f(s):\n    return 1.0 if list(map(str.format, ['{0.__globals__}'], [f])) else 0.0",
    "format_through_partial": "import functools\ndef f(s):\n"
        "    return 1.0 if functools.partial(str.format, '{0.__globals__}')(f) else 0.0",
    "format_through_lru_cache": "import functools\ndef f(s):\n"
        "    return 1.0 if functools.lru_cache()(str.format)('{0.__globals__}', f) else 0.0",
    "format_bound_method_kept": "def f(s):\n    m = '{0.__globals__}'.format\n    return 1.0 if m(f) else 0.0",
    "format_star_args": "def f(s):\n    return 1.0 if '{0.__class__}'.format(*[s]) else 0.0",
    "format_star_kwargs": "def f(s):\n    return 1.0 if '{x.__class__}'.format(**{'x': s}) else 0.0",
    "format_gi_yieldfrom": "def f(s):\n    g = (x for x in [1])\n    return 1.0 if '{0.gi_yieldfrom}'.format(g) else 0.0",
    "generator_function_frame": "def g():\n    yield 1\ndef f(s):\n    return 1.0 if g().gi_frame else 0.0",
    "coroutine_cr_frame": "async def g():\n    return 1\ndef f(s):\n    return 1.0 if g().cr_frame else 0.0",
    "async_generator_ag_frame": "async def g():\n    yield 1\ndef f(s):\n    return 1.0 if '{0.ag_frame}'.format(g()) else 0.0",
    "exception_context_traceback": "def f(s):\n    try:\n        try:\n            1 / 0\n        except ZeroDivisionError:\n"
        "            [][1]\n    except IndexError as e:\n        return 1.0 if '{0.__context__.__traceback__}'.format(e) else 0.0",
    "exception_cause": "def f(s):\n    try:\n        raise ValueError('x') from KeyError('y')\n    except ValueError as e:\n"
        "        return 1.0 if '{0.__cause__}'.format(e) else 0.0",
    "exception_with_traceback_via_format": "def f(s):\n    try:\n        1 / 0\n    except Exception as e:\n"
        "        return 1.0 if '{0.with_traceback}'.format(e) else 0.0",
    "unicode_error_object": "def f(s):\n    try:\n        b'\\xff'.decode('utf-8')\n    except ValueError as e:\n"
        "        return 1.0 if e.object else 0.0",
    "stop_iteration_value": "def f(s):\n    try:\n        next(iter([]))\n    except StopIteration as e:\n"
        "        return 1.0 if e.value is None else 0.0",
    "exception_group_star": "def f(s):\n    try:\n        raise ValueError(1)\n    except* ValueError:\n        return 1.0\n"
        "    return 0.0",
    "lambda_closure_cells": "def f(s):\n    y = s\n    h = lambda: y\n"
        "    return 1.0 if '{0.__closure__[0].cell_contents}'.format(h) else 0.0",
    "default_argument_defaults": "def f(s, g=len):\n    return 1.0 if '{0.__defaults__}'.format(f) else 0.0",
    "default_argument_walks_at_definition": "def f(s, g='{0.__globals__}'.format(len)):\n    return 1.0",
    "walrus_binds_guard_hook": "def f(s):\n    return 1.0 if [(_getattr_ := len) for c in s] else 0.0",
    "comprehension_reads_builtins": "def f(s):\n    return 1.0 if [__builtins__ for c in s] else 0.0",
    "global_names_guard_hook": "def f(s):\n    global _write_\n    return 1.0",
    "global_rebinds_guard_hook": "def f(s):\n    global _write_\n    _write_ = lambda x: x\n    return 1.0",
    "except_as_guard_hook": "def f(s):\n    try:\n        1 / 0\n    except Exception as _getattr_:\n"
        "        return 1.0\n    return 0.0",
    "import_as_guard_hook": "from math import sqrt as _getattr_\ndef f(s):\n    return 1.0",
    "star_target_guard_hook": "def f(s):\n    a, *_getattr_ = [1, 2]\n    return 1.0",
    "call_guard_hook_directly": "def f(s):\n    return 1.0 if _getattr_(s, 'upper') else 0.0",
    "match_mapping_pattern": "def f(s):\n    match {'k': f}:\n        case {'k': g}:\n            return 1.0\n    return 0.0",
    "module_view_item_write": "import math\ndef f(s):\n    math['pi'] = 4\n    return 1.0",
    "module_view_delete_member": "import math\ndef f(s):\n    del math.sqrt\n    return 1.0",
    "builtin_type_patch": "def f(s):\n    str.upper = len\n    return 1.0",
    "allowed_class_patch": "import collections\ndef f(s):\n    collections.Counter.most_common = len\n    return 1.0",
    "function_attribute_set": "def f(s):\n    f.x = 1\n    return 1.0",
    "unicode_lookalike_dunder": "def f(s):\n    return 1.0 if s.\ufe33\ufe33class\ufe33\ufe33 else 0.0",
    "default_argument_walk_in_lambda": "g = lambda x='{0.__globals__}'.format(len): x\ndef f(s):\n    return 1.0",
    "generator_frame_in_generator_expression": "def f(s):\n"
        "    return 1.0 if next('{0.gi_frame}'.format(g) for g in [(x for x in s)]) else 0.0",
}
# ---- the language layer: runs, but the trick yields nothing (no guard needed) -------------------------
HARMLESS = {
    "percent_mapping_repr": "def f(s):\n    return 1.0 if 'globals' in ('%(k)r' % {'k': f}) else 0.0",
    "format_builtin_spec_fields": "def f(s):\n    return 1.0 if 'str' in format(s, '{0.__class__}') else 0.0",
    "format_item_dunder_key": "def f(s):\n    return 1.0 if '{0[__globals__]}'.format(f) else 0.0",
    "format_spec_nested_too_deep": "def f(s):\n    return 1.0 if '{0:{1:{2}}}'.format(1, 2, 3) else 0.0",
    "re_expand_template_fields": "import re\ndef f(s):\n"
        "    return 1.0 if re.match('(A)', 'A').expand('{0.__class__}') != '{0.__class__}' else 0.0",
    "codec_lookup_by_name": "def f(s):\n    return 1.0 if b'x'.decode('rot13') else 0.0",
    "print_to_a_deque": "import collections\ndef f(s):\n    print('x', file=collections.deque())\n    return 1.0",
    "keyword_argument_dunder_field": "def f(s):\n"
        "    return 1.0 if '{__globals__}'.format(__globals__=f) != str(f) else 0.0",
    "unicode_lookalike_dunder_in_format": "def f(s):\n    return 1.0 if '{0.\uff3f\uff3fclass\uff3f\uff3f}'.format(s) else 0.0",
    "annotations_are_never_evaluated": "def f(s) -> '{0.__globals__}'.format(len):\n    return 0.25",
    "rebind_float_for_the_grader": "float = lambda x: 1.0\ndef f(s):\n    return 'nan'",
}
LANGUAGE_ATTACKS = {**REFUSED, **HARMLESS}


@pytest.mark.parametrize("name", list(LANGUAGE_ATTACKS))
def test_language_attack_fails_with_both_layers(name: str, canary: Path) -> None:
    result = _attack(LANGUAGE_ATTACKS[name], canary)
    if name in REFUSED and not result.rejected:
        reason = result.details.get("call_error") or result.error or ""
        assert any(word in reason for word in GUARD_WORDS), reason
    if name == "rebind_float_for_the_grader":  # its own global: the grader converts with its own float()
        assert result.values == [None, None]


_LANGUAGE_ONLY = r"""
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("policy", sys.argv[1])
policy = importlib.util.module_from_spec(spec)
spec.loader.exec_module(policy)
out = {}
for name, code in json.loads(sys.stdin.read()).items():
    try:
        compiled = policy.compile_program(code)
    except policy.ProgramCompileError as exc:
        out[name] = ["rejected", str(exc)]
        continue
    namespace = policy.build_namespace()
    try:
        exec(compiled, namespace)
        value = namespace["f"]("ACGT")
        out[name] = ["value", value == 1.0, repr(value)[:100]]
    except Exception as exc:
        out[name] = ["error", f"{type(exc).__name__}: {exc}"[:300]]
print(json.dumps(out))
"""


def test_language_layer_alone_holds(canary: Path) -> None:
    """Every language attack, old and new, with NO process layer: plain interpreter, real files, network
    and processes within reach. None may return 1.0 or touch the canary, and each old ESCAPES entry
    and each REFUSED one must be stopped by the policy or a guard, not by a missing file or module."""
    programs = {k: v.replace("CANARY", str(canary)) for k, v in {**ESCAPES, **LANGUAGE_ATTACKS}.items()}
    before = sorted(p.name for p in canary.parent.iterdir())
    done = subprocess.run([sys.executable, "-I", "-c", _LANGUAGE_ONLY, sandbox_policy.__file__],
                          input=json.dumps(programs), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout)
    assert set(out) == set(programs)
    for name, (kind, *rest) in out.items():
        assert not (kind == "value" and rest[0]), f"{name} escaped the language layer: {rest}"
        if name in REFUSED or name in ESCAPES:
            assert kind == "rejected" or any(w in rest[0] for w in GUARD_WORDS), (name, kind, rest)
    assert canary.read_text() == SECRET and sorted(p.name for p in canary.parent.iterdir()) == before


def test_no_public_attribute_path_reaches_host_internals() -> None:
    """Walk every value a program can name (builtins, module members, sample objects of each kind),
    through public attributes (via the real guard), items and `lru_cache` wrappers (which copy
    `__dict__`): no module, module globals, `type`, `object` or refused builtin is reachable."""
    import builtins
    import collections
    import functools
    import re
    import types

    ns = sandbox_policy.build_namespace()
    roots: list[object] = [*ns["__builtins__"].values()]
    for module in sandbox_policy.ALLOWED_MODULES:
        view = ns["__builtins__"]["__import__"](module)
        roots += [sandbox_policy.guarded_getattr(view, k) for k in sandbox_policy.MODULE_EXPORTS[module] or ()]
        roots += [v for k, v in vars(sys.modules[module]).items() if sandbox_policy.MODULE_EXPORTS[module] is None
                  and not k.startswith("_") and isinstance(v, types.BuiltinFunctionType | type | int | float)]
    pattern = re.compile("(?P<a>A)")
    roots += [pattern, pattern.match("A"), pattern.scanner("A"), (x for x in [1]), functools.lru_cache()(len),
              functools.lru_cache()(len).cache_info(), functools.partial(len), functools.cmp_to_key(len)(1),
              collections.ChainMap({}), collections.defaultdict(int), collections.Counter("a"), slice(1, 2),
              range(2), [].append, ValueError("x"), "".format, {}.keys(), 1j, map(len, []), bytearray()]
    forbidden = {id(v) for k, v in vars(builtins).items() if k not in sandbox_policy.SAFE_BUILTINS
                 and callable(v) and not isinstance(v, type)} | {id(type), id(object)}
    globals_ids = {id(vars(m)) for m in list(sys.modules.values()) if hasattr(m, "__dict__")}
    seen: set[int] = set()
    kept: list[object] = []
    stack = [(repr(r)[:40], r, 0) for r in roots]
    while stack:
        path, obj, depth = stack.pop()
        if id(obj) in seen or depth > 6:
            continue
        seen.add(id(obj))
        kept.append(obj)  # alive until the end, so no later object reuses its id
        assert not isinstance(obj, types.ModuleType) and id(obj) not in forbidden | globals_ids, path
        children: list[tuple[str, object]] = []
        for name in dir(obj):
            if sandbox_policy.attribute_refusal(name) is None:
                try:
                    children.append((name, sandbox_policy.guarded_getattr(obj, name)))
                except Exception:  # noqa: BLE001 - refused or absent: not reachable
                    pass
        if isinstance(obj, dict | types.MappingProxyType | list | tuple):
            items = obj.items() if isinstance(obj, dict | types.MappingProxyType) else enumerate(obj)
            children += [(f"[{k!r}]", v) for k, v in list(items)[:200]]
        if callable(obj):
            try:
                wrapper = functools.lru_cache()(obj)
                children += [(f"cache.{k}", v) for k, v in vars(wrapper).items() if not k.startswith("_")]
            except TypeError:
                pass
        stack += [(f"{path}.{k}", v, depth + 1) for k, v in children]
    assert len(seen) > 300  # the walk did reach the objects it means to check


# ---- resources and results (both layers) --------------------------------------------------------------
@pytest.mark.parametrize(("name", "code"), [
    ("str_times_int_bomb", "def f(s):\n    return len(s * (10 ** 10))"),
    ("format_width_bomb", "def f(s):\n    return len('{0:>{1}}'.format(s, 10 ** 9))"),
    ("fstring_width_bomb", "def f(s):\n    n = 10 ** 9\n    return len(f'{s:>{n}}')"),
    ("bytes_bomb", "def f(s):\n    return len(bytes(10 ** 10))"),
    ("huge_int_power", "def f(s):\n    return float(3 ** 10 ** 9)"),
    ("deep_list_repr", "def f(s):\n    x = []\n    for i in range(300000):\n        x = [x]\n    return len(repr(x))"),
    ("deep_dict_str", "def f(s):\n    x = {}\n    for i in range(300000):\n        x = {1: x}\n    return len(str(x))"),
    ("deep_iterator_chain_c_stack", "def f(s):\n    x = iter([s])\n    for i in range(2000000):\n"
                                    "        x = map(len, x)\n    return next(x)"),
    ("catastrophic_regex", "import re\ndef f(s):\n    return 1.0 if re.match('(a+)+$', 'a' * 64 + 'b') else 0.5"),
])
def test_resource_attack_is_bounded(name: str, code: str, canary: Path) -> None:
    start = time.monotonic()
    result = _attack(code, canary)
    assert not result.ok and result.values == [None, None], (name, result)
    assert time.monotonic() - start < 10.0


def test_results_that_are_not_finite_floats_count_as_missing(canary: Path) -> None:
    code = ("def f(s):\n    return {'A': float('nan'), 'C': float('inf'), 'G': '1e999', 'T': 10 ** 400,"
            " 'N': [1.0], 'M': 1j}[s]")
    result = _attack(code, canary, ("A", "C", "G", "T", "N", "M"))
    assert result.values == [None] * 6 and result.ok


def test_huge_exception_message_is_cut(canary: Path) -> None:
    result = _attack("def f(s):\n    raise ValueError('x' * 10 ** 7)", canary)
    assert result.values == [None, None] and len(result.details["call_error"]) <= 300


def test_state_does_not_survive_between_runs(canary: Path) -> None:
    """Each run is a fresh process: a program cannot carry memory (earlier inputs, its own earlier
    values) from one graded run into the next."""
    code = "seen = []\ndef f(s):\n    seen.append(s)\n    return len(seen) / 10"
    assert _attack(code, canary).values == _attack(code, canary).values == [0.1, 0.2]


def _aslr_can_be_disabled() -> bool:
    probe = ("import ctypes; l = ctypes.CDLL(None); p = l.personality(0xffffffff); l.personality(p | 0x40000);"
             " print(l.personality(0xffffffff) & 0x40000)")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=10)
    return done.stdout.strip() not in ("", "0")


@pytest.mark.parametrize(("name", "code"), [
    ("hash_of_str", "def f(s):\n    return (hash(s) % 2 ** 52) / 2 ** 52"),
    ("set_order_of_str", "def f(s):\n    return sum(i * ord(c) for i, c in enumerate(set(s + 'XYZW'))) / 1e4"),
    ("hash_of_function", "def f(s):\n    return (hash(f) % 2 ** 40) / 2 ** 40"),
])
def test_same_program_gives_the_same_values_every_run(name: str, code: str) -> None:
    """A program must not score differently on each run: the str hash seed is fixed and (where the
    kernel allows personality(2)) addresses are not randomised."""
    if name == "hash_of_function" and not _aslr_can_be_disabled():
        pytest.skip("personality(ADDR_NO_RANDOMIZE) is refused here")
    runs = [run_predictor(code, ["ACGT", "GGTA"]).values for _ in range(3)]
    assert runs[0] == runs[1] == runs[2] and None not in runs[0]


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
                      root_dir=payload["root_dir"], keep_fds=(out,))
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


_KNOWN_PAYLOAD = "{'code', 'function', 'inputs', 'result_fd', 'root_dir', 'cpu_seconds', 'memory_bytes'}"
RAW_ATTACKS = {
    "read_canary": "def f(s):\n    return 1.0 if open('CANARY').read() else 0.0",
    "environment_of_the_grader": "def f(s):\n    return 1.0 if set(os.environ) - {'PYTHONHASHSEED', 'LC_CTYPE'}"
        " or 'SECRET' in str(os.environ) else 0.0",
    "proc_file_system": "def f(s):\n    return 1.0 if os.path.exists('/proc/self') or os.path.exists('/etc') else 0.0",
    "inherited_file_descriptors": "def f(s):\n    fds = []\n    for fd in range(4096):\n        try:\n"
        "            os.fstat(fd)\n            fds.append(fd)\n        except OSError:\n            pass\n"
        "    return 1.0 if set(fds) - {0, 1, 2, out} else 0.0",
    "fchdir_out_of_the_chroot": "def f(s):\n    for fd in (0, 1, 2, out):\n        try:\n            os.fchdir(fd)\n"
        "        except OSError:\n            pass\n    return 1.0 if os.path.exists('/etc') else 0.0",
    "classic_chroot_escape": "def f(s):\n    try:\n        os.mkdir('e')\n        os.chroot('e')\n    except OSError:\n"
        "        pass\n    for i in range(64):\n        os.chdir('..')\n    try:\n        os.chroot('.')\n"
        "    except OSError:\n        pass\n    return 1.0 if os.path.exists('/etc') else 0.0",
    "create_in_own_root": "def f(s):\n    os.mkdir('/made-here')\n    return 1.0",
    "signal_every_process": "def f(s):\n    os.kill(-1, signal.SIGKILL)\n    return 0.5",
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


@pytest.mark.skipif(not _user_namespaces(), reason="needs util-linux unshare and user namespaces")
def test_non_root_child_cannot_fill_its_root(tmp_path: Path) -> None:
    """A grader that is not root: the child is its namespace's root and owns the chroot directory. A
    3000-deep tree there once crashed the grader's clean-up (RecursionError) and stayed on disk; the root
    is now a read-only tmpfs of the child's mount namespace."""
    script = tmp_path / "raw_child.py"
    script.write_text(_RAW_CHILD.replace("CHILD_PATH", repr(sandbox_child.__file__)))
    driver = ("import json, pathlib, sys\nfrom discoverylab.labs.sequence import sandbox\n"
              f"sandbox._CHILD = pathlib.Path({str(script)!r})\nsandbox.check_program = lambda code, function='f': 'f'\n"
              "r = sandbox.run_predictor(sys.argv[1], ['A'])\nprint(json.dumps([r.values, r.details]))")
    code = ("def f(s):\n    n = 0\n    try:\n        while n < 3000:\n            os.mkdir('d')\n            os.chdir('d')\n"
            "            n += 1\n    except OSError:\n        pass\n    return 0.5 if n == 0 else 1.0")
    src = str(Path(sandbox_child.__file__).resolve().parents[3])
    done = subprocess.run(["unshare", "--user", "--map-user=1000", "--map-group=1000", sys.executable, "-c", driver,
                           code], capture_output=True, text=True, timeout=60, env={**os.environ, "PYTHONPATH": src})
    assert done.returncode == 0, done.stderr[-2000:]
    values, details = json.loads(done.stdout)
    assert values == [0.5] and "leftover_files" not in details


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
status = child.harden(cpu_seconds=5, memory_bytes=512 << 20, root_dir=root, keep_fds=(out,), max_files=8)
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
