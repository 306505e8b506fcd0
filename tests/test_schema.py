"""schema.py: type hints and docstrings -> JSON schema, refused parameters, and the strict-mode transform.

Tables first (one row per supported type, per docstring style, per refused parameter), then a
field-by-field comparison with what Pydantic itself says for equivalent hand-written models, then
strict mode checked against OpenAI's published rules for strict function calling.
"""
from __future__ import annotations

import datetime
import doctest
import enum
import inspect
import json
from dataclasses import dataclass
from typing import Annotated, Any, Callable, Dict, List, Literal, Optional, Set, Tuple, Union

import pytest
from jsonschema import Draft202012Validator
from pydantic import BaseModel, Field, ValidationError
from typing_extensions import TypedDict

import mini_framework.media.types as types_module
import mini_framework.schema as schema_module
from mini_framework.arguments import drop_null_defaults
from mini_framework.media.types import ImgPath, ImgUrl, Text
from mini_framework.schema import ToolDefinitionError, clean_schema, parse_docstring
from mini_framework.strict import STRICT_KEYWORDS, strict_schema
from mini_framework.tools import tool

EMPTY = inspect.Parameter.empty


# ----------------------------------------------------------------------------- types used below

class Unit(enum.Enum):
    CELSIUS = "celsius"
    FAHRENHEIT = "fahrenheit"


