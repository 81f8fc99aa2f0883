"""Run an agent's predictor program `def f(s): ...` safely, to grade it on held-out sequences (spec §2.8, §4).

Untrusted code is never executed in this process. Two layers:
1. A static AST check here (`check_program`): only `math, itertools, collections, re, statistics,
   functools` may be imported; no dunder names or attributes, no `_private` attributes, and none of
   the builtins that reach files, the interpreter or introspection (`open`, `eval`, `exec`,
   `getattr`, `globals`, ...).
2. A child interpreter (`python -I -S`, empty environment, new session) with CPU, address-space,
   file-size and open-file limits, restricted `__builtins__` and an import hook enforcing the same
   allow-list; a wall-clock timeout (2 s per 100 calls by default) kills its whole process group.
The child streams one result line per input, so a program that hangs on input 57 still gets
credit for inputs 1-56.
"""

from __future__ import annotations

import ast
import json
import logging
import math
import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field

logger = logging.getLogger(__name__)

ALLOWED_MODULES = frozenset({"math", "itertools", "collections", "re", "statistics", "functools"})
FORBIDDEN_NAMES = frozenset({
    "open", "eval", "exec", "compile", "__import__", "globals", "locals", "vars", "getattr", "setattr",
    "delattr", "input", "breakpoint", "exit", "quit", "help", "memoryview", "object", "type",
    "super", "classmethod", "staticmethod", "property", "dir", "id", "print", "__builtins__",
    "__loader__", "__spec__",
})
# Frames, code objects and tracebacks lead back to the runner's globals; none is needed to compute f.
_FORBIDDEN_ATTR_PREFIXES = ("_", "f_", "gi_", "cr_", "ag_", "tb_", "co_")
_FORBIDDEN_ATTRS = frozenset({"mro", "with_traceback", "format_map"})
SAFE_BUILTINS = (
    "abs", "all", "any", "bin", "bool", "chr", "dict", "divmod", "enumerate", "filter", "float",
    "format", "frozenset", "hash", "hex", "int", "isinstance", "issubclass", "iter", "len", "list",
    "map", "max", "min", "next", "oct", "ord", "pow", "range", "repr", "reversed", "round", "set",
    "slice", "sorted", "str", "sum", "tuple", "zip", "ValueError", "KeyError", "IndexError",
    "ZeroDivisionError", "TypeError", "Exception", "StopIteration", "ArithmeticError", "True",
    "False", "None",
)


class ProgramRejected(ValueError):
    """The program failed the static check; the message says which construct is not allowed."""


@dataclass(slots=True)
class SandboxResult:
    """Outputs of the predictor, one per input (None = raised, timed out or not a finite number)."""

    values: list[float | None]
    error: str | None = None
    timed_out: bool = False
    rejected: bool = False
    call_errors: int = 0
    details: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.error is None


def check_program(code: str, function: str = "f") -> str:
    """Statically validate `code`; return the name of the function to call. Raises `ProgramRejected`."""
    try:
        tree = ast.parse(code)
    except SyntaxError as exc:
        raise ProgramRejected(f"syntax error on line {exc.lineno}: {exc.msg}") from None
    functions: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name not in ALLOWED_MODULES:
                    raise ProgramRejected(f"import of {alias.name!r} is not allowed; allowed: "
                                          f"{', '.join(sorted(ALLOWED_MODULES))}")
        elif isinstance(node, ast.ImportFrom):
            if node.level or (node.module or "") not in ALLOWED_MODULES:
                raise ProgramRejected(f"import from {node.module!r} is not allowed")
        elif isinstance(node, ast.Attribute) and (node.attr.startswith(_FORBIDDEN_ATTR_PREFIXES)
                                                  or node.attr in _FORBIDDEN_ATTRS):
            raise ProgramRejected(f"attribute {node.attr!r} is not allowed (no private, dunder or frame access)")
        elif isinstance(node, ast.Name) and (node.id in FORBIDDEN_NAMES or node.id.startswith("__")):
            raise ProgramRejected(f"name {node.id!r} is not allowed")
        elif isinstance(node, ast.FunctionDef | ast.Lambda | ast.AsyncFunctionDef):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                if node.name.startswith("__"):
                    raise ProgramRejected(f"function name {node.name!r} is not allowed")
                if node.col_offset == 0:
                    functions.append(node.name)
        elif isinstance(node, ast.Global | ast.Nonlocal | ast.AsyncFunctionDef | ast.Await):
            raise ProgramRejected(f"{type(node).__name__} statements are not allowed")
    if function in functions:
        return function
    if len(functions) == 1:
        return functions[0]
    raise ProgramRejected(f"define a top-level function `def {function}(s):` returning a number in [0, 1]")


