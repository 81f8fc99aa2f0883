"""What a predictor program may touch: a RestrictedPython compile policy plus the guarded run-time namespace.

This module is the language layer of the sandbox (see `sandbox.py` for the process layer). It imports only
the standard library and RestrictedPython, because the child interpreter loads it by file path (never
through the `discoverylab` package, which could resolve to another checkout).

Why each rule (docs/tinylabs.md, "Predictor sandbox"):
* Compiling with RestrictedPython rewrites every `a.b`, `a[b]`, `a.b = c`, `a[b] = c`, `x += y`, `*args`
  and `print` into calls of guard functions we supply, and refuses names starting with `_`, so no dunder
  is ever spelled in source.
* A host function that takes an attribute *name as a string* (`functools.update_wrapper`,
  `operator.attrgetter`, `str.format` field access, `getattr`) would walk dunders for the program, so
  none is reachable: the builtins are a short list of pure functions and types, each allowed module is a
  read-only namespace of named, pure members, and `str.format`/`format_map` use a formatter whose field
  access goes through the same attribute guard.
* The attribute guard also refuses frames, code objects, tracebacks and modules as values, and every
  attribute of an exception except `args` (3.10+ `AttributeError.obj` and friends carry host objects).
"""

from __future__ import annotations

import _string  # type: ignore[import-not-found]
import ast
import collections
import functools
import itertools
import math
import operator
import re
import statistics
import string
import types
from collections.abc import Callable
from typing import Any

from RestrictedPython import compile_restricted_exec
from RestrictedPython.Guards import guarded_iter_unpack_sequence, guarded_unpack_sequence
from RestrictedPython.PrintCollector import PrintCollector
from RestrictedPython.transformer import IOPERATOR_TO_STR, RestrictingNodeTransformer, copy_locations

MAX_CODE_CHARS = 100_000
# What a prompt tells a model about the language it may write (compile_program enforces it).
PROGRAM_RULES = (
    "allowed imports: math, itertools, collections, re, statistics, functools; plain functions, loops, "
    "comprehensions, lambdas and try/except work; no classes, `with`, `match`, names starting with `_` "
    "or files; printed text is discarded"
)
ALLOWED_MODULES = frozenset({"math", "itertools", "collections", "re", "statistics", "functools"})
# Read-only members per module; None = every public builtin function, type and number of the module.
MODULE_EXPORTS: dict[str, tuple[str, ...] | None] = {
    "math": None,
    "itertools": None,
    "collections": ("Counter", "defaultdict", "deque", "OrderedDict", "ChainMap"),
    "functools": ("reduce", "lru_cache", "cache", "partial", "cmp_to_key"),
    "re": ("compile", "search", "match", "fullmatch", "findall", "finditer", "sub", "subn", "split",
           "escape", "IGNORECASE", "I", "MULTILINE", "M", "DOTALL", "S", "VERBOSE", "X", "ASCII", "A",
           "error"),
    "statistics": ("mean", "fmean", "median", "median_low", "median_high", "median_grouped", "mode",
                   "multimode", "pstdev", "pvariance", "stdev", "variance", "quantiles", "geometric_mean",
                   "harmonic_mean", "correlation", "covariance", "linear_regression", "StatisticsError"),
}
SAFE_BUILTINS = (
    "abs", "all", "any", "bin", "bool", "bytes", "callable", "chr", "complex", "dict", "divmod",
    "enumerate", "filter", "float", "format", "frozenset", "hash", "hex", "int", "isinstance", "issubclass",
    "iter", "len", "list", "map", "max", "min", "next", "oct", "ord", "pow", "range", "repr", "reversed",
    "round", "set", "slice", "sorted", "str", "sum", "tuple", "zip",
    "ArithmeticError", "AssertionError", "AttributeError", "Exception", "IndexError", "KeyError",
    "LookupError", "NameError", "OverflowError", "RuntimeError", "StopIteration", "TypeError",
    "ValueError", "ZeroDivisionError",
)
# Refused in source with a clear message (they are absent at run time anyway).
FORBIDDEN_NAMES = frozenset({
    "open", "compile", "globals", "locals", "vars", "getattr", "setattr", "delattr", "hasattr", "input",
    "breakpoint", "exit", "quit", "help", "memoryview", "object", "type", "super", "classmethod",
    "staticmethod", "property", "dir", "id",
})
# Frames, code objects, tracebacks and generator internals lead back to the host's globals.
DENIED_ATTR_PREFIXES = ("_", "f_", "gi_", "cr_", "ag_", "tb_", "co_")
DENIED_ATTRS = frozenset({"mro", "with_traceback"})
_HOST_ONLY_VALUES = (types.ModuleType, types.FrameType, types.CodeType, types.TracebackType)
_WRITABLE_TYPES = (list, dict, set, bytearray, collections.deque, collections.Counter,
                   collections.defaultdict, collections.OrderedDict)