class Priority(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Location(BaseModel):
    """A point on Earth."""

    latitude: float = Field(..., ge=-90, le=90, description="纬度")
    longitude: float = Field(..., ge=-180, le=180, description="经度")
    name: Optional[str] = Field(None, description="位置名称")


class Address(BaseModel):
    street: str = Field(description="Street and number")
    city: str
    country: str = "CN"


class Customer(BaseModel):
    name: str
    address: Address  # two levels of nesting


class Book(BaseModel):
    title: str = Field(description="The book's title", examples=["Dune"])  # a *property* named title


@dataclass
class Size:
    width: int
    height: int = 100


class Filters(TypedDict):
    tag: str
    year: int


class TreeNode(BaseModel):
    value: int
    children: list[TreeNode] = []


def fn_with(hint: Any, default: Any = EMPTY) -> Callable[..., Any]:
    """A function `f(x: hint = default)`, built at run time so one table row is one line."""
    def f(x):  # noqa: ANN001, ANN202
        return x
    f.__annotations__ = {"x": hint}
    if default is not EMPTY:
        f.__defaults__ = (default,)
    return f


def prop(hint: Any, default: Any = EMPTY) -> tuple[dict[str, Any], bool]:
    """The schema of parameter `x`, and whether it is required."""
    schema = tool(fn_with(hint, default), name="f").json_schema
    return schema["properties"]["x"], "x" in schema.get("required", [])


# ----------------------------------------------------------------------------- one row per type

TYPE_ROWS = [
    ("str", str, EMPTY, {"type": "string"}, True),
    ("int with default", int, 3, {"type": "integer", "default": 3}, False),
    ("float", float, EMPTY, {"type": "number"}, True),
    ("bool", bool, False, {"type": "boolean", "default": False}, False),
    ("list[int]", list[int], EMPTY, {"type": "array", "items": {"type": "integer"}}, True),
    ("List[str]", List[str], EMPTY, {"type": "array", "items": {"type": "string"}}, True),
    ("bare list", list, EMPTY, {"type": "array", "items": {}}, True),
    ("dict[str, int]", dict[str, int], EMPTY, {"type": "object", "additionalProperties": {"type": "integer"}}, True),
    ("Dict[str, Any]", Dict[str, Any], EMPTY, {"type": "object", "additionalProperties": True}, True),
    ("Optional[int] = None", Optional[int], None, {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None}, False),
    ("int | None, required", int | None, EMPTY, {"anyOf": [{"type": "integer"}, {"type": "null"}]}, True),
    ("Union[int, str]", Union[int, str], EMPTY, {"anyOf": [{"type": "integer"}, {"type": "string"}]}, True),
    ("Literal", Literal["fast", "slow"], "fast", {"type": "string", "enum": ["fast", "slow"], "default": "fast"}, False),
    ("one-value Literal", Literal["v1"], EMPTY, {"type": "string", "enum": ["v1"]}, True),
    ("str Enum", Unit, Unit.CELSIUS, {"type": "string", "enum": ["celsius", "fahrenheit"], "default": "celsius"}, False),
    ("IntEnum", Priority, EMPTY, {"type": "integer", "enum": [1, 2]}, True),
    ("Pydantic model (inlined, docstring kept)", Location, EMPTY, {
        "type": "object", "description": "A point on Earth.",
        "properties": {
            "latitude": {"type": "number", "description": "纬度", "maximum": 90, "minimum": -90},
            "longitude": {"type": "number", "description": "经度", "maximum": 180, "minimum": -180},
            "name": {"description": "位置名称", "anyOf": [{"type": "string"}, {"type": "null"}], "default": None}},
        "required": ["latitude", "longitude"]}, True),
    ("nested model, two levels", Customer, EMPTY, {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "address": {"type": "object", "properties": {
                "street": {"type": "string", "description": "Street and number"},
                "city": {"type": "string"}, "country": {"type": "string", "default": "CN"}},
                "required": ["street", "city"]}},
        "required": ["name", "address"]}, True),
    ("list of models", list[Address], EMPTY, {"type": "array", "items": {"type": "object", "properties": {
        "street": {"type": "string", "description": "Street and number"},
        "city": {"type": "string"}, "country": {"type": "string", "default": "CN"}},
        "required": ["street", "city"]}}, True),
    ("a property named title survives", Book, EMPTY, {"type": "object", "properties": {
        "title": {"type": "string", "description": "The book's title"}}, "required": ["title"]}, True),
    ("dataclass", Size, EMPTY, {"type": "object", "properties": {
        "width": {"type": "integer"}, "height": {"type": "integer", "default": 100}}, "required": ["width"]}, True),
    ("TypedDict", Filters, EMPTY, {"type": "object", "properties": {
        "tag": {"type": "string"}, "year": {"type": "integer"}}, "required": ["tag", "year"]}, True),
    ("Annotated[T, str]", Annotated[int, "How many results"], 5,
     {"type": "integer", "description": "How many results", "default": 5}, False),
    ("Annotated[T, Field]", Annotated[int, Field(ge=1, le=7, description="Days ahead")], 1,
     {"type": "integer", "description": "Days ahead", "default": 1, "maximum": 7, "minimum": 1}, False),
    ("Field() as the default", int, Field(5, description="Page size", examples=[10]),
     {"type": "integer", "description": "Page size", "default": 5}, False),
    ("Text", Text, EMPTY, {"type": "string"}, True),
    ("ImgPath", ImgPath, EMPTY,
     {"type": "string", "description": "Path of a local image file, e.g. 'charts/sales.png'.", "format": "path"}, True),
    ("list[ImgUrl]", list[ImgUrl], EMPTY, {"type": "array", "items": {
        "type": "string", "description": "URL of an image, e.g. 'https://example.com/cat.png'.", "format": "uri"}}, True),
    ("list[Text]", List[Text], EMPTY, {"type": "array", "items": {"type": "string"}}, True),
    ("Any", Any, EMPTY, {}, True),
    ("date", datetime.date, EMPTY, {"type": "string", "format": "date"}, True),
    ("datetime | None", Optional[datetime.datetime], None,
     {"anyOf": [{"type": "string", "format": "date-time"}, {"type": "null"}], "default": None}, False),
    ("recursive model keeps a $ref", TreeNode, EMPTY, {"$ref": "#/$defs/TreeNode"}, True),
]


@pytest.mark.parametrize("hint, default, expected, required", [r[1:] for r in TYPE_ROWS], ids=[r[0] for r in TYPE_ROWS])
def test_each_supported_type_has_the_expected_schema(hint, default, expected, required):
    assert prop(hint, default) == (expected, required)


def test_recursive_models_keep_only_their_own_definition():
    schema = tool(fn_with(TreeNode), name="f").json_schema
    assert schema["$defs"] == {"TreeNode": {"type": "object", "properties": {
        "value": {"type": "integer"},
        "children": {"type": "array", "items": {"$ref": "#/$defs/TreeNode"}, "default": []}},
        "required": ["value"]}}
    assert clean_schema(schema) == schema  # cleaning is idempotent


def test_the_portable_schema_has_no_keyword_that_some_provider_rejects():
    @tool
    def f(book: Book, version: Literal["v1"], loc: Location, size: Size, when: datetime.date) -> None:
        """Everything at once."""

    text = json.dumps(f.json_schema)
    for keyword in ('"title": {"type"', '"$ref"', '"$defs"', '"examples"', '"const"', '"additionalProperties"'):
        if keyword.startswith('"title"'):
            assert keyword in text  # the property named title is still there ...
            assert '"title": "' not in text  # ... but no title keyword
        else:
            assert keyword not in text
    Draft202012Validator.check_schema(f.json_schema)


