"""Token counts for the agents' prompt budgets: the model's own tokenizer where one is reachable.

Budgets (ReAct's trimmed history, the Hypothesizer's 2k-token memory) are in the model's tokens.
A count of 4 characters a token, as before, ran about 1.45 times under a real tokenizer on our
observations (digits and punctuation cost about a token each), so a "2,500-token" history was
nearer 3,600. In order of preference:

* `tiktoken` for OpenAI models, only when its BPE file is already in its cache (tiktoken
  downloads it at first use, which an offline machine cannot do; pre-seed `TIKTOKEN_CACHE_DIR`);
* the server's `/tokenize` route (llama.cpp, the embedded model, vLLM), probed once per
  counter: if the first request fails, the estimate is used from then on;
* a conservative estimate otherwise (`estimate_tokens`), which errs high.

Counts are cached per text, so a trajectory entry costs one request once, not one per step.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import tempfile
import urllib.error
import urllib.request
from collections import OrderedDict
from typing import Any

logger = logging.getLogger(__name__)

TIKTOKEN_URL = "https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"
TOKENIZE_TIMEOUT_S = 5.0
CACHE_ENTRIES = 4096
# Measured on the embedded SmolLM2 tokenizer: English about 4.5 bytes a token, digits about one
# byte a token, CJK about 1.1 characters a token. The estimate counts letters and spaces at 3 a
# token, and every digit, punctuation mark and non-ASCII character as a whole token.
_CHEAP = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ ")


def estimate_tokens(text: str) -> int:
    """A conservative (high) token count of `text` without a tokenizer."""
    cheap = sum(1 for ch in text if ch in _CHEAP)
    return math.ceil(cheap / 3) + (len(text) - cheap)


def tiktoken_cached(model: str) -> Any | None:
    """The tiktoken encoding for an OpenAI `model` if tiktoken is installed and its file cached."""
    try:
        import tiktoken
    except ImportError:
        return None
    try:
        name = tiktoken.encoding_name_for_model(model.split("/")[-1])
    except KeyError:
        return None
    cache = os.environ.get("TIKTOKEN_CACHE_DIR", os.environ.get("DATA_GYM_CACHE_DIR"))
    cache = cache if cache is not None else os.path.join(tempfile.gettempdir(), "data-gym-cache")
    if not cache:
        return None
    key = hashlib.sha1(TIKTOKEN_URL.format(name=name).encode()).hexdigest()  # tiktoken's own cache key
    if not os.path.exists(os.path.join(cache, key)):
        return None
    try:
        return tiktoken.get_encoding(name)
    except Exception as exc:  # noqa: BLE001 - a damaged cache: fall back, never crash
        logger.warning("tiktoken could not load %s (%s); estimating token counts", name, exc)
        return None


def server_root(base_url: str) -> str:
    """`http://host:port` from an OpenAI-style base URL (`.../v1`): where `/tokenize` lives."""
    root = base_url.rstrip("/")
    return root[: -len("/v1")] if root.endswith("/v1") else root


class TokenCounter:
    """Counts tokens the way the model does where it can (see the module docstring).

    `kind` says which: "tiktoken", "server" or "estimate" (a failed server probe switches to
    "estimate" for good, so a server without the route costs one request).
    """

    def __init__(self, model: str | None = None, base_url: str | None = None, api_key: str | None = None) -> None:
        self._encoding = tiktoken_cached(model) if model else None
        self._url = server_root(base_url) + "/tokenize" if base_url and self._encoding is None else None
        self._model = model
        self._api_key = api_key
        self._cache: OrderedDict[str, int] = OrderedDict()
        self.kind = "tiktoken" if self._encoding is not None else ("server" if self._url else "estimate")

    def count(self, text: str) -> int:
        if not text:
            return 0
        found = self._cache.get(text)
        if found is not None:
            self._cache.move_to_end(text)
            return found
        n = self._count(text)
        self._cache[text] = n
        if len(self._cache) > CACHE_ENTRIES:
            self._cache.popitem(last=False)
        return n

    def _count(self, text: str) -> int:
        if self._encoding is not None:
            return len(self._encoding.encode(text, disallowed_special=()))
        if self._url is not None:
            n = self._ask_server(text)
            if n is not None:
                return n
            self._url, self.kind = None, "estimate"
        return estimate_tokens(text)

    def _ask_server(self, text: str) -> int | None:
        assert self._url is not None
        body = json.dumps({"content": text, "prompt": text, "model": self._model, "add_special": False}).encode()
        headers = {"content-type": "application/json"}
        if self._api_key:
            headers["authorization"] = f"Bearer {self._api_key}"
        request = urllib.request.Request(self._url, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=TOKENIZE_TIMEOUT_S) as response:  # noqa: S310 - our own URL
                data = json.loads(response.read(1_000_000))
            count = data.get("count") if isinstance(data.get("count"), int) else len(data["tokens"])
            return int(count)
        except (OSError, ValueError, KeyError, TypeError, AttributeError, urllib.error.URLError) as exc:
            logger.info("no /tokenize at %s (%s); estimating token counts", self._url, exc)
            return None
