"""More escape attempts on the predictor sandbox's language layer, alone and with the process layer.

* `LANGUAGE_ATTACKS` run through `run_predictor` (both layers) AND through the policy alone in a
  throw-away interpreter with no process layer at all, so the language layer holds by itself
  (tests/labs/test_sandbox_escapes_process.py attacks the process layer alone and the grader's side).
* Resource attacks and results that are not finite floats must give bounded results; the same program
  must give the same values on every run.
Every program returns 1.0 only if its trick worked; `_attack` (from test_sandbox_escapes) also checks the
canary file, the directory listing and that no process is left.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_sandbox_escapes import ESCAPES, GUARD_WORDS, SECRET, _attack, canary

from discoverylab.labs.sequence import sandbox_policy
from discoverylab.labs.sequence.sandbox import run_predictor

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
    "format_map_empty_field_name": "def f(s):\n    return 1.0 if '{.__class__}'.format_map({'': s}) else 0.0",
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
    "format_auto_field_attribute": "def f(s):\n    return 1.0 if 'str' in '{.__class__}'.format(s) else 0.0",
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


def test_a_text_result_is_an_invalid_prediction_not_a_number(canary: Path) -> None:
    """`float()` once turned the text "0.5" (or " 1e-3 ") into a value, so a program that returned text
    was graded as if it had computed a number. Now anything but a number is a call error that says what
    came back; a bool is a number, as in Python (`False` is 0.0, `True` 1.0)."""
    code = "def f(s):\n    return {'A': '0.5', 'C': ' 1e-3 ', 'G': b'0.25', 'T': False, 'N': 0.5, 'M': None}[s]"
    result = _attack(code, canary, ("A", "C", "G", "T", "N", "M"))
    assert result.ok and result.values == [None, None, None, 0.0, 0.5, None] and result.call_errors == 4
    assert result.details["call_error"] == "TypeError: a prediction must be a number, not str '0.5'"


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