def test_the_parameter_records_say_what_the_schema_says():
    @tool
    def f(city: str, days: Annotated[int, Field(ge=1)] = 1, unit: Unit = Unit.CELSIUS,
          page: int = Field(1, description="Page", examples=[2])) -> None:
        """Forecast.

        Args:
            city: City name
            days: Days ahead
        """

    got = [(p.name, p.description, p.required) for p in f.parameters]
    assert got == [("city", "City name", True), ("days", "Days ahead", False), ("unit", "", False),
                   ("page", "Page", False)]


# ----------------------------------------------------------------------------- one row per docstring style

GOOGLE = """Search the catalogue for books.

    Args:
        query (str): What to look for,
            in plain words.
        limit: How many hits. Defaults to 10.

    Returns:
        list: the hits
    """
NUMPY = """Search the catalogue for books.

    Parameters
    ----------
    query : str
        What to look for,
        in plain words.
    limit : int, optional
        How many hits. Defaults to 10.

    Returns
    -------
    list
        the hits
    """
SPHINX = """Search the catalogue for books.

    :param query: What to look for,
        in plain words.
    :param int limit: How many hits. Defaults to 10.
    :type query: str
    :returns: the hits
    :raises ValueError: never
    """
BOTH = {"query": "What to look for, in plain words.", "limit": "How many hits. Defaults to 10."}

DOC_ROWS = [
    ("google", GOOGLE, "Search the catalogue for books.", BOTH),
    ("numpy", NUMPY, "Search the catalogue for books.", BOTH),
    ("sphinx", SPHINX, "Search the catalogue for books.", BOTH),
    ("google 'Arguments:' and a long summary", "Search the catalogue\nfor books.\n\nFast.\n\nArguments:\n    query: Q\n",
     "Search the catalogue for books.\n\nFast.", {"query": "Q"}),
    ("google 'Keyword Args:' after 'Args:'", "Find.\n\nArgs:\n    query: Q\n\nKeyword Args:\n    limit: L\n",
     "Find.", {"query": "Q", "limit": "L"}),
    ("numpy with two names on one line", "Find.\n\nParameters\n----------\nquery, limit : str\n    Shared.\n",
     "Find.", {"query": "Shared.", "limit": "Shared."}),
    ("summary only", "Find books.", "Find books.", {}),
    ("no docstring", None, "", {}),
    ("Returns before Args: the summary stops at the first section", "Find.\n\nReturns:\n    hits\n\nArgs:\n    query: Q\n",
     "Find.", {"query": "Q"}),
    ("Chinese descriptions", "在网络上搜索信息\n\nArgs:\n    query: 搜索关键词\n    limit: 最大返回结果数量，默认10条\n",
     "在网络上搜索信息", {"query": "搜索关键词", "limit": "最大返回结果数量，默认10条"}),
]


@pytest.mark.parametrize("doc, summary, params", [r[1:] for r in DOC_ROWS], ids=[r[0] for r in DOC_ROWS])
def test_each_docstring_style_gives_the_summary_and_parameter_descriptions(doc, summary, params):
    parsed = parse_docstring(doc)
    assert (parsed.summary, parsed.params) == (summary, params)

    def search(query: str, limit: int = 10) -> list[str]:
        return []
    search.__doc__ = doc
    t = tool(search)
    assert t.description == summary
    assert {name: p.get("description") for name, p in t.json_schema["properties"].items()} == \
        {"query": params.get("query"), "limit": params.get("limit")}


def test_a_description_in_the_code_beats_the_docstring():
    @tool
    def f(a: Annotated[int, "from Annotated"], b: Annotated[int, Field(description="from Field")],
          c: int = Field(0, description="from the default"), d: int = 0) -> None:
        """F.

        Args:
            a: from the docstring
            b: from the docstring
            c: from the docstring
            d: from the docstring
        """

    assert [p.description for p in f.parameters] == ["from Annotated", "from Field", "from the default", "from the docstring"]


# ----------------------------------------------------------------------------- one row per refused parameter

class Plain:
    """Not a model, not a dataclass."""


class HasTuple(BaseModel):
    point: tuple[int, int]