# The child program. It sets nothing up itself: limits are applied by `_limit_resources` before exec.
_RUNNER = r"""
import json, math, sys
import itertools, collections, re, statistics, functools
payload = json.loads(sys.stdin.read())
_allowed = set(payload["allowed"])
_real_import = __import__
import types
_proxies = {}
def _guarded_import(name, globals=None, locals=None, fromlist=(), level=0):
    if level or name not in _allowed:
        raise ImportError("import of " + repr(name) + " is not allowed")
    if name not in _proxies:
        # Public, non-module attributes only: statistics.sys or re.enum must not leak other modules.
        mod = _real_import(name)
        _proxies[name] = types.SimpleNamespace(**{k: v for k, v in vars(mod).items()
            if not k.startswith("_") and not isinstance(v, types.ModuleType)})
    return _proxies[name]
import builtins
_safe = {k: getattr(builtins, k) for k in payload["builtins"] if hasattr(builtins, k)}
_safe["__import__"] = _guarded_import
_ns = {"__builtins__": _safe, "__name__": "predictor"}
_out = sys.stdout
try:
    exec(compile(payload["code"], "<predictor>", "exec"), _ns)
    _fn = _ns[payload["function"]]
except BaseException as exc:
    _out.write(json.dumps({"fatal": type(exc).__name__ + ": " + str(exc)[:300]}) + "\n")
    _out.flush()
    raise SystemExit(0)
for _s in payload["inputs"]:
    try:
        _v = _fn(_s)
        _v = float(_v)
        _line = json.dumps({"v": _v if math.isfinite(_v) else None})
    except BaseException as exc:
        if isinstance(exc, (MemoryError, RecursionError)) or not isinstance(exc, Exception):
            _out.write(json.dumps({"fatal": type(exc).__name__}) + "\n")
            _out.flush()
            raise SystemExit(0)
        _line = json.dumps({"e": type(exc).__name__})
    _out.write(_line + "\n")
    _out.flush()
"""


def _limit_resources(cpu_seconds: int, memory_bytes: int) -> None:
    """Runs in the child between fork and exec: cap CPU, memory, file writes and open files."""
    import resource

    resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 1))
    resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
    resource.setrlimit(resource.RLIMIT_NOFILE, (16, 16))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def run_predictor(code: str, inputs: Sequence[str], *, function: str = "f", seconds_per_100: float = 2.0,
                  min_seconds: float = 2.0, memory_mb: int = 256) -> SandboxResult:
    """Evaluate `function` from `code` on every input in a locked-down child process."""
    try:
        name = check_program(code, function)
    except ProgramRejected as exc:
        return SandboxResult(values=[None] * len(inputs), error=f"rejected: {exc}", rejected=True)
    timeout = max(min_seconds, seconds_per_100 * len(inputs) / 100.0)
    payload = json.dumps({"code": code, "function": name, "inputs": list(inputs),
                          "allowed": sorted(ALLOWED_MODULES), "builtins": list(SAFE_BUILTINS)})
    cpu = max(1, math.ceil(timeout))
    proc = subprocess.Popen(
        [sys.executable, "-I", "-S", "-c", _RUNNER],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env={}, cwd="/", start_new_session=True, text=True,
        preexec_fn=lambda: _limit_resources(cpu, memory_mb * 1024 * 1024),  # noqa: PLW1509
    )
    timed_out = False
    try:
        stdout, stderr = proc.communicate(payload, timeout=timeout + 1.0)
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill_group(proc)
        stdout, stderr = proc.communicate()
    return _collect(stdout or "", stderr or "", len(inputs), timed_out, proc.returncode)


def _kill_group(proc: subprocess.Popen[str]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _collect(stdout: str, stderr: str, n: int, timed_out: bool, returncode: int | None) -> SandboxResult:
    values: list[float | None] = []
    call_errors = 0
    error: str | None = None
    for line in stdout.splitlines()[: n + 1]:
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            error = "malformed output from the sandbox"
            break
        if "fatal" in record:
            error = f"program failed: {record['fatal']}"
            break
        if "e" in record:
            call_errors += 1
            values.append(None)
        else:
            v = record.get("v")
            values.append(float(v) if isinstance(v, int | float) else None)
    if len(values) < n and error is None:
        if timed_out:
            error = f"timed out after {len(values)} of {n} inputs"
        else:
            if returncode is not None and returncode in (-signal.SIGXCPU, -signal.SIGKILL):
                reason = "CPU time limit"
            elif returncode is not None and returncode < 0:
                reason = f"killed by signal {-returncode}"
            else:
                reason = f"exit status {returncode}"
            error = f"sandbox stopped after {len(values)} of {n} inputs ({reason})"
            if stderr.strip():
                logger.debug("sandbox stderr: %s", stderr.strip()[-500:])
    values.extend([None] * (n - len(values)))
    return SandboxResult(values=values[:n], error=error, timed_out=timed_out, call_errors=call_errors)
