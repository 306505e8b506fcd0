"""From a JSON schema to the Pydantic model that checks arguments against it: tools defined by a schema.

An MCP server's tool list or an OpenAPI operation describes a tool by the JSON schema of its
arguments, not by a Python signature. `model_from_schema` turns that schema into what a function
tool gets from schema.py: a Pydantic model (`create_model`, `extra="forbid"`) that validates the
arguments, and the schema the model is shown, made portable the way `schema.clean_schema` does it.

    model_from_schema(name, schema)      -> (model, shown schema); ToolDefinitionError if unsupported
    _Builder.node(schema, pointer)       one schema node -> (type annotation, shown node)
    SchemaArguments                      the models' base: dumps by JSON name, unsent optionals left out

Supported: `type` (one, or a list such as ["string", "null"]), `properties`, `required`, `enum`,
`const`, `items`, `anyOf`/`oneOf`, local `$ref` into `$defs`/`definitions` (recursion too),
`additionalProperties` (bool or schema), `minimum`, `maximum`, `exclusiveMinimum`,
`exclusiveMaximum` (also OpenAPI 3.0's boolean form), `multipleOf`, `minLength`, `maxLength`,
`minItems`, `maxItems`, `pattern`, `default`, `description`, `format`; annotations (`title`,
`examples`, `$schema`, `$comment`, `deprecated`, `readOnly`, `writeOnly`, `x-...`) are dropped.
Anything else is a ToolDefinitionError naming the keyword and where it is (a JSON pointer).

Decisions (and concessions):
- The shown schema follows schema.py: `$ref`s inlined (`$defs` kept only for recursive
  definitions), `title`/`examples` and `additionalProperties: false` dropped, `const` written as
  a one-value `enum`, a list of types written as `anyOf` (each branch with its own bounds), `oneOf`
  as `anyOf`. `oneOf` is validated as `anyOf`: exclusivity is not checked (closed objects with
  different required properties exclude each other anyway).
- Objects are closed, like a function tool's parameters: a property not declared is refused unless
  `additionalProperties` is true or a schema. A nested `{"type": "object"}` with no `properties`
  is a free-form payload (any keys); at the top level it means "no parameters".
- A property name that is not a Python identifier ("user-id", "class", "2fa", "_id") becomes an
  alias of a field named `user_id`, `class_`, `f_2fa`, `f_id`; the handler always gets the JSON names.
  A `requires_approval` predicate reads fields by their Python names (`args.user_id`).
- The handler gets plain JSON values (nested objects as dicts), defaults filled in, and no key
  for an optional property that was not sent and has no default. A `default` is used as written.
- `format` is kept for the model to read, not enforced (`uri`, `email`, `date-time` stay strings).
- `pattern` runs on pydantic-core's Rust regex engine, which is linear in the text's length, so no
  pattern can hang a call (no catastrophic backtracking); patterns it cannot run (look-around,
  backreferences) are refused when the tool is made. Rust and ECMA-262 syntax differ in corners.
- Hostile schemas are refused, not built: more than MAX_NODES schema nodes (counted after
  inlining `$ref`, so a "billion laughs" of references is caught) or nesting deeper than MAX_DEPTH.
"""
from __future__ import annotations

import copy
import keyword
import math
import re
import warnings
from collections.abc import Iterator
from typing import Annotated, Any, ClassVar, ForwardRef, Literal, NoReturn, Union

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    TypeAdapter,
    create_model,
    model_serializer,
)

from ..schema import ToolDefinitionError, ordered

__all__ = ["MAX_DEPTH", "MAX_NODES", "SchemaArguments", "model_from_schema"]

MAX_DEPTH = 32  # nested schemas; real tools stay under 10 (OpenAI's strict-mode limit)
MAX_NODES = 5_000  # schema nodes after inlining: OpenAI's limit on properties in a strict schema

_TYPES = ("string", "integer", "number", "boolean", "array", "object", "null")
_SUPPORTED = {"type", "properties", "required", "enum", "const", "items", "anyOf", "oneOf", "$ref",
              "additionalProperties", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
              "minLength", "maxLength", "minItems", "maxItems", "pattern", "default", "description", "format"}