def star_args(*items: str) -> None: ...
def star_kwargs(**options: str) -> None: ...
def no_hint(city) -> None: ...  # noqa: ANN001
def a_tuple(point: tuple[float, float]) -> None: ...
def a_typing_tuple(point: Optional[Tuple[int]]) -> None: ...
def a_set(tags: set[str]) -> None: ...
def a_nested_set(tags: list[Set[int]]) -> None: ...
def a_frozenset(tags: frozenset[str]) -> None: ...
def raw_bytes(data: bytes) -> None: ...
def an_object(value: object) -> None: ...
def a_callable(op: Callable[[int], int]) -> None: ...
def a_plain_class(thing: Plain) -> None: ...
def a_model_with_a_tuple(shape: HasTuple) -> None: ...
def int_keys(scores: dict[int, str]) -> None: ...
def private_name(_secret: str) -> None: ...
def unknown_name(x: Missing) -> None: ...  # noqa: F821


REFUSED_ROWS = [
    (star_args, ["parameter 'items'", "*items is not supported", "items: list[str]"]),
    (star_kwargs, ["parameter 'options'", "**options is not supported", "declare each parameter"]),
    (no_hint, ["parameter 'city' has no type hint", "add one", "city: str"]),
    (a_tuple, ["parameter 'point'", "tuple[float, float] is not supported", "use list[T]"]),
    (a_typing_tuple, ["parameter 'point'", "Tuple[int] is not supported", "no tuples"]),
    (a_set, ["parameter 'tags'", "set[str] is not supported", "use list[T]"]),
    (a_nested_set, ["parameter 'tags'", "Set[int] is not supported", "no sets"]),
    (a_frozenset, ["parameter 'tags'", "frozenset[str] is not supported", "use list[T]"]),
    (raw_bytes, ["parameter 'data'", "bytes is not supported", "take a str"]),
    (an_object, ["parameter 'value'", "object is not supported", "typing.Any"]),
    (a_callable, ["parameter 'op'", "is not supported", "cannot send a function", "Literal"]),
    (a_plain_class, ["parameter 'thing'", "Plain is not supported", "a Pydantic model, a dataclass, a TypedDict"]),
    (a_model_with_a_tuple, ["parameter 'shape'", "field 'HasTuple.point'", "tuple[int, int] is not supported"]),
    (int_keys, ["parameter 'scores'", "keys are strings", "dict[str, V]"]),
    (private_name, ["parameter '_secret'", "rename it"]),
    (unknown_name, ["unknown_name()", "cannot resolve the type hints", "Missing"]),
]


@pytest.mark.parametrize("func, fragments", REFUSED_ROWS, ids=[r[0].__name__ for r in REFUSED_ROWS])
def test_each_unsupported_parameter_is_refused_with_the_reason_and_the_fix(func, fragments):
    with pytest.raises(ToolDefinitionError) as caught:
        tool(func)
    message = str(caught.value)
    assert func.__name__ in message
    for fragment in fragments:
        assert fragment in message


def test_self_and_cls_are_skipped_on_methods():
    class Toolbox:
        def search(self, query: str) -> str:
            """Search."""
            return query

        @classmethod
        def build(cls, size: int) -> int:
            """Build."""
            return size

    assert list(tool(Toolbox.search).json_schema["properties"]) == ["query"]
    assert list(tool(Toolbox.build.__func__, name="build").json_schema["properties"]) == ["size"]


# ----------------------------------------------------------------------------- compared with Pydantic itself

class Cabin(str, enum.Enum):
    ECONOMY = "economy"
    BUSINESS = "business"


class OrderItem(BaseModel):
    sku: str = Field(pattern=r"^[A-Z]{3}-\d{4}$", description="Stock keeping unit")
    quantity: int = Field(1, ge=1, le=99)


class Status(enum.Enum):
    OPEN = "open"
    SHIPPED = "shipped"


def get_weather(city: str, unit: Literal["celsius", "fahrenheit"] = "celsius",
                days: Annotated[int, Field(ge=1, le=7)] = 1) -> dict:
    """Weather forecast for a city.

    Args:
        city: City name, e.g. Beijing
        unit: Temperature unit
        days: Days ahead, 1-7
    """
    return {}


class GetWeather(BaseModel):
    city: str = Field(description="City name, e.g. Beijing")
    unit: Literal["celsius", "fahrenheit"] = Field("celsius", description="Temperature unit")
    days: int = Field(1, ge=1, le=7, description="Days ahead, 1-7")


def search_web(query: str, max_results: int = 10, language: str = "zh") -> list[dict[str, str]]:
    """在网络上搜索信息

    Args:
        query: 搜索关键词
        max_results: 最大返回结果数量，默认10条
        language: 搜索语言，默认中文
    """
    return []


