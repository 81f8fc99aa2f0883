"""OpenAI-compatible LLM access shared by every agent and judge, plus an offline model server.

Typical use::

    from discoverylab.llm import default_client

    client = default_client()  # $DISCOVERYLAB_LLM_BASE_URL, else the embedded SmolLM2-135M
    data = client.complete_json(messages, schema, name="action")
"""

from __future__ import annotations

from discoverylab.llm.client import (
    ENV_API_KEY,
    ENV_BASE_URL,
    ENV_MODEL,
    Completion,
    LLMClient,
    StructuredCompletion,
    Usage,
)
from discoverylab.llm.errors import (
    EmbeddedServerError,
    LLMBadOutput,
    LLMBadResponse,
    LLMDeadlineExceeded,
    LLMError,
    LLMRequestError,
    LLMUnavailable,
)
from discoverylab.llm.judge import LLMJudge, Verdict, knowledge_judge
from discoverylab.llm.local_server import EmbeddedModelServer, default_client, find_model_file
from discoverylab.llm.schema import clamp_numbers, parse_json_reply, validate

__all__ = [
    "ENV_API_KEY",
    "ENV_BASE_URL",
    "ENV_MODEL",
    "Completion",
    "EmbeddedModelServer",
    "EmbeddedServerError",
    "LLMBadOutput",
    "LLMBadResponse",
    "LLMClient",
    "LLMDeadlineExceeded",
    "LLMError",
    "LLMJudge",
    "LLMRequestError",
    "LLMUnavailable",
    "StructuredCompletion",
    "Usage",
    "Verdict",
    "clamp_numbers",
    "default_client",
    "find_model_file",
    "knowledge_judge",
    "parse_json_reply",
    "validate",
]