_ANNOTATIONS = {"title", "examples", "$schema", "$comment", "deprecated", "readOnly", "writeOnly"}  # dropped
_ROOT_ONLY = {"$defs", "definitions", "$id"}
_BESIDE_REF = {"description", "default"}  # kept beside a `$ref` (annotations are dropped anyway)
_HINTS = {
    "allOf": "merge the schemas into one object",
    "not": "check the rule in the handler and say so in the description",
    "if": "check the condition in the handler and say so in the description",
    "then": "check the condition in the handler and say so in the description",
    "else": "check the condition in the handler and say so in the description",
    "patternProperties": "use additionalProperties with a schema",
    "propertyNames": "use additionalProperties with a schema",
    "dependentRequired": "check it in the handler and say so in the description",
    "dependentSchemas": "check it in the handler and say so in the description",
    "dependencies": "check it in the handler and say so in the description",
    "prefixItems": "use an object with named properties instead of a tuple",
    "nullable": "write the type as a list, e.g. \"type\": [\"string\", \"null\"]",
}
_DATA = ("default", "enum", "const", "examples")  # their values are JSON data, not schemas
_TOO_LARGE = (f"the parameters schema is too large: more than {MAX_NODES:,} schemas (properties, items, branches), "
              "counted with every $ref inlined; a model could not use it")


class SchemaArguments(BaseModel):
    """The base of every model `model_from_schema` builds: fields named by alias, dumped by JSON name.

    `model_dump()` (any mode) gives the arguments as the handler receives them: keys are the JSON
    property names, and an optional property that was not sent and has no default is left out.
    """

    model_config = ConfigDict(extra="forbid", protected_namespaces=(), regex_engine="rust-regex")
    __omit_unsent__: ClassVar[frozenset[str]] = frozenset()  # optional fields without a default (Python names)

    @model_serializer(mode="wrap")
    def _by_json_name(self, handler: SerializerFunctionWrapHandler, info: SerializationInfo) -> dict[str, Any]:
        data = handler(self)
        out: dict[str, Any] = {}
        known: set[str] = set()
        for name, field in type(self).model_fields.items():
            key = field.alias if info.by_alias and field.alias else name
            known.add(key)
            if key in data and not (name in self.__omit_unsent__ and name not in self.model_fields_set):
                out[field.alias or name] = data[key]
        out.update((k, v) for k, v in data.items() if k not in known)  # additionalProperties
        return out


def model_from_schema(name: str, schema: dict[str, Any]) -> tuple[type[SchemaArguments], dict[str, Any]]:
    """The Pydantic model that validates arguments against `schema`, and the schema the model is shown.

    >>> model, shown = model_from_schema("lookup", {
    ...     "type": "object", "title": "LookupArgs",
    ...     "properties": {"user-id": {"type": "integer", "minimum": 1}, "verbose": {"type": "boolean"}},
    ...     "required": ["user-id"]})
    >>> shown
    {'type': 'object', 'properties': {'user-id': {'type': 'integer', 'minimum': 1}, 'verbose': {'type': 'boolean'}},
     'required': ['user-id']}
    >>> model.model_validate({"user-id": "7"}).model_dump()
    {'user-id': 7}
    >>> model_from_schema("bad", {"type": "object", "properties": {"a": {"allOf": [{"type": "string"}]}}})
    Traceback (most recent call last):
    ...
    mini_framework.schema.ToolDefinitionError: bad: 'allOf' at #/properties/a is not supported: merge the schemas
      into one object
    """
    if not isinstance(schema, dict):
        raise ToolDefinitionError(f"{name}: the parameters schema must be a JSON object (a dict), "
                                  f"not {type(schema).__name__}")
    if schema.get("type") != "object":
        raise ToolDefinitionError(f"{name}: the parameters schema at # must have \"type\": \"object\" (a tool takes "
                                  f"named arguments), not {schema.get('type')!r}")
    builder = _Builder(name, schema)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a field named like a BaseModel attribute, a default Pydantic can't dump
            model, shown = builder.top()
            if builder.namespace:  # recursive definitions: resolve the forward references, inner models first
                for built in builder.models:
                    built.model_rebuild(force=True, _types_namespace=builder.namespace)
    except RecursionError:
        raise ToolDefinitionError(f"{name}: the parameters schema is nested too deeply") from None
    if builder.shown_defs:
        shown["$defs"] = dict(sorted(builder.shown_defs.items()))
    return model, shown