class SearchWeb(BaseModel):
    query: str = Field(description="搜索关键词")
    max_results: int = Field(10, description="最大返回结果数量，默认10条")
    language: str = Field("zh", description="搜索语言，默认中文")


def weather_at(location: Location, days: int = 1) -> dict:
    """获取指定位置的天气预报

    Args:
        location: 位置信息，包含经纬度坐标
        days: 预报天数，1-7天，默认1天
    """
    return {}


class WeatherAt(BaseModel):
    location: Location = Field(description="位置信息，包含经纬度坐标")
    days: int = Field(1, description="预报天数，1-7天，默认1天")


def send_email(to: list[str], subject: str, body: str, cc: Optional[list[str]] = None,
               priority: Priority = Priority.LOW) -> str:
    """Send an e-mail. Ask the user first.

    Parameters
    ----------
    to : list of str
        Recipients' addresses
    subject : str
        Subject line
    body : str
        Plain-text body
    cc : list of str, optional
        Copy to
    priority : Priority
        1 = low, 2 = high
    """
    return ""


class SendEmail(BaseModel):
    to: list[str] = Field(description="Recipients' addresses")
    subject: str = Field(description="Subject line")
    body: str = Field(description="Plain-text body")
    cc: Optional[list[str]] = Field(None, description="Copy to")
    priority: Priority = Field(Priority.LOW, description="1 = low, 2 = high")


def create_order(user_id: int, items: list[OrderItem], shipping: Address, note: str | None = None) -> str:
    """Create an order.

    :param user_id: The customer's id
    :param items: What to ship, at least one
    :param shipping: Where to ship
    :param note: For the courier
    """
    return ""


class CreateOrder(BaseModel):
    user_id: int = Field(description="The customer's id")
    items: list[OrderItem] = Field(description="What to ship, at least one")
    shipping: Address = Field(description="Where to ship")
    note: str | None = Field(None, description="For the courier")


def book_flight(origin: Annotated[str, Field(pattern=r"^[A-Z]{3}$")], destination: Annotated[str, Field(pattern=r"^[A-Z]{3}$")],
                date: datetime.date, passengers: Annotated[int, Field(ge=1, le=9)] = 1, cabin: Cabin = Cabin.ECONOMY) -> str:
    """Book a flight.

    Args:
        origin: IATA code of the departure airport
        destination: IATA code of the arrival airport
        date: Day of departure
        passengers: How many people
        cabin: Travel class
    """
    return ""


class BookFlight(BaseModel):
    origin: str = Field(pattern=r"^[A-Z]{3}$", description="IATA code of the departure airport")
    destination: str = Field(pattern=r"^[A-Z]{3}$", description="IATA code of the arrival airport")
    date: datetime.date = Field(description="Day of departure")
    passengers: int = Field(1, ge=1, le=9, description="How many people")
    cabin: Cabin = Field(Cabin.ECONOMY, description="Travel class")


def analyze_data(data: List[Dict[str, Any]], analysis_type: Literal["summary", "trend", "correlation"],
                 include_charts: bool = False) -> dict:
    """对数据集进行统计分析

    Args:
        data: 要分析的数据集，每个元素是一个包含字段的字典
        analysis_type: 分析类型
        include_charts: 是否包含图表数据，默认否
    """
    return {}


class AnalyzeData(BaseModel):
    data: List[Dict[str, Any]] = Field(description="要分析的数据集，每个元素是一个包含字段的字典")
    analysis_type: Literal["summary", "trend", "correlation"] = Field(description="分析类型")
    include_charts: bool = Field(False, description="是否包含图表数据，默认否")


def resize_image(image: ImgPath, width: Annotated[int, Field(gt=0, le=4096)], keep_aspect: bool = True,
                 references: list[ImgUrl] = []) -> ImgPath:  # noqa: B006
    """Resize an image.

    Args:
        image: The picture to resize
        width: New width in pixels
        keep_aspect: Keep the aspect ratio
        references: Example pictures
    """
    return image


class ResizeImage(BaseModel):
    image: ImgPath = Field(description="The picture to resize")
    width: int = Field(gt=0, le=4096, description="New width in pixels")
    keep_aspect: bool = Field(True, description="Keep the aspect ratio")
    references: list[ImgUrl] = Field([], description="Example pictures")


def query_orders(status: list[Status], since: Optional[datetime.datetime] = None,
                 limit: Annotated[int, Field(le=100)] = 20, text: Annotated[str, Field(min_length=1, max_length=200)] = "*") -> list:
    """List orders.

    Args:
        status: Which states to include
        since: Only orders after this moment
        limit: At most this many
        text: Full-text filter
    """
    return []


