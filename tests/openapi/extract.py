"""Vendor the Chat Completions part of the official OpenAPI spec into `tests/openapi/chat_schemas.json`.

CI runs on a clean clone where `../shared` may not exist, so the tests validate against this
subset: the transitive closure of `components.schemas` reachable from the roots below, in the
spec's own `{"components": {"schemas": ...}}` layout so `validate_openai_chat.py` resolves the
same `$ref`s. Run from the repository root:

    python tests/openapi/extract.py [SPEC]      # default SPEC: ../shared/reference/openai-openapi.json
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ROOTS = ["CreateChatCompletionRequest", "CreateChatCompletionResponse", "CreateChatCompletionStreamResponse",
         "ErrorResponse", "ListModelsResponse", "Model"]
HERE = Path(__file__).resolve().parent
DEFAULT_SPEC = HERE.parents[1].parent / "shared" / "reference" / "openai-openapi.json"
OUTPUT = HERE / "chat_schemas.json"


def refs(node: Any) -> set[str]:
    """Names of every `#/components/schemas/...` reference under `node`."""
    if isinstance(node, dict):
        found = {node["$ref"].rsplit("/", 1)[-1]} if isinstance(node.get("$ref"), str) else set()
        return found.union(*(refs(v) for v in node.values()))
    if isinstance(node, list):
        return set().union(*(refs(v) for v in node))
    return set()


def extract(spec: dict[str, Any]) -> dict[str, Any]:
    """The subset of `spec` reachable from `ROOTS`, schemas sorted by name."""
    schemas = spec["components"]["schemas"]
    keep: set[str] = set()
    todo = list(ROOTS)
    while todo:
        name = todo.pop()
        if name not in keep:
            keep.add(name)
            todo += sorted(refs(schemas[name]) - keep)
    return {"components": {"schemas": {name: schemas[name] for name in sorted(keep)}}}


def render(subset: dict[str, Any]) -> str:
    """The file's exact text (stable, so a fresh extraction can be compared byte for byte)."""
    return json.dumps(subset, indent=1, ensure_ascii=False, sort_keys=False) + "\n"


def main(argv: list[str]) -> int:
    spec = Path(argv[0]) if argv else DEFAULT_SPEC
    subset = extract(json.loads(spec.read_text(encoding="utf-8")))
    OUTPUT.write_text(render(subset), encoding="utf-8")
    print(f"{OUTPUT}: {len(subset['components']['schemas'])} schemas from {spec}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