class SandboxViolation(AttributeError):
    """A guarded access was refused; an AttributeError so `hasattr`-style code sees a plain miss."""


def attribute_refusal(name: object) -> str | None:
    """Why attribute `name` may not be read or written by a predictor (None = allowed)."""
    if not isinstance(name, str):
        return "attribute names must be strings"
    if name.startswith(DENIED_ATTR_PREFIXES) or name in DENIED_ATTRS:
        return f"attribute {name!r} is not allowed (no private, dunder, frame or type-walking access)"
    return None


class _Policy(RestrictingNodeTransformer):
    """RestrictedPython's transformer plus our rules: allow-listed imports, no classes or `with`,
    frame-walking attribute names refused in source, and `d[k] += v` rewritten through the guards."""

    def check_import_names(self, node: ast.Import | ast.ImportFrom) -> Any:
        if isinstance(node, ast.ImportFrom):
            if node.level or (node.module or "") not in ALLOWED_MODULES:
                self.error(node, f"import from {node.module!r} is not allowed; allowed: "
                                 f"{', '.join(sorted(ALLOWED_MODULES))}")
        else:
            for alias in node.names:
                if alias.name not in ALLOWED_MODULES:
                    self.error(node, f"import of {alias.name!r} is not allowed; allowed: "
                                     f"{', '.join(sorted(ALLOWED_MODULES))}")
        return super().check_import_names(node)

    def visit_Name(self, node: ast.Name) -> Any:
        if node.id in FORBIDDEN_NAMES:
            self.error(node, f"name {node.id!r} is not allowed")
        return super().visit_Name(node)

    def visit_Attribute(self, node: ast.Attribute) -> Any:
        reason = attribute_refusal(node.attr)
        if reason and not node.attr.startswith("_"):  # RestrictedPython reports underscores itself
            self.error(node, reason)
        return super().visit_Attribute(node)

    def visit_ClassDef(self, node: ast.ClassDef) -> Any:
        self.error(node, "class definitions are not allowed; define functions")
        return node

    def visit_With(self, node: ast.With) -> Any:
        self.error(node, "with statements are not allowed")
        return node

    def visit_Nonlocal(self, node: ast.Nonlocal) -> Any:
        """Closures may rebind their own variables (names are checked like any other)."""
        for name in node.names:
            self.check_name(node, name)
        return node

    def visit_Global(self, node: ast.Global) -> Any:
        """`global _getattr_` could only precede a rebinding (refused anyway): refuse the name here too."""
        for name in node.names:
            self.check_name(node, name)
        return node

    def visit_AnnAssign(self, node: ast.AnnAssign) -> Any:
        """`x: T = v` runs as `x = v` (annotations are dropped, never evaluated)."""
        if not isinstance(node.target, ast.Name):
            self.error(node, "annotated assignment is only allowed to a plain name")
            return node
        new_node: ast.stmt = (ast.Assign(targets=[node.target], value=node.value) if node.value is not None
                              else ast.Pass())
        copy_locations(new_node, node)
        return self.visit(new_node)

    def visit_AugAssign(self, node: ast.AugAssign) -> Any:
        if not isinstance(node.target, ast.Subscript):
            return super().visit_AugAssign(node)
        # 'a[k] += v' becomes '_augitem_(_write_(a), k, "+=", v)': evaluated once, through the guards.
        node = self.node_contents_visit(node)
        target = node.target
        assert isinstance(target, ast.Subscript)
        key = target.slice
        if isinstance(key, ast.Slice):
            key = ast.Call(func=ast.Name("slice", ast.Load()), keywords=[],
                           args=[part or ast.Constant(None) for part in (key.lower, key.upper, key.step)])
        call = ast.Call(func=ast.Name("_augitem_", ast.Load()), keywords=[],
                        args=[target.value, key, ast.Constant(IOPERATOR_TO_STR[type(node.op)]), node.value])
        new_node = ast.Expr(value=call)
        copy_locations(new_node, node)
        ast.fix_missing_locations(new_node)
        return new_node