class QueryOrders(BaseModel):
    status: list[Status] = Field(description="Which states to include")
    since: Optional[datetime.datetime] = Field(None, description="Only orders after this moment")
    limit: int = Field(20, le=100, description="At most this many")
    text: str = Field("*", min_length=1, max_length=200, description="Full-text filter")


REALISTIC = [(get_weather, GetWeather), (search_web, SearchWeb), (weather_at, WeatherAt), (send_email, SendEmail),
             (create_order, CreateOrder), (book_flight, BookFlight), (analyze_data, AnalyzeData),
             (resize_image, ResizeImage), (query_orders, QueryOrders)]
COMPARED = ("type", "enum", "const", "default", "description", "format", "items", "anyOf", "properties", "required",
            "additionalProperties", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength",
            "maxLength", "pattern", "minItems", "maxItems")


def pydantic_view(node: Any, defs: dict[str, Any]) -> Any:
    """Pydantic's own schema with `$ref`s resolved and annotations a model can't use removed (test-side, independent)."""
    if isinstance(node, list):
        return [pydantic_view(n, defs) for n in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        target = defs[node["$ref"].split("/")[-1]]
        return pydantic_view({**target, **{k: v for k, v in node.items() if k != "$ref"}}, defs)
    out = {}
    for key, value in node.items():
        if key == "properties":
            out[key] = {name: pydantic_view(sub, defs) for name, sub in value.items()}
        elif key == "const":
            out["enum"] = [value]
        elif key in ("title", "examples") or (key == "additionalProperties" and value is False):
            continue
        else:
            out[key] = value if key in ("default", "enum", "required") else pydantic_view(value, defs)
    return out


@pytest.mark.parametrize("func, model", REALISTIC, ids=[f.__name__ for f, _ in REALISTIC])
def test_realistic_functions_match_pydantic_field_by_field(func, model):
    ours = tool(func).json_schema
    raw = model.model_json_schema()
    theirs = pydantic_view(raw, raw.get("$defs", {}))
    assert ours.get("required", []) == theirs.get("required", [])
    assert list(ours["properties"]) == list(theirs["properties"])
    for name, mine in ours["properties"].items():
        expected = theirs["properties"][name]
        for key in COMPARED:
            assert mine.get(key) == expected.get(key), f"{func.__name__}.{name}: {key}"
        assert set(mine) <= set(COMPARED), f"{func.__name__}.{name}: unexpected keywords {set(mine) - set(COMPARED)}"


@pytest.mark.parametrize("func, model", REALISTIC, ids=[f.__name__ for f, _ in REALISTIC])
def test_our_model_accepts_and_refuses_what_pydantics_model_does(func, model):
    t = tool(func)
    samples = {
        "get_weather": ({"city": "Paris", "days": "3"}, {"city": "Paris", "days": 8}),
        "search_web": ({"query": "q", "max_results": "5"}, {"max_results": 5}),
        "weather_at": ({"location": {"latitude": "39.9", "longitude": 116.4}}, {"location": {"latitude": 91, "longitude": 0}}),
        "send_email": ({"to": ["a@b.c"], "subject": "s", "body": "b", "priority": 2}, {"to": "a@b.c", "subject": "s", "body": "b"}),
        "create_order": ({"user_id": 1, "items": [{"sku": "ABC-1234"}], "shipping": {"street": "1", "city": "X"}},
                         {"user_id": 1, "items": [{"sku": "abc"}], "shipping": {"street": "1", "city": "X"}}),
        "book_flight": ({"origin": "PEK", "destination": "SHA", "date": "2025-05-01", "cabin": "business"},
                        {"origin": "Beijing", "destination": "SHA", "date": "2025-05-01"}),
        "analyze_data": ({"data": [{"x": 1}], "analysis_type": "trend"}, {"data": [{"x": 1}], "analysis_type": "median"}),
        "resize_image": ({"image": "a.png", "width": "640"}, {"image": "a.png", "width": 0}),
        "query_orders": ({"status": ["open"], "since": "2025-01-01T00:00:00"}, {"status": ["lost"]}),
    }
    good, bad = samples[func.__name__]
    assert t.validate(good).model_dump() == model.model_validate(good).model_dump()
    with pytest.raises(ValidationError):
        model.model_validate(bad)
    with pytest.raises(ValidationError):
        t.validate(bad)


# ----------------------------------------------------------------------------- strict mode

# The rules, from OpenAI's Structured Outputs guide ("Supported schemas"; strict function calling
# uses the same subset): root is an object (not anyOf); every object has additionalProperties:
# false and lists every property in `required`; optional values are unions with null; supported
# keywords only (string: pattern, format from a fixed list; number: minimum/maximum/exclusive*/
# multipleOf; array: minItems/maxItems; anyOf, enum, const, $ref/$defs, description); a `$ref` has
# no siblings; at most 10 levels of nesting, 5000 properties, 1000 enum values in total.
STRICT_ALLOWED = STRICT_KEYWORDS
STRICT_FORMATS = {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}


def strict_violations(schema: dict[str, Any]) -> list[str]:
    """Every way `schema` breaks the strict-mode rules above ([] when it follows them all)."""
    problems: list[str] = []
    counts = {"properties": 0, "enum": 0}
    if schema.get("type") != "object" or "anyOf" in schema:
        problems.append("root: must be a plain object")

    def walk(node: dict[str, Any], path: str, depth: int) -> None:
        if "$ref" in node:
            if len(node) > 1:
                problems.append(f"{path}: $ref with siblings {sorted(set(node) - {'$ref'})}")
            return
        if unknown := sorted(set(node) - STRICT_ALLOWED):
            problems.append(f"{path}: unsupported keywords {unknown}")
        if not set(node) & {"type", "anyOf", "enum", "const"}:
            problems.append(f"{path}: no type")
        if "format" in node and node["format"] not in STRICT_FORMATS:
            problems.append(f"{path}: unsupported format {node['format']!r}")
        counts["enum"] += len(node.get("enum", []))
        if node.get("type") == "object":
            if depth > 10:
                problems.append(f"{path}: more than 10 levels of nesting")
            if node.get("additionalProperties") is not False:
                problems.append(f"{path}: additionalProperties must be false")
            props = node.get("properties", {})
            if list(node.get("required", [])) != list(props):
                problems.append(f"{path}: required must list every property")
            counts["properties"] += len(props)
            for name, sub in props.items():
                walk(sub, f"{path}.{name}", depth + 1)
        if isinstance(node.get("items"), dict):
            walk(node["items"], f"{path}[]", depth)
        for branch in node.get("anyOf", []):
            walk(branch, path, depth)

    walk(schema, "", 1)
    for name, sub in schema.get("$defs", {}).items():
        walk(sub, f"$defs.{name}", 1)
    if counts["properties"] > 5000 or counts["enum"] > 1000:
        problems.append("too large")
    return problems


STRICT_TOOLS = [f for f, _ in REALISTIC if f is not analyze_data] + [fn_with(TreeNode), fn_with(Book), fn_with(Size)]


@pytest.mark.parametrize("func", STRICT_TOOLS, ids=lambda f: getattr(f, "__name__", "f"))
def test_strict_schemas_follow_every_rule(func):
    t = tool(func, name="f")
    assert strict_violations(t.json_schema) != [] or not t.json_schema["properties"]  # the checker can fail ...
    strict = strict_schema(t.json_schema)
    assert strict_violations(strict) == []  # ... and passes the transformed schema
    Draft202012Validator.check_schema(strict)
    assert strict_schema(strict) == strict  # idempotent
    assert strict_schema(t.json_schema) == strict_schema(t.params_model.model_json_schema())  # raw Pydantic works too


def test_strict_makes_optional_parameters_required_and_nullable_without_defaults():
    strict = strict_schema(tool(get_weather).json_schema)
    assert strict == {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "City name, e.g. Beijing"},
            "unit": {"anyOf": [{"type": "string", "enum": ["celsius", "fahrenheit"]}, {"type": "null"}],
                     "description": "Temperature unit"},
            "days": {"anyOf": [{"type": "integer", "maximum": 7, "minimum": 1}, {"type": "null"}],
                     "description": "Days ahead, 1-7"}},
        "required": ["city", "unit", "days"],
        "additionalProperties": False}