class _Builder:
    """One walk over one schema: builds the models, the shown schema, and counts what it visits."""

    def __init__(self, tool: str, root: dict[str, Any]) -> None:
        self.tool = tool
        self.root = root
        self.defs: dict[str, tuple[str, Any]] = {}  # "#/$defs/X" -> (the shown key, the definition)
        for section in ("$defs", "definitions"):
            found = root.get(section, {})
            if not isinstance(found, dict):
                self.fail(f"{section!r} must be an object of named schemas")
            for key, sub in found.items():
                shown_key = re.sub(r"[^A-Za-z0-9_.-]", "_", str(key)) or "_"
                while shown_key in {k for k, _ in self.defs.values()}:
                    shown_key += "_"
                self.defs[f"#/{section}/{_escape(str(key))}"] = (shown_key, sub)
        self.recursive = self._recursive()
        self.forward: dict[str, str] = {}  # ref -> forward-reference name, for recursive definitions
        self.namespace: dict[str, Any] = {}  # forward-reference name -> model
        self.shown_defs: dict[str, Any] = {}
        self.models: list[type[SchemaArguments]] = []  # in creation order: inner models first
        self.nodes = 0
        self.inlined: dict[str, tuple[Any, dict[str, Any]]] = {}  # a definition used twice is built once

    def fail(self, reason: str) -> NoReturn:
        raise ToolDefinitionError(f"{self.tool}: {reason}")

    def refuse(self, word: str, pointer: str, reason: str = "") -> NoReturn:
        hint = reason or _HINTS.get(word) or ("from_schema supports " + ", ".join(sorted(_SUPPORTED)))
        self.fail(f"{word!r} at {pointer} is not supported: {hint}")

    # ------------------------------------------------------------------ references

    def _recursive(self) -> set[str]:
        """The definitions that reach themselves through `$ref`s (they keep a `$ref` in the shown schema)."""
        uses = {ref: self._refs(sub, ref, 0, [0]) for ref, (_, sub) in self.defs.items()}
        reach = {ref: set(found) for ref, found in uses.items()}
        changed = True
        while changed:  # close transitively
            changed = False
            for ref, found in reach.items():
                grown = found.union(*(reach.get(r, set()) for r in found))
                if grown != found:
                    reach[ref], changed = grown, True
        return {ref for ref, found in reach.items() if ref in found}

    def _refs(self, node: Any, pointer: str, depth: int, count: list[int]) -> set[str]:
        """The local `$ref`s in a raw schema (bounded: deeper or larger schemas are refused here)."""
        count[0] += 1
        if depth > MAX_DEPTH:
            self.fail(f"the parameters schema is nested more than {MAX_DEPTH} deep at {pointer}")
        if count[0] > MAX_NODES:
            self.fail(f"the parameters schema has more than {MAX_NODES:,} schemas in its definitions")
        found = {node["$ref"]} if isinstance(node, dict) and isinstance(node.get("$ref"), str) else set()
        for where, child in _children(node, pointer):
            found |= self._refs(child, where, depth + 1, count)
        return found

    def _size(self, node: Any, memo: dict[str, int], depth: int) -> int:
        """How many schema nodes `node` has with its `$ref`s inlined (recursive ones count once), computed
        once per definition; stops counting past MAX_NODES, and refuses nesting deeper than MAX_DEPTH."""
        if depth > MAX_DEPTH:
            self.fail(f"the parameters schema is nested more than {MAX_DEPTH} deep")
        if not isinstance(node, dict):
            return 1
        total = 1
        ref = node.get("$ref")
        if isinstance(ref, str) and ref in self.defs and ref not in self.recursive:
            if ref not in memo:
                memo[ref] = 0  # (not recursive, so never read before it is set below)
                memo[ref] = self._size(self.defs[ref][1], memo, depth + 1)
            total += memo[ref]
        for _, child in _children(node, "", skip=_ROOT_ONLY):
            total += self._size(child, memo, depth + 1)
            if total > MAX_NODES:
                return total
        return total

    def ref(self, node: dict[str, Any], pointer: str, depth: int) -> tuple[Any, dict[str, Any]]:
        """A `$ref` node: the definition inlined, or for a recursive one a (forward) reference."""
        ref = node["$ref"]
        if not isinstance(ref, str) or not ref.startswith("#"):
            self.refuse("$ref", pointer, f"only local references (\"#/$defs/...\") are supported, not {ref!r:.80}")
        if ref not in self.defs:
            known = ", ".join(list(self.defs)[:5]) or "none"
            self.refuse("$ref", pointer, f"{ref!r:.80} is not a definition in #/$defs or #/definitions "
                        f"(references into other parts of the schema, or to # itself, are not supported; "
                        f"the definitions are: {known})")
        if extra := _beside(node, {"$ref"}):
            self.refuse(extra, pointer, "only a description or a default may stand beside a $ref; "
                        "move the keyword into the definition")
        shown_key, target = self.defs[ref]
        siblings = {k: node[k] for k in _BESIDE_REF if k in node}
        if ref not in self.recursive:
            if ref not in self.inlined:
                self.inlined[ref] = self.node(target, ref, depth + 1)
            annotation, shown = self.inlined[ref]
            return annotation, ordered({**copy.deepcopy(shown), **siblings})  # the shown schema stays a tree
        if ref in self.forward:  # inside its own definition, or built before
            return ForwardRef(self.forward[ref]), {"$ref": f"#/$defs/{shown_key}", **siblings}
        self.forward[ref] = f"_Def{len(self.forward)}"
        annotation, shown = self.node(target, ref, depth + 1)
        if not (isinstance(annotation, type) and issubclass(annotation, SchemaArguments)):
            self.refuse("$ref", pointer, f"{ref} is recursive but not an object with properties; "
                        "recursive definitions must be objects")
        self.namespace[self.forward[ref]] = annotation
        self.shown_defs[shown_key] = shown
        return annotation, {"$ref": f"#/$defs/{shown_key}", **siblings}

    # ------------------------------------------------------------------ nodes

    def top(self) -> tuple[type[SchemaArguments], dict[str, Any]]:
        """The parameters object: always a model, closed unless additionalProperties says otherwise."""
        if self._size(self.root, {}, 0) > MAX_NODES:  # before anything is built, so a huge schema costs nothing
            self.fail(_TOO_LARGE)
        annotation, shown = self.node(self.root, "#", 0, top=True)
        assert isinstance(annotation, type) and issubclass(annotation, SchemaArguments)
        return annotation, shown

    def node(self, node: Any, pointer: str, depth: int, top: bool = False) -> tuple[Any, dict[str, Any]]:
        """One schema node -> (the Python type that validates it, the node as the model is shown it)."""
        self.nodes += 1
        if self.nodes > MAX_NODES:
            self.fail(_TOO_LARGE)
        if depth > MAX_DEPTH:
            self.fail(f"the parameters schema is nested more than {MAX_DEPTH} deep at {pointer}")
        if node is True:
            return Any, {}
        if not isinstance(node, dict):
            self.fail(f"the schema at {pointer} must be an object (or true), not {node!r:.60}")
        for key in node:
            if not isinstance(key, str):
                self.fail(f"the schema at {pointer} has a key that is not a string: {key!r:.60}")
            if key in _ROOT_ONLY and not top:
                self.refuse(key, pointer, f"{key} is supported only at the top of the schema (#)")
            if key not in _SUPPORTED | _ANNOTATIONS | _ROOT_ONLY and not key.startswith("x-"):
                self.refuse(key, pointer)
        described = self.annotations(node, pointer)
        if "$ref" in node:
            return self.ref(node, pointer, depth)
        branches = [k for k in ("anyOf", "oneOf") if k in node]
        if branches:
            if extra := _beside(node, set(branches)):
                self.refuse(extra, pointer, f"only a description or a default may stand beside {branches[0]}; "
                            "move the keyword into each branch")
            return self.union(node, branches, pointer, depth, described)
        if "enum" in node or "const" in node:
            return self.literal(node, pointer, described)
        kinds = self.kinds(node, pointer)
        typed = [self.typed(kind, node, pointer, depth, top) for kind in kinds]
        if not typed:  # no type: any JSON value
            return Any, described
        if len(typed) == 1:
            return typed[0][0], ordered({**typed[0][1], **described})
        annotation: Any = Union[tuple(t[0] for t in typed)]  # a list of types: the union of them
        return annotation, ordered({**described, "anyOf": [t[1] for t in typed]})

    def annotations(self, node: dict[str, Any], pointer: str) -> dict[str, Any]:
        """The description and default of a node, checked, in the order the shown schema puts them."""
        if "description" in node and not isinstance(node["description"], str):
            self.fail(f"'description' at {pointer} must be a string")
        if "format" in node and not isinstance(node["format"], str):
            self.fail(f"'format' at {pointer} must be a string")
        return {k: node[k] for k in ("description", "default") if k in node}

    def kinds(self, node: dict[str, Any], pointer: str) -> list[str]:
        """The JSON types a node allows: its `type`, or the one its keywords imply, or [] for any value."""
        declared = node.get("type")
        if declared is None:
            implied = [kind for kind, words in (("object", {"properties", "additionalProperties", "required"}),
                                               ("array", {"items", "minItems", "maxItems"}),
                                               ("string", {"minLength", "maxLength", "pattern"}),
                                               ("number", {"minimum", "maximum", "exclusiveMinimum",
                                                           "exclusiveMaximum", "multipleOf"})) if node.keys() & words]
            return implied[:1]
        kinds = declared if isinstance(declared, list) else [declared]
        if not kinds or any(k not in _TYPES for k in kinds) or len(set(kinds)) != len(kinds):
            self.fail(f"'type' at {pointer} must be one of {', '.join(_TYPES)} or a list of them, "
                      f"not {declared!r:.80}")
        return kinds

    def typed(self, kind: str, node: dict[str, Any], pointer: str, depth: int,
              top: bool) -> tuple[Any, dict[str, Any]]:
        """One JSON type with the keywords that apply to it -> (Python type, shown schema)."""
        shown: dict[str, Any] = {"type": kind}
        if "format" in node and kind != "null":  # an annotation for the model; not enforced
            shown["format"] = node["format"]
        if kind == "null":
            return type(None), shown
        if kind == "boolean":
            return bool, shown
        if kind == "string":
            constraints: dict[str, Any] = dict(self.lengths(node, pointer, "minLength", "maxLength"))
            if "pattern" in node:
                constraints["pattern"] = self.pattern(node["pattern"], pointer)
            shown.update({k: node[k] for k in ("minLength", "maxLength", "pattern") if k in node})
            return _constrained(str, constraints), shown
        if kind in ("integer", "number"):
            limits, bounds = self.bounds(node, pointer)
            shown.update(bounds)
            return _constrained(int if kind == "integer" else float, limits), shown
        if kind == "array":
            items = node.get("items", True)
            if isinstance(items, list):
                self.refuse("items", pointer, "items as a list (a tuple) is not supported; use an object with "
                            "named properties")
            item_type, item_shown = self.node(items, f"{pointer}/items", depth + 1)
            shown.update({"items": item_shown} if items is not True else {})
            constraints = self.lengths(node, pointer, "minItems", "maxItems")
            shown.update({k: node[k] for k in ("minItems", "maxItems") if k in node})
            return _constrained(list[item_type], constraints), shown  # type: ignore[valid-type]
        return self.object(node, pointer, depth, top)

    def object(self, node: dict[str, Any], pointer: str, depth: int, top: bool) -> tuple[Any, dict[str, Any]]:
        """An object: a model when it has properties (or is the top), else a dict of its additionalProperties."""
        properties = node.get("properties", {})
        if not isinstance(properties, dict) or not all(isinstance(k, str) for k in properties):
            self.fail(f"'properties' at {pointer} must be an object of named schemas")
        required = node.get("required", [])
        if not isinstance(required, list) or not all(isinstance(r, str) for r in required) \
                or len(set(required)) != len(required):
            self.fail(f"'required' at {pointer} must be a list of distinct property names")
        if missing := [r for r in required if r not in properties]:
            self.fail(f"'required' at {pointer} names {missing[0]!r}, which is not in 'properties'")
        extra = node.get("additionalProperties", False if top or "properties" in node else True)
        if not isinstance(extra, (bool, dict)):
            self.fail(f"'additionalProperties' at {pointer} must be true, false or a schema")
        extra_type, extra_shown = (None, {}) if extra is False else self.node(
            extra, f"{pointer}/additionalProperties", depth + 1)
        shown: dict[str, Any] = {"type": "object"}
        if not properties and not top and extra is not False:  # a free-form payload: dict[str, V], shown as
            shown["additionalProperties"] = True if extra is True else extra_shown  # function tools show theirs
            return dict[str, extra_type], shown  # type: ignore[valid-type]
        specs: dict[str, Any] = {}
        omit: set[str] = set()
        shown_props: dict[str, Any] = {}
        taken = set(properties)
        for key, sub in properties.items():
            where = f"{pointer}/properties/{_escape(key)}"
            annotation, sub_shown = self.node(sub, where, depth + 1)
            python = _python_name(key, taken)
            taken.add(python)
            default = sub.get("default", ...) if isinstance(sub, dict) and key not in required else ...
            if key not in required and default is ...:
                default = None
                omit.add(python)
            description = sub_shown.get("description")
            specs[python] = (annotation, Field(default, alias=key, description=description))
            shown_props[key] = sub_shown
        shown["properties"] = shown_props
        if required:
            shown["required"] = list(required)
        if extra is not False:
            shown["additionalProperties"] = True if extra is True else extra_shown
        return self.model(pointer, specs, omit, extra, extra_type), shown

    def model(self, pointer: str, specs: dict[str, Any], omit: set[str], extra: Any,
              extra_type: Any) -> type[SchemaArguments]:
        """`create_model` for one object, on a base that says how extra keys and unsent optionals behave."""
        name = self.tool if pointer == "#" else f"{self.tool}{pointer[1:].replace('/properties/', '.')}"
        namespace: dict[str, Any] = {"__omit_unsent__": frozenset(omit)}
        if extra is not False:
            namespace["model_config"] = ConfigDict(extra="allow")
            if extra is not True:
                namespace["__annotations__"] = {"__pydantic_extra__": dict[str, extra_type]}
        base = type(f"{name}.base", (SchemaArguments,), namespace)
        try:
            model: type[SchemaArguments] = create_model(name, __base__=base, **specs)
        except Exception as exc:  # a constraint Pydantic cannot apply
            self.fail(f"the schema at {pointer} cannot be checked: {exc}")
        self.models.append(model)
        return model

    def union(self, node: dict[str, Any], words: list[str], pointer: str, depth: int,
              described: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        """anyOf / oneOf (validated alike): a Union of the branches; with one null branch, an Optional."""
        if len(words) > 1:
            self.refuse("oneOf", pointer, "anyOf and oneOf together; use one of them")
        word = words[0]
        branches = node[word]
        if not isinstance(branches, list) or not branches:
            self.fail(f"{word!r} at {pointer} must be a non-empty list of schemas")
        built = [self.node(b, f"{pointer}/{word}/{i}", depth + 1) for i, b in enumerate(branches)]
        types = tuple(t for t, _ in built)
        annotation = types[0] if len(types) == 1 else Union[types]
        return annotation, ordered({**described, "anyOf": [s for _, s in built]})

    def literal(self, node: dict[str, Any], pointer: str, described: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        """enum / const: a Literal of the values (strings, whole numbers, booleans, null)."""
        if "enum" in node and "const" in node:
            self.refuse("const", pointer, "enum and const together; use one of them")
        values = node["enum"] if "enum" in node else [node["const"]]
        word = "enum" if "enum" in node else "const"
        if not isinstance(values, list) or not values:
            self.fail(f"'enum' at {pointer} must be a non-empty list of values")
        if not all(v is None or isinstance(v, (str, int, bool)) for v in values):
            bad = next(v for v in values if not (v is None or isinstance(v, (str, int, bool))))
            self.refuse(word, pointer, f"only strings, whole numbers, booleans and null can be {word} values, "
                        f"not {bad!r:.60}")
        self.kinds(node, pointer)  # a bad `type` beside the values is still an error
        shown = {k: node[k] for k in ("type",) if k in node and not isinstance(node[k], list)}
        return Literal[tuple(values)], ordered({**shown, **described, "enum": list(values)})

    # ------------------------------------------------------------------ keyword values

    def lengths(self, node: dict[str, Any], pointer: str, low: str, high: str) -> dict[str, int]:
        """minLength/maxLength or minItems/maxItems as Pydantic's min_length/max_length."""
        out = {}
        for word, arg in ((low, "min_length"), (high, "max_length")):
            if word in node:
                value = node[word]
                if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                    self.fail(f"{word!r} at {pointer} must be a whole number of at least 0, not {value!r:.40}")
                out[arg] = value
        if out.get("min_length", 0) > out.get("max_length", math.inf):
            self.fail(f"{low!r} at {pointer} is greater than {high!r}: no value could pass")
        return out

    def bounds(self, node: dict[str, Any], pointer: str) -> tuple[dict[str, float], dict[str, float]]:
        """Numeric bounds as Pydantic's ge/le/gt/lt/multiple_of, and as the shown schema writes them
        (OpenAPI 3.0's `exclusiveMinimum: true` becomes the number form)."""
        shown: dict[str, Any] = {}
        for word in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"):
            if word not in node:
                continue
            value = node[word]
            if isinstance(value, bool) and word.startswith("exclusive"):  # OpenAPI 3.0 / draft 4
                limit = "minimum" if word == "exclusiveMinimum" else "maximum"
                if value and limit not in node:
                    self.fail(f"{word!r}: true at {pointer} needs a {limit!r}")
                if value:
                    shown[word] = node[limit]
                    shown.pop(limit, None)
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                self.fail(f"{word!r} at {pointer} must be a finite number, not {value!r:.40}")
            if word == "multipleOf" and value <= 0:
                self.fail(f"'multipleOf' at {pointer} must be greater than 0, not {value!r}")
            if word in ("minimum", "maximum") and word in shown:  # replaced by its exclusive form
                continue
            shown[word] = value
        names = {"minimum": "ge", "maximum": "le", "exclusiveMinimum": "gt", "exclusiveMaximum": "lt",
                 "multipleOf": "multiple_of"}
        return {names[k]: v for k, v in shown.items()}, shown

    def pattern(self, pattern: Any, pointer: str) -> str:
        """A `pattern` the Rust regex engine can run (linear time), else ToolDefinitionError saying why."""
        if not isinstance(pattern, str):
            self.fail(f"'pattern' at {pointer} must be a string (a regular expression)")
        try:
            TypeAdapter(Annotated[str, Field(pattern=pattern)], config=ConfigDict(regex_engine="rust-regex"))
        except Exception as exc:
            reason = str(exc).strip().splitlines()[-1].removeprefix("error: ")
            self.refuse("pattern", pointer, f"{pattern!r:.80} cannot be used ({reason}); patterns run on a "
                        "linear-time engine, without look-around or backreferences, so no pattern can hang a call")
        return str(pattern)


_NAMED = {"properties", "$defs", "definitions", "patternProperties", "dependentSchemas"}  # name -> schema


def _children(node: Any, pointer: str, skip: set[str] | frozenset[str] = frozenset()) -> Iterator[tuple[str, Any]]:
    """The subschemas of a raw schema node, one nesting level down, each with its JSON pointer.

    >>> [where for where, _ in _children({"properties": {"a": {}}, "anyOf": [{}, {}], "default": {}}, "#")]
    ['#/properties/a', '#/anyOf/0', '#/anyOf/1']
    """
    if not isinstance(node, dict):
        return
    for key, value in node.items():
        if key in _DATA or key in skip:
            continue
        here = f"{pointer}/{_escape(str(key))}"
        if key in _NAMED and isinstance(value, dict):
            yield from ((f"{here}/{_escape(str(k))}", v) for k, v in value.items())
        elif isinstance(value, list):
            yield from ((f"{here}/{i}", v) for i, v in enumerate(value))
        elif isinstance(value, dict):
            yield here, value


def _beside(node: dict[str, Any], words: set[str]) -> str:
    """The first keyword of `node` that may not stand beside `words` ($ref, anyOf); '' if none."""
    allowed = _BESIDE_REF | _ANNOTATIONS | _ROOT_ONLY | words
    return next((k for k in node if k not in allowed and not k.startswith("x-")), "")


def _constrained(base: Any, constraints: dict[str, Any]) -> Any:
    """`base`, or `Annotated[base, Field(**constraints)]` when there are constraints."""
    return Annotated[base, Field(**constraints)] if constraints else base


def _python_name(key: str, taken: set[str]) -> str:
    """A field name for a JSON property name: itself when it is safe, else a readable identifier.

    >>> [_python_name(k, {"user-id", "class", "2fa", "_id", "名字", "json"}) for k in
    ...  ("user-id", "class", "2fa", "_id", "名字", "json")]
    ['user_id', 'class_', 'f_2fa', 'f_id', '名字', 'json_']
    """
    name = re.sub(r"\W", "_", key)
    if not name or not (name[0].isalpha()):
        name = "f_" + name.lstrip("_")
    if keyword.iskeyword(name) or hasattr(BaseModel, name):
        name += "_"
    if name == key:
        return name
    candidate, n = name, 1
    while candidate in taken:
        n += 1
        candidate = f"{name}_{n}"
    return candidate


def _escape(key: str) -> str:
    """A key as one JSON pointer segment: ~ -> ~0, / -> ~1."""
    return key.replace("~", "~0").replace("/", "~1")