class ProgramCompileError(ValueError):
    """RestrictedPython or our policy refused the source; the message lists the first problems."""


def compile_program(code: str) -> types.CodeType:
    """Compile predictor source under the policy; raise `ProgramCompileError` with a short reason."""
    if len(code) > MAX_CODE_CHARS:
        raise ProgramCompileError(f"program is longer than {MAX_CODE_CHARS} characters")
    result = compile_restricted_exec(code, filename="<predictor>", policy=_Policy)
    if result.errors or result.code is None:
        raise ProgramCompileError("; ".join(str(e) for e in result.errors[:3])[:500] or "does not compile")
    return result.code


def _deny(reason: str) -> SandboxViolation:
    return SandboxViolation(reason)


_MISSING = object()


def guarded_getattr(obj: Any, name: str, default: Any = _MISSING) -> Any:
    """`obj.name` for the program: public, non-introspective attributes only; no host-only values."""
    reason = attribute_refusal(name)
    if reason:
        raise _deny(reason)
    if isinstance(obj, BaseException) and name != "args":
        raise _deny(f"exception attribute {name!r} is not allowed (only .args)")
    if name in ("format", "format_map") and (isinstance(obj, str) or (isinstance(obj, type)
                                                                      and issubclass(obj, str))):
        return _safe_format_method(obj, name)
    try:
        value = getattr(obj, name)
    except AttributeError:
        if default is _MISSING:
            raise
        return default
    if isinstance(value, _HOST_ONLY_VALUES):
        raise _deny(f"attribute {name!r} gives a {type(value).__name__}, which is not allowed")
    return value


def guarded_getitem(obj: Any, key: Any) -> Any:
    """`obj[key]`: plain indexing (no reachable container maps names to host internals)."""
    value = obj[key]
    if isinstance(value, _HOST_ONLY_VALUES):
        raise _deny(f"item gives a {type(value).__name__}, which is not allowed")
    return value


def guarded_write(obj: Any) -> Any:
    """Target of `obj[k] = v`, `del obj[k]` and `obj.a = v`: only the program's own mutable containers."""
    if type(obj) in _WRITABLE_TYPES:
        return obj
    raise TypeError(f"cannot modify a {type(obj).__name__} object in a predictor")


_INPLACE: dict[str, Callable[[Any, Any], Any]] = {
    "+=": operator.iadd, "-=": operator.isub, "*=": operator.imul, "/=": operator.itruediv,
    "//=": operator.ifloordiv, "%=": operator.imod, "**=": operator.ipow, "<<=": operator.ilshift,
    ">>=": operator.irshift, "|=": operator.ior, "^=": operator.ixor, "&=": operator.iand,
    "@=": operator.imatmul,
}