def test_strict_drops_what_it_cannot_say_and_pydantic_still_enforces_it():
    t = tool(query_orders)
    text = strict_schema(t.json_schema)["properties"]["text"]
    assert text == {"anyOf": [{"type": "string"}, {"type": "null"}], "description": "Full-text filter"}  # no min/maxLength
    with pytest.raises(ValidationError):
        t.validate({"status": ["open"], "text": ""})  # min_length=1 is still checked on our side
    image = strict_schema(tool(resize_image).json_schema)["properties"]["image"]
    assert "format" not in image  # "path" is not one of the strict formats
    assert strict_schema(tool(book_flight).json_schema)["properties"]["date"]["format"] == "date"  # "date" is


def test_strict_turns_discriminated_unions_into_anyof():
    class Cat(BaseModel):
        kind: Literal["cat"]
        lives: int = 9

    class Dog(BaseModel):
        kind: Literal["dog"]

    t = tool(fn_with(Annotated[Union[Cat, Dog], Field(discriminator="kind")]), name="f")
    assert "oneOf" in t.json_schema["properties"]["x"]
    pet = strict_schema(t.json_schema)
    assert strict_violations(pet) == []
    assert [b["properties"]["kind"] for b in pet["properties"]["x"]["anyOf"]] == [{"type": "string", "enum": ["cat"]},
                                                                                 {"type": "string", "enum": ["dog"]}]


