"""Schemas (a feature): tools defined by a JSON schema and a handler, not by a Python signature.

    model.py   model_from_schema(name, schema) -> the Pydantic model that checks arguments, and the
               schema the model is shown; what `Tool.from_schema` builds on (an MCP server's tools)

Needs: the core (mini_framework/*.py). Nothing else.
"""
from .model import MAX_DEPTH, MAX_NODES, SchemaArguments, model_from_schema

__all__ = ["MAX_DEPTH", "MAX_NODES", "SchemaArguments", "model_from_schema"]