def inplace_var(op: str, target: Any, value: Any) -> Any:
    """`x op= v` for names (RestrictedPython's `_inplacevar_`)."""
    return _INPLACE[op](target, value)


def augmented_item(container: Any, key: Any, op: str, value: Any) -> None:
    """`container[key] op= value`, container already passed through `guarded_write`."""
    container[key] = _INPLACE[op](guarded_getitem(container, key), value)


def guarded_apply(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """`f(*a, **k)` calls; arguments need no wrapping since nothing reachable is host-only."""
    return func(*args, **kwargs)


class _SafeFormatter(string.Formatter):
    """`str.format` whose `{0.attr}` / `{0[key]}` fields go through the guards."""

    def get_field(self, field_name: str, args: Any, kwargs: Any) -> tuple[Any, Any]:
        first, rest = _string.formatter_field_name_split(field_name)
        obj = self.get_value(first, args, kwargs)
        for is_attr, part in rest:
            obj = guarded_getattr(obj, part) if is_attr else guarded_getitem(obj, part)
        return obj, first


_FORMATTER = _SafeFormatter()


def _safe_format_method(obj: Any, name: str) -> Callable[..., str]:
    if isinstance(obj, type):  # unbound: str.format(template, ...)
        if name == "format":
            return lambda template, *a, **k: _FORMATTER.vformat(str(template), a, k)
        return lambda template, mapping: _FORMATTER.vformat(str(template), (), mapping)
    if name == "format":
        return lambda *a, **k: _FORMATTER.vformat(obj, a, k)
    return lambda mapping: _FORMATTER.vformat(obj, (), mapping)


class ModuleView:
    """Read-only view of an allowed module: only its listed pure members, nothing to write or walk."""

    __slots__ = ("_name", "_members")

    def __init__(self, name: str, members: dict[str, Any]) -> None:
        object.__setattr__(self, "_name", name)
        object.__setattr__(self, "_members", members)

    def __getattr__(self, attr: str) -> Any:
        try:
            return self._members[attr]
        except KeyError:
            raise AttributeError(f"{self._name}.{attr} is not available in the sandbox") from None

    def __setattr__(self, attr: str, value: Any) -> None:
        raise TypeError(f"cannot modify module {self._name}")


def _module_view(name: str) -> ModuleView:
    module = {"math": math, "itertools": itertools, "collections": collections, "functools": functools,
              "re": re, "statistics": statistics}[name]
    exports = MODULE_EXPORTS[name]
    if exports is None:
        members = {k: v for k, v in vars(module).items() if not k.startswith("_")
                   and isinstance(v, types.BuiltinFunctionType | type | int | float)}
    else:
        members = {k: getattr(module, k) for k in exports if hasattr(module, k)}
    return ModuleView(name, members)


def build_namespace() -> dict[str, Any]:
    """Fresh globals for one program: guarded builtins, guard hooks and an allow-list import."""
    import builtins

    proxies: dict[str, ModuleView] = {}

    def guarded_import(name: str, globals: Any = None, locals: Any = None,  # noqa: A002
                       fromlist: Any = (), level: int = 0) -> ModuleView:
        if level or name not in ALLOWED_MODULES:
            raise ImportError(f"import of {name!r} is not allowed")
        if name not in proxies:
            proxies[name] = _module_view(name)
        return proxies[name]

    safe: dict[str, Any] = {k: getattr(builtins, k) for k in SAFE_BUILTINS}
    safe["__import__"] = guarded_import
    return {
        "__builtins__": safe, "__name__": "predictor",
        "_getattr_": guarded_getattr, "_getitem_": guarded_getitem, "_write_": guarded_write,
        "_getiter_": iter, "_iter_unpack_sequence_": guarded_iter_unpack_sequence,
        "_unpack_sequence_": guarded_unpack_sequence, "_inplacevar_": inplace_var,
        "_augitem_": augmented_item, "_apply_": guarded_apply, "_print_": PrintCollector,
    }