STRICT_REFUSED = [
    ("dict[str, V]", fn_with(dict[str, int]), "parameter 'x' is a dict with free-form keys"),
    ("Dict[str, Any]", fn_with(Dict[str, Any]), "parameter 'x' is a dict with free-form keys"),
    ("nested dict", fn_with(list[dict[str, str]]), "parameter 'x[]' is a dict with free-form keys"),
    ("Any", fn_with(Any), "parameter 'x' accepts any JSON value"),
    ("bare list", fn_with(list), "parameter 'x[]' accepts any JSON value"),
]


@pytest.mark.parametrize("func, fragment", [r[1:] for r in STRICT_REFUSED], ids=[r[0] for r in STRICT_REFUSED])
def test_strict_refuses_what_it_cannot_express(func, fragment):
    t = tool(func, name="f")  # fine without strict mode ...
    with pytest.raises(ToolDefinitionError, match="strict mode") as caught:
        t.to_openai_tool(strict=True)
    assert fragment in str(caught.value) and "strict=False" in str(caught.value)
    with pytest.raises(ToolDefinitionError, match=fragment.replace("[", r"\[").replace("]", r"\]")):
        tool(func, name="f", strict=True)  # ... and refused at decoration time with strict=True


def test_strict_refuses_a_non_object_root_and_composition_it_cannot_keep():
    with pytest.raises(ToolDefinitionError, match="must be an object"):
        strict_schema({"type": "array", "items": {"type": "string"}})
    with pytest.raises(ToolDefinitionError, match="'allOf'"):
        strict_schema({"type": "object", "properties": {"a": {"allOf": [{"type": "string"}, {"minLength": 2}]}}})


def test_what_the_strict_schema_allows_the_tool_accepts():
    """A model in strict mode sends null for every optional parameter; validation turns those into defaults."""
    from jsonschema import validate
    t = tool(weather_at)
    arguments = {"location": {"latitude": 39.9, "longitude": 116.4, "name": None}, "days": None}
    validate(arguments, t.strict_json_schema)
    assert t.validate(arguments).model_dump() == {"location": {"latitude": 39.9, "longitude": 116.4, "name": None}, "days": 1}


# ----------------------------------------------------------------------------- null means "use the default"

NULL_ROWS = [
    ("optional non-nullable dropped", {"type": "object", "properties": {"n": {"type": "integer", "default": 5}}},
     {"n": None}, {}),
    ("required kept (the error is the model's to fix)", {"type": "object", "properties": {"n": {"type": "integer"}},
                                                        "required": ["n"]}, {"n": None}, {"n": None}),
    ("nullable kept", {"type": "object", "properties": {"n": {"anyOf": [{"type": "integer"}, {"type": "null"}]}}},
     {"n": None}, {"n": None}),
    ("nested and in lists", {"type": "object", "properties": {"xs": {"type": "array", "items": {
        "type": "object", "properties": {"k": {"type": "string", "default": "a"}}}}}},
     {"xs": [{"k": None}, {"k": "b"}]}, {"xs": [{}, {"k": "b"}]}),
    ("unknown keys untouched", {"type": "object", "properties": {}}, {"zz": None}, {"zz": None}),
    ("not a dict: untouched", {"type": "object", "properties": {}}, ["a"], ["a"]),
]


@pytest.mark.parametrize("schema, data, expected", [r[1:] for r in NULL_ROWS], ids=[r[0] for r in NULL_ROWS])
def test_null_means_the_default_only_where_null_is_not_a_value(schema, data, expected):
    assert drop_null_defaults(schema, data) == expected


def test_the_examples_in_the_modules_docstrings_run():
    for module in (schema_module, types_module):
        assert doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE).failed == 0
