"""Tools: a Python function plus what the model needs to call it (name, description, parameter schema).

Two ways to make one, both ending in the same `Tool` (a third, `Tool.from_schema`, takes a JSON schema
and a handler, e.g. an MCP server's tool: see schemas/):

    @tool                                   class WebSearch(Tool):
    async def get_weather(city: str):           name = "web_search"
        '''Current weather in a city.'''        def run(self, query: str, max_results: int = 5): ...

Everything is derived once, when the tool is made (schema.py does the work): a `Tool` keeps its
Pydantic model and JSON schema, and every later request and call reuses them. A decorated
function stays callable as before, so notebooks and tests can call it directly.

    tool.to_openai_tool()          {"type": "function", "function": {...}} for `tools=[...]`
    Tool.serialize_tools(tools)    the same for a list (Tools or plain functions)
    tool.validate(arguments)       the arguments a model sent -> a validated Pydantic model
    tool.bind(validated)           -> (args, kwargs) for the function
    await tool.invoke(validated)   run it: awaited if async, in a worker thread if sync
    await tool.acall(arguments)    repair and validate (arguments.prepare), then invoke: what the executor does
    tool_guidance(tools, context)  the tools' advice for the system prompt

Concessions: argument *repair* (broken JSON, "一百二十三") lives in arguments.py, on top of
`validate`; what happens to a result (errors, timeouts, images) is the executor's job.
"""
from __future__ import annotations

import copy
import functools
import inspect
import re
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, TypedDict, overload

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from typing_extensions import Unpack  # ships with Pydantic

from .arguments import drop_null_defaults, prepare
from .concurrency import in_thread
from .hooks import FeatureMissing, feature
from .schema import ToolDefinitionError, function_schema

__all__ = ["FEATURE_OPTIONS", "RUN_ID", "Option", "Parameter", "Tool", "ToolDefinitionError", "ToolOptions",
           "ToolSettings", "as_tool", "tool", "tool_guidance"]

# The id of the agent run a tool call belongs to (set by Agent while tools run; None outside a run), so
# a tool can count per run, e.g. "at most 3 e-mails per run". Stable across pause, save and resume.
RUN_ID: ContextVar[str | None] = ContextVar("mini_framework_run", default=None)

NAME_PATTERN = re.compile(r"[a-zA-Z0-9_-]{1,64}")  # what the Chat Completions API accepts, used with fullmatch


class ToolSettings(TypedDict, total=False):
    """The tool options besides its name and description (see ToolOptions, the whole list)."""

    best_practices: str  # advice for the system prompt, collected by tool_guidance()
    prompt_injection_builder: Callable[[Any], str] | None  # a run's context -> more advice (Agent.run)
    strict: bool  # send the strict-mode schema (the strict feature's; to_openai_tool's default)
    timeout: float | None  # seconds before the executor gives up on a call (None: the executor's default)
    side_effects: bool  # it changes something (sends, writes, pays): never cached, a timeout says "unknown"
    requires_approval: bool | Callable[[Any], bool]  # approvals: a person decides before it runs
    cache: float | None  # budget: seconds a result may be reused for the same arguments; None: never
    too_long_to_file: bool | int  # budget: spill text results over 20,000 (or this many) tokens to a file
    reads_files: bool  # budget: it can read a file the agent names (a spilled result's reminder then says so)


class ToolOptions(ToolSettings, total=False):
    """Every keyword `@tool` and `Tool.from_schema` take: the one list of tool options.

    The core reads name, description and the first five settings; a feature reads the others, and declares
    their default and checks them (`OPTIONS` in the feature folder's options.py; see FEATURE_OPTIONS).
    """

    name: str  # what the model calls; default: the function's name, or the class name in snake_case
    description: str  # when to use it; default: the docstring's summary (before Args:/Parameters)


# The options a feature reads -> its folder. The feature declares each one (default, check) in its options.py.
FEATURE_OPTIONS = {"requires_approval": "approvals", "cache": "budget", "too_long_to_file": "budget",
                   "reads_files": "budget", "delegate": "delegation"}


