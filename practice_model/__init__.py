"""The practice model: a local, deterministic, OpenAI-compatible server for the course.

    from practice_model import PracticeServer, shared_server
    server = shared_server()                 # started once per process (e.g. per Jupyter kernel)
    OpenAI(base_url=server.base_url, api_key="practice")

Or from a shell: `python -m practice_model --port 8765`.

Modules, from the socket inwards:

    server      HTTP on 127.0.0.1 (stdlib `http.server`), routing, the request log (`requestlog`)
    checks      request validation with the real API's status codes and wording (`errors`; another
                provider's wording with a flag, `practice@deepseek`: `providers`)
    context     the context window per request (16,384 tokens, or `practice@ctx=4096`) and its 400
    caching     the prompt cache behind `usage.prompt_tokens_details.cached_tokens`
    naming      which model names are the practice model's, and what each stands for when a real
                provider answers instead (`stands_for`, what mini_framework's `connect()` asks)
    personas    model name -> the brain that answers; `pitfalls` holds the misbehaving ones
    planner     the default brain, a pipeline of five stages, one module each:
                situation -> ranking -> filling -> planning -> answers
                (on top of `language` for reading text, `phrasing` for putting results into
                words, `schemas` for reading JSON Schema, `numbers` for numbers in text and
                `numerals` for one number word, `cjk` for which characters are Chinese, `times`
                for times of day and whose time each is, `zones` for a city's IANA time zone);
                `spilled` for tool results cut for length, `summaries` for 'Summarise this
                conversation: …'
    vision      what `practice-vision` sees in an image, from its bytes (format, size, colours,
                PNG text); Pillow is imported lazily, and only the pixels need it
    structured  a final answer shaped by `response_format` (json_object, json_schema)
    llamacpp    what llama.cpp's server refuses, and when its small model calls a tool (`@llamacpp`)
    reply       what a brain decides; `wire` turns it into `chat.completion` JSON or stream chunks
    quirks      a provider's deviations from that wire format, by flag (`practice@ollama`, `@gemini`,
                `@dashscope`, `@kimi`, `@vllm`, `@poolside`, `@glm`, `@llamacpp`, `@cut`, `@deepseek@thinking`)

Beside it, `mcp_server`: a practice MCP server (a notes app over stdio, standard library only) that misbehaves
on request, for lesson 14 and the hostile-server tests (`python -m practice_model.mcp_server --help`).

The rule about the framework: the practice package imports nothing from `mini_framework`
(tests/test_practice_imports.py enforces it). Everything it needs, it has, `numerals.py` (a
deliberate copy of the framework's number parser) included: a test double that shared code
with what it tests could share its bugs, the practice model must keep working while the
framework is being rewritten around it, and a learner can read it without the framework.

Logging: failures go to the "practice_model" logger, silent until you configure logging.
"""
from __future__ import annotations

import logging

from .errors import ApiError
from .naming import DEFAULT_MODEL, VISION_MODEL, stands_for
from .personas import DEFAULT_PERSONAS, Attempts, Persona
from .reply import PlannedCall, Reply
from .server import PracticeServer, last_request, shared_server
from .wire import estimate_tokens

__all__ = ["DEFAULT_MODEL", "DEFAULT_PERSONAS", "VISION_MODEL", "ApiError", "Attempts", "Persona", "PlannedCall",
           "PracticeServer", "Reply", "estimate_tokens", "last_request", "shared_server", "stands_for"]

logging.getLogger(__name__).addHandler(logging.NullHandler())  # silent until logging is configured