@dataclass(frozen=True)
class Option:
    """How a feature declares a tool option: its default, how a value is checked, whether it means the tool acts."""

    default: Any
    check: Callable[[Any, Tool], Any] | None = None  # (value, tool) -> the value kept; raises ToolDefinitionError
    acts: bool = False  # True: a tool with this option set may change something (a timeout's outcome is unknown)


def declared(name: str) -> Option | None:
    """The declaration of a feature's tool option, or None when its feature folder is not in this copy."""
    try:
        options: Mapping[str, Option] = feature(FEATURE_OPTIONS[name]).OPTIONS
    except FeatureMissing:
        return None
    return options[name]


@dataclass
class Parameter:
    """One parameter of a tool, as the model sees it."""

    name: str  # the Python parameter name, also the JSON property name
    description: str  # from Annotated[...] / Field(description=...), else from the docstring; "" if none
    required: bool  # True when the Python parameter has no default

    @classmethod
    def of(cls, name: str, field: FieldInfo) -> Parameter:
        """The record for one field of a tool's Pydantic model."""
        return cls(name, field.description or "", field.is_required())


class Tool:
    """A function the model can call. Make one with `@tool`, or subclass and write `run`.

    >>> class Echo(Tool):
    ...     def run(self, text: str) -> str:
    ...         '''Repeat the text back.'''
    ...         return text
    >>> Echo().to_openai_tool()["function"]["name"], Echo()("hi")
    ('echo', 'hi')
    """

    name: str = ""  # see ToolOptions for these seven; a subclass may set them as class attributes
    description: str = ""
    best_practices: str = ""
    prompt_injection_builder: Callable[[Any], str] | None = None
    timeout: float | None = None
    strict: bool = False
    side_effects: bool = False

    def __init__(self, name: str | None = None, description: str | None = None,
                 func: Callable[..., Any] | None = None, **options: Unpack[ToolSettings]) -> None:
        if func is None and type(self).run is Tool.run:
            raise TypeError("a Tool needs a function: use @tool on a function, or subclass Tool and define run()")
        self.func: Callable[..., Any] = func if func is not None else self.run  # what a call runs
        if func is not None:
            functools.update_wrapper(self, func)  # __name__, __doc__, __wrapped__: help() and signature work
        if name:
            self.name = name
        elif not self.name and func is not None:
            self.name = getattr(func, "__name__", "")
        elif not self.name:
            self.name = _snake(type(self).__name__)
        check_name(self.name)
        self._apply(options)
        schema = function_schema(self.func, self.name, description or self.description or None)
        self.description = schema.description or _first_paragraph(type(self).__doc__ if func is None else None)
        self._use_schema(schema.params_model, schema.json_schema, list(schema.hints), schema.positional_only)
        self.is_async: bool = _is_async(self.func)  # sync functions run in a worker thread when invoked
        self._by_json_name = False  # True for a from_schema tool: its handler gets JSON names and values
        self._is_method = _first_param(self.func) in ("self", "cls")
        if self.strict:
            _ = self.strict_json_schema  # build it now, so an impossible strict schema fails at decoration time

    @classmethod
    def from_schema(cls, name: str, description: str, parameters: dict[str, Any], handler: Callable[..., Any],
                    **options: Unpack[ToolSettings]) -> Tool:
        """A tool described by the JSON schema of its arguments (an MCP server's tool, an OpenAPI operation).

        `handler` (sync or async, any callable) gets the validated arguments as keywords named as in the
        schema (`**{"user-id": 7}`), as plain JSON values; `options` are @tool's (requires_approval=...,
        timeout=...). What a schema may use: schemas/model.py. The same repairs, coercions, errors, retry
        budget, approval, media and spill as a @tool function.

        >>> echo = Tool.from_schema("echo", "Repeat a text.", {
        ...     "type": "object", "properties": {"text": {"type": "string"}, "times": {"type": "integer"}},
        ...     "required": ["text"]}, lambda text, times=1: text * times)
        >>> import asyncio; asyncio.run(echo.acall('{"text": "ab", "times": "二"}'))
        'abab'
        """
        if not callable(handler):
            raise TypeError(f"from_schema needs a handler function for {name!r}, not {handler!r:.60}")
        if not isinstance(description, str):
            raise ToolDefinitionError(f"{name}: the description must be a string, not {type(description).__name__}")
        check_name(name)
        model, shown = feature("schemas").model_from_schema(name, parameters)
        self = cls.__new__(cls)  # not __init__: that derives the schema from a signature
        self.name, self.description, self.func = name, description, handler
        self._apply(options)
        self._use_schema(model, shown, list(model.model_fields))
        self.parameters = [Parameter(f.alias or n, f.description or "", f.is_required())
                           for n, f in model.model_fields.items()]  # by JSON name
        self.is_async, self._is_method, self._by_json_name = _is_async(handler), False, True
        if self.strict:
            _ = self.strict_json_schema  # an impossible strict schema fails now, as for @tool
        return self

    def _apply(self, options: Mapping[str, Any]) -> None:
        """Set the options given (the rest keep the class's values), then let each feature check its own."""
        unknown = [k for k in options if k not in ToolSettings.__annotations__]
        if unknown:
            close = [n for n in ToolSettings.__annotations__ if n[:4] == unknown[0][:4]]
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise TypeError(f"tool() got an unknown option {unknown[0]!r}{hint}")
        self.options: dict[str, Any] = {}  # the feature options set on this tool (given, or class attributes)
        for key, value in options.items():
            if value is None:
                continue  # None means "not given" (Tool(..., strict=None))
            if key in FEATURE_OPTIONS:
                self.options[key] = value
            else:
                setattr(self, key, value)
        for klass in type(self).__mro__:  # a subclass's `requires_approval = True`
            if klass is Tool:
                break
            for key in FEATURE_OPTIONS:
                if key in vars(klass) and key not in self.options and vars(klass)[key] is not None:
                    self.options[key] = vars(klass)[key]
        self.acts = bool(self.side_effects)  # it may change something: the feature options below can say so too
        for key, value in list(self.options.items()):
            option = declared(key)
            if option is None:  # its feature is not in this copy: kept as given; an Agent refuses the tool
                self.acts = self.acts or value not in (None, False)
                continue
            if value == option.default and type(value) is type(option.default):
                del self.options[key]
                continue
            self.acts = self.acts or (option.acts and value not in (None, False))
        for key in list(self.options):
            option = declared(key)
            if option is not None and option.check is not None:
                self.options[key] = option.check(self.options[key], self)

    def _use_schema(self, model: type[BaseModel], json_schema: dict[str, Any], names: list[str],
                    positional: tuple[str, ...] = ()) -> None:
        """Take the Pydantic model that validates arguments and the schema the model reads (built once)."""
        self.params_model: type[BaseModel] = model
        self.parameters = [Parameter.of(n, model.model_fields[n]) for n in names]
        self.json_schema: dict[str, Any] = json_schema  # the `parameters` schema; treat as read-only
        self._positional = positional
        self._strict_schema: dict[str, Any] | None = None

    def __getattr__(self, name: str) -> Any:
        """A feature option's value (`send_email.requires_approval`): as set, else its feature's default."""
        if name in FEATURE_OPTIONS and "options" in self.__dict__:
            if name in self.options:
                return self.options[name]
            option = declared(name)
            if option is not None:
                return option.default
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def needs_approval(self, validated: BaseModel) -> bool:
        """Whether a person must approve this call first (the approvals feature decides; fail closed).

        >>> @tool(requires_approval=lambda args: args.to.endswith("@external.com"))
        ... def send(to: str) -> str:
        ...     '''Send a note.'''
        ...     return "sent"
        >>> [send.needs_approval(send.validate({"to": to})) for to in ("li@external.com", "me@corp.cn")]
        [True, False]
        """
        rule = self.options.get("requires_approval", False)
        if rule is False:
            return False
        try:
            decide = feature("approvals").needs_approval
        except FeatureMissing:
            return True
        return bool(decide(self, validated))

    def run(self, *args: Any, **kwargs: Any) -> Any:
        """What the tool does; subclasses override this (sync or async)."""
        raise NotImplementedError

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Call the underlying function directly, exactly as if it were not a tool."""
        return self.func(*args, **kwargs)

    def __get__(self, obj: Any, objtype: type | None = None) -> Tool:
        """`@tool` on a method: `instance.method` is a Tool bound to that instance (schema shared)."""
        if obj is None or not self._is_method:
            return self
        bound = copy.copy(self)
        bound.func = self.func.__get__(obj, objtype)
        return bound

    def __repr__(self) -> str:
        return f"<Tool {self.name}({', '.join(p.name for p in self.parameters)})>"

    @property
    def strict_json_schema(self) -> dict[str, Any]:
        """The strict-mode `parameters` schema (the `strict` feature's), built on first use and then cached."""
        if self._strict_schema is None:
            try:
                self._strict_schema = feature("strict").strict_schema(self.json_schema)
            except ToolDefinitionError as exc:
                raise ToolDefinitionError(f"tool {self.name!r}: {exc}") from None
        return self._strict_schema

    def to_openai_tool(self, strict: bool | None = None) -> dict[str, Any]:
        """This tool in the Chat Completions `tools` format (a fresh copy, safe to edit).

        >>> def ping() -> str:
        ...     '''Check that the service is up.'''
        >>> tool(ping).to_openai_tool(strict=True)["function"]
        {'name': 'ping', 'description': 'Check that the service is up.',
         'parameters': {'type': 'object', 'properties': {}, 'required': [], 'additionalProperties': False},
         'strict': True}
        """
        if strict is None:
            strict = self.strict
        parameters = self.strict_json_schema if strict else self.json_schema
        function: dict[str, Any] = {"name": self.name, "description": self.description,
                                    "parameters": copy.deepcopy(parameters)}
        if strict:
            function["strict"] = True
        return {"type": "function", "function": function}

    @staticmethod
    def serialize_tools(tools: Iterable[Any], strict: bool | None = None) -> list[dict[str, Any]]:
        """The `tools=[...]` list for a request: Tools, plain functions, or specs already in API format.

        >>> def add(a: int, b: int) -> int:
        ...     '''Add two integers.'''
        ...     return a + b
        >>> [t["function"]["name"] for t in Tool.serialize_tools([add])]
        ['add']
        """
        specs = [t if isinstance(t, dict) else as_tool(t).to_openai_tool(strict) for t in tools]
        names = [s.get("function", {}).get("name") for s in specs]
        if duplicates := sorted({n for n in names if n and names.count(n) > 1}):
            raise ValueError(f"two tools are named {duplicates[0]!r}; the model could not tell them apart")
        return specs

    def validate(self, arguments: Any) -> BaseModel:
        """The arguments a model sent, checked and converted by the cached Pydantic model (lax mode:
        "3.5" becomes 3.5). A null for a parameter with a default means "use the default".
        Raises pydantic.ValidationError; arguments.py turns that into a message the model can act on.
        """
        return self.params_model.model_validate(drop_null_defaults(self.json_schema, arguments))

    def bind(self, validated: BaseModel) -> tuple[list[Any], dict[str, Any]]:
        """(args, kwargs) to call the function with, from a model that `validate` returned.

        Values are passed as validated: nested models stay models, "photo.png" is an ImgPath.
        """
        if self._by_json_name:  # a from_schema tool: keywords by JSON name, JSON values
            return [], validated.model_dump()
        values = validated.__dict__  # not getattr: a parameter named `json` would find the method
        args = [values[name] for name in self._positional]
        kwargs = {p.name: values[p.name] for p in self.parameters if p.name not in self._positional}
        return args, kwargs

    async def invoke(self, validated: BaseModel) -> Any:
        """Run the function with arguments that `validate` returned: awaited if async, in a worker
        thread if sync (a daemon thread with the caller's contextvars: see concurrency.py)."""
        args, kwargs = self.bind(validated)
        if self.is_async:
            return await self.func(*args, **kwargs)
        result = await in_thread(functools.partial(self.func, *args, **kwargs), tool=True)
        if inspect.isawaitable(result):  # a sync function that returned a coroutine
            return await result
        return result

    async def acall(self, arguments: Any) -> Any:
        """Repair and validate `arguments` as the executor does (arguments.prepare), then run the function.
        Raises ArgumentsError for arguments that can't be used, and whatever the function raises."""
        return await self.invoke(prepare(self, arguments))


@overload
def tool(func: Callable[..., Any], /, **options: Unpack[ToolOptions]) -> Tool: ...


@overload
def tool(func: None = None, /, **options: Unpack[ToolOptions]) -> Callable[[Callable[..., Any]], Tool]: ...


def tool(func: Callable[..., Any] | None = None, /,
         **options: Unpack[ToolOptions]) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Turn a function (sync or async) into a Tool: `@tool` or `@tool(name=..., strict=True, ...)` (ToolOptions).

    >>> @tool
    ... def add(a: int, b: int = 1) -> int:
    ...     '''Add two integers.'''
    ...     return a + b
    >>> add(2), add.name, add.description, add.json_schema["required"]
    (3, 'add', 'Add two integers.', ['a'])
    """
    rest: dict[str, Any] = dict(options)
    name: str | None = rest.pop("name", None)
    description: str | None = rest.pop("description", None)

    def make(f: Callable[..., Any]) -> Tool:
        return Tool(name, description, f, **rest)

    if func is None:
        return make
    return make(func)


def as_tool(obj: Any) -> Tool:
    """`obj` as a Tool: a Tool stays itself, a plain function is decorated on the spot.

    >>> def now() -> str:
    ...     '''The current time.'''
    >>> as_tool(now).description
    'The current time.'
    """
    if isinstance(obj, Tool):
        return obj
    if isinstance(obj, type) and issubclass(obj, Tool):
        raise TypeError(f"pass an instance of {obj.__name__}, e.g. {obj.__name__}(), not the class")
    if callable(obj):
        return tool(obj)
    raise TypeError(f"not a tool or a function: {obj!r}")


def tool_guidance(tools: Iterable[Any], context: Any = None) -> str:
    """The tools' `best_practices` and `prompt_injection_builder(context)` texts, for the system prompt.

    >>> @tool(best_practices="Search once, then answer.")
    ... def search(query: str) -> str:
    ...     '''Search the web.'''
    >>> print(tool_guidance([search]))
    # How to use the tools
    <BLANKLINE>
    ## search
    Search once, then answer.
    """
    sections = []
    for t in (t for t in tools if isinstance(t, Tool)):  # plain functions and API specs carry no advice
        texts = [t.best_practices.strip()] if t.best_practices else []
        if t.prompt_injection_builder is not None and (extra := t.prompt_injection_builder(context)):
            texts.append(extra.strip())
        if texts:
            sections.append(f"## {t.name}\n" + "\n".join(texts))
    return "# How to use the tools\n\n" + "\n\n".join(sections) if sections else ""


def check_name(name: str) -> None:
    """Raise ToolDefinitionError unless the API accepts `name` as a function name.

    >>> check_name("get weather")
    Traceback (most recent call last):
    ...
    mini_framework.schema.ToolDefinitionError: tool name 'get weather' is not allowed:
      use 1-64 characters from a-z, A-Z, 0-9, '_' and '-', e.g. name='get_weather'
    """
    if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
        suggestion = re.sub(r"[^a-zA-Z0-9_-]+", "_", str(name)).strip("_")[:64] or "my_tool"
        raise ToolDefinitionError(f"tool name {name!r} is not allowed: use 1-64 characters from a-z, A-Z, 0-9, "
                                  f"'_' and '-', e.g. name={suggestion!r}")


def _snake(class_name: str) -> str:
    """WebSearch -> web_search."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", class_name).lower()


def _first_paragraph(doc: str | None) -> str:
    """The first paragraph of a docstring, on one line."""
    return " ".join(inspect.cleandoc(doc or "").split("\n\n")[0].split())


def _first_param(func: Callable[..., Any]) -> str | None:
    """The name of the first parameter, or None (a bound method does not show its `self`)."""
    try:
        return next(iter(inspect.signature(func).parameters), None)
    except (TypeError, ValueError):
        return None


def _is_async(func: Callable[..., Any]) -> bool:
    """True for `async def` functions and methods, and for objects whose `__call__` is one."""
    if inspect.iscoroutinefunction(func):
        return True
    return callable(func) and inspect.iscoroutinefunction(type(func).__call__)
