"""Exercise checkers of lessons 03-05: each solution passes, each stub waits, each realistic wrong answer gets ❌."""
from __future__ import annotations

import copy
import datetime
import difflib
import json
from typing import Literal

import pytest
from checker_cases import checker_tests, stub
from pydantic import BaseModel, Field

from course import lesson03, lesson03b, lesson04, lesson05
from mini_framework import tool
from mini_framework.numerals import parse_number
from mini_framework.strict import strict_schema

# -- lesson 03 ----------------------------------------------------------------------------------

def _flights(origin: str, destination: str, date: str, max_stops: int = 1) -> list:
    """查询两个城市之间的航班

    Args:
        origin: 出发城市，例如上海
        destination: 到达城市，例如东京
        date: 出发日期，如 2025-03-07 或 下周五
        max_stops: 最多经停次数
    """
    return []


def _flights_stub(origin, destination, date, max_stops=1):
    return [{"flight": "MU523", "origin": origin, "destination": destination, "date": date, "stops": 0}]


def _flights_undescribed(origin: str, destination: str, date: str, max_stops: int = 1) -> list:
    """查询两个城市之间的航班"""
    return []


def _flights_all_required(origin: str, destination: str, date: str, max_stops: int) -> list:
    """查询两个城市之间的航班

    Args:
        origin: 出发城市
        destination: 到达城市
        date: 出发日期
        max_stops: 最多经停次数
    """
    return []


def _flights_calendar_date(origin: str, destination: str, date: datetime.date, max_stops: int = 1) -> list:
    """查询两个城市之间的航班

    Args:
        origin: 出发城市，例如上海
        destination: 到达城市，例如东京
        date: 出发日期
        max_stops: 最多经停次数
    """
    return []


def _flights_helper(origin: str, destination: str, date: str, max_stops: int = 1) -> list:
    """A helper.

    Args:
        origin: 出发城市，例如上海
        destination: 到达城市，例如东京
        date: 出发日期
        max_stops: 最多经停次数
    """
    return []


def _flights_letters(origin: str, destination: str, date: str, max_stops: int = 1) -> list:
    """查询两个城市之间的航班

    Args:
        origin: o
        destination: d
        date: x
        max_stops: y
    """
    return []


def _flights_text_stops(origin: str, destination: str, date: str, max_stops: str = "1") -> list:
    """查询两个城市之间的航班

    Args:
        origin: 出发城市，例如上海
        destination: 到达城市，例如东京
        date: 出发日期
        max_stops: 最多经停次数
    """
    return []


class _Booking(BaseModel):
    guests: int = Field(..., ge=1, le=8, description="number of guests")
    room: Literal["single", "double", "suite"] = Field(..., description="room type")
    nights: int = Field(..., ge=1, description="number of nights")


class _MoreThanOneNight(BaseModel):
    guests: int = Field(..., ge=1, le=8, description="number of guests")
    room: Literal["single", "double", "suite"] = Field(..., description="room type")
    nights: int = Field(..., gt=1, description="number of nights")


def _book_more_than_one_night(booking: _MoreThanOneNight) -> str:
    """Book a room."""
    return "ok"


class _LooseBooking(BaseModel):
    guests: int = Field(..., description="number of guests")
    room: str = Field(..., description="room type")
    nights: int = Field(..., description="nights")


class _SilentBooking(BaseModel):
    guests: int = Field(..., ge=1, le=8)
    room: Literal["single", "double", "suite"]
    nights: int = Field(..., ge=1)


def _book(booking: _Booking) -> str:
    """Book a room."""
    return "ok"


def _book_loose(booking: _LooseBooking) -> str:
    """Book a room."""
    return "ok"


def _book_silent(booking: _SilentBooking) -> str:
    """Book a room."""
    return "ok"


def _book_flat(guests: int, room: str, nights: int) -> str:
    """Book a room."""
    return "ok"


# -- lesson 03b ---------------------------------------------------------------------------------

def _wrap_keeping_defaults(schema):
    """Closed, all required, optional ones wrapped in anyOf with null, but each keeps its default inside."""
    schema = copy.deepcopy(schema)

    def close(node):
        for sub in [*node.get("anyOf", []), *([node["items"]] if "items" in node else [])]:
            close(sub)
        if node.get("type") == "object" and "properties" in node:
            for name, prop in list(node["properties"].items()):
                close(prop)
                if name not in node.get("required", []) and not strict_nullable(prop):
                    node["properties"][name] = {"anyOf": [prop, {"type": "null"}]}
            node["required"] = list(node["properties"])
            node["additionalProperties"] = False
        return node
    return close(schema)


def strict_nullable(prop):
    return any(b.get("type") == "null" for b in prop.get("anyOf", []))


def _top_level_only(schema):
    """Right at the top, but nested objects and array items left as they were."""
    out = copy.deepcopy(schema)
    optional = set(out["properties"]) - set(out.get("required", []))
    for name in optional:
        prop = {k: v for k, v in out["properties"][name].items() if k != "default"}
        out["properties"][name] = prop if strict_nullable(prop) else {"anyOf": [prop, {"type": "null"}]}
    return {**out, "required": list(out["properties"]), "additionalProperties": False}


def _everything_nullable(schema):
    out = strict_schema(schema)
    out["properties"] = {k: v if strict_nullable(v) else {"anyOf": [v, {"type": "null"}]}
                         for k, v in out["properties"].items()}
    return out


def _in_place(schema):
    result = strict_schema(schema)
    schema.clear()
    schema.update(result)
    return schema


def _enum_lost(schema):
    out = strict_schema(schema)
    for prop in out["properties"].values():
        for branch in prop.get("anyOf", []):
            branch.pop("enum", None)
    return out


# -- lesson 04 ----------------------------------------------------------------------------------

def _chinese(text):
    return parse_number(text) if text and set(text) <= set("零一二两三四五六七八九十百千万点负") else None


def _chinese_guessing(text):
    """Drops what it doesn't know: 一些 (some) becomes 1."""
    kept = "".join(ch for ch in text if ch in "零一二两三四五六七八九十百千万点负")
    return _chinese(kept) if kept else None


def _chinese_wan_added(text):
    """万 added instead of multiplied."""
    if "万" in text:
        before, _, after = text.partition("万")
        return (_chinese(before) or 0) + 10_000 + (_chinese(after) or 0)
    return _chinese(text)


def _explain(error, tool_name):
    lines = [f"Invalid arguments for {tool_name}:"]
    lines += [f"- {'.'.join(map(str, p['loc']))}: got {json.dumps(p.get('input'), ensure_ascii=False)}; {p['msg']}"
              for p in error.errors()]
    return "\n".join(lines + [f"Fix these arguments and call {tool_name} again."])


def _coerce(arguments, schema):
    out = dict(arguments)
    for name, value in arguments.items():
        kind = schema.get("properties", {}).get(name, {}).get("type")
        if kind in ("integer", "number") and isinstance(value, str) and (n := parse_number(value)) is not None:
            if kind == "number" or float(n).is_integer():
                out[name] = int(n) if kind == "integer" else n
    return out


def _coerce_in_place(arguments, schema):
    arguments.update(_coerce(arguments, schema))
    return arguments


def _coerce_rounding(arguments, schema):
    """'3.5' in an integer slot rounded to 4: a guess about what the user meant."""
    out = _coerce(arguments, schema)
    for name, value in arguments.items():
        kind = schema.get("properties", {}).get(name, {}).get("type")
        if kind == "integer" and isinstance(value, str) and (n := parse_number(value)) is not None:
            out[name] = round(n)
    return out


def _coerce_float_for_integer(arguments, schema):
    """'3.5' made 3.5 in an integer slot: the error moves into the tool."""
    out = _coerce(arguments, schema)
    for name, value in arguments.items():
        if isinstance(value, str) and (n := parse_number(value)) is not None and name in schema.get("properties", {}):
            if schema["properties"][name].get("type") in ("integer", "number"):
                out[name] = n
    return out


def _coerce_undeclared_too(arguments, schema):
    out = _coerce(arguments, schema)
    for name, value in arguments.items():
        if name not in schema.get("properties", {}) and isinstance(value, str) and parse_number(value) is not None:
            out[name] = parse_number(value)
    return out


# -- lesson 05 ----------------------------------------------------------------------------------


FLIGHT = ["origin", "destination", "date", "max_stops"]


def _unknown_arguments(tool_name, arguments, parameters):
    unknown = [name for name in arguments if name not in parameters]
    if not unknown:
        return None
    lines = []
    for name in unknown:
        close = difflib.get_close_matches(name, parameters, n=1, cutoff=0.6)
        lines.append(f"'{name}' is not a parameter of {tool_name}" + (f" (did you mean '{close[0]}'?)" if close else ""))
    return "\n".join(lines + [f"Its parameters are: {', '.join(parameters)}. Call {tool_name} again."])


def _list_without_suggestion(tool_name, arguments, parameters):
    """Names the unknown arguments and lists the real ones, but never suggests: 'origin' only appears in the list."""
    unknown = [name for name in arguments if name not in parameters]
    if not unknown:
        return None
    return f"Unknown arguments for {tool_name}: {', '.join(unknown)}. Its parameters are: {', '.join(parameters)}."


def _always_suggest(tool_name, arguments, parameters):
    """Suggests the best match even when nothing is close ('airline' → 'origin')."""
    unknown = [name for name in arguments if name not in parameters]
    if not unknown:
        return None
    lines = [f"'{n}' is not a parameter of {tool_name}; did you mean "
             f"'{difflib.get_close_matches(n, parameters, n=1, cutoff=0.0)[0]}'?" for n in unknown]
    return "\n".join(lines + [f"Its parameters are: {', '.join(parameters)}."])


def _first_only(tool_name, arguments, parameters):
    unknown = [name for name in arguments if name not in parameters]
    return _unknown_arguments(tool_name, {unknown[0]: None}, parameters) if unknown else None


def _always_a_message(tool_name, arguments, parameters):
    return _unknown_arguments(tool_name, arguments, parameters) or f"All arguments of {tool_name} are fine."


def _no_tool_name(tool_name, arguments, parameters):
    text = _unknown_arguments(tool_name, arguments, parameters)
    return text.replace(tool_name, "the tool") if text else None


RATES = lesson05.RATES
Currency = Literal["CNY", "USD", "EUR", "JPY"]


def _convert(amount: float, from_currency: Currency, to_currency: Currency) -> float:
    """把一笔钱从一种货币换算成另一种货币（按当天汇率）

    Args:
        amount: 要换算的金额，例如 100
        from_currency: 这笔钱原来的货币：CNY 人民币、USD 美元、EUR 欧元、JPY 日元
        to_currency: 要换成的货币，代码同上
    """
    return round(amount * RATES[from_currency] / RATES[to_currency], 2)


def _convert_text(amount: float, from_currency: Currency, to_currency: Currency) -> str:
    return f"{_convert(amount, from_currency, to_currency)} {to_currency}"


_convert_text.__doc__ = _convert.__doc__  # described as well as the solution: only the result is wrong


def _convert_helper(x: float, y: str, z: str) -> float:
    """A helper.

    Args:
        x: x
        y: y
    """
    return round(x * RATES[y] / RATES[z], 2)


def _convert_letters(amount: float, from_currency: Currency, to_currency: Currency) -> float:
    """A helper.

    Args:
        amount: x
        from_currency: y
        to_currency: z
    """
    return round(amount * RATES[from_currency] / RATES[to_currency], 2)


def _convert_described_letters(amount: float, from_currency: Currency, to_currency: Currency) -> float:
    """把一笔钱从一种货币换算成另一种货币

    Args:
        amount: x
        from_currency: y
        to_currency: z
    """
    return round(amount * RATES[from_currency] / RATES[to_currency], 2)


def _convert_contradicting(amount: float, from_currency: Currency, to_currency: Currency) -> float:
    """Looks up today's weather in a city.

    Args:
        amount: how much money
        from_currency: the currency the money is in
        to_currency: the currency wanted
    """
    return round(amount * RATES[from_currency] / RATES[to_currency], 2)


def _convert_inverted(amount: float, from_currency: Currency, to_currency: Currency) -> float:
    """把一笔钱从一种货币换算成另一种货币（按当天汇率）

    Args:
        amount: 要换算的金额，例如 100
        from_currency: 这笔钱原来的货币：CNY 人民币、USD 美元、EUR 欧元、JPY 日元
        to_currency: 要换成的货币，代码同上
    """
    return round(amount * RATES[to_currency] / RATES[from_currency], 2)


def _convert_free_text(amount: float, from_currency: str, to_currency: str) -> float:
    """把一笔钱从一种货币换算成另一种货币（按当天汇率）

    Args:
        amount: 要换算的金额，例如 100
        from_currency: 这笔钱原来的货币，例如 美元
        to_currency: 要换成的货币，例如 人民币
    """
    return round(amount * RATES[from_currency] / RATES[to_currency], 2)


@tool
def _add(a: float, b: float) -> float:
    """把两个数相加，返回它们的和

    Args:
        a: 第一个数
        b: 第二个数
    """
    return a + b


@tool
def _multiply(a: float, b: float) -> float:
    """把两个数相乘，返回它们的积

    Args:
        a: 第一个数
        b: 第二个数
    """
    return a * b


REAL_TOOLS = [_add, _multiply]
CONVERT = tool(name="convert_currency")

CASES = {
    "search_flights": (lesson03.search_flights, [tool(_flights)], [_flights_stub], [
        [_flights],                                  # no @tool: ❌ "put @tool on the line above", not ⏳
        [tool(_flights_undescribed)],                # no Args: section
        [tool(_flights_all_required)],               # max_stops without its default
        [tool(_flights_calendar_date)],              # datetime.date refuses the model's own "下周五"
        [tool(_flights_helper)],                     # "A helper."
        [tool(_flights_letters)],                    # parameters described "o", "d", "x", "y"
        [tool(_flights_text_stops)],                 # max_stops a string
    ]),
    "book_room": (lesson03.book_room, [tool(_book)], [None], [
        [tool(_book_loose)],                         # no limits, room any string
        [_book],                                     # no @tool
        [tool(_book_silent)],                        # fields without descriptions
        [tool(_book_flat)],                          # three parameters instead of one Booking
        [tool(_book_more_than_one_night)],           # gt=1: a one-night stay refused
    ]),
    "to_strict": (lesson03b.to_strict, [strict_schema], [stub], [
        [lambda schema: {**schema, "additionalProperties": False}],                     # optional ones not required
        [lambda schema: (schema.update(additionalProperties=False, required=list(schema["properties"])), schema)[1]],
        [lambda schema: {**schema, "required": list(schema["properties"]), "additionalProperties": False}],
        [_wrap_keeping_defaults],                    # a default left inside the anyOf
        [_top_level_only],                           # nested objects and array items not closed
        [_everything_nullable],                      # required ones made nullable too
        [_in_place],                                 # modifies its input
        [_enum_lost],                                # the unit's enum dropped
        [lambda schema: json.dumps(strict_schema(schema))],                             # JSON text, not a dict
    ]),
    "parse_chinese_number": (lesson04.parse_chinese_number, [_chinese], [stub], [
        [lambda text: 102 if text == "十二" else _chinese(text)],                     # 十二 read as 一百零二
        [lambda text: abs(v) if isinstance(v := _chinese(text), (int, float)) else v],  # sign lost
        [lambda text: int(v) if isinstance(v := _chinese(text), float) else v],         # decimals lost
        [_chinese_guessing],                                                            # 一些 → 1
        [_chinese_wan_added],                                                           # 万 added, not multiplied
        [lambda text: str(v) if (v := _chinese(text)) is not None else None],           # "123", a string
    ]),
    "explain_errors": (lesson04.explain_errors, [_explain], [stub], [
        [lambda error, name: f"Invalid arguments, call {name} again."],                 # no field, no value
        [lambda error, name: "\n".join(str(p["loc"]) for p in error.errors())],         # fields only
        [lambda error, name: str(error)],                                               # pydantic's own text
        [lambda error, name: {"error": _explain(error, name)}],                         # a dict, not text
        [lambda error, name: _explain(error, name).rsplit("\n", 1)[0]],                 # no instruction at the end
    ]),
    "coerce_numbers": (lesson04.coerce_numbers, [_coerce], [stub], [
        [_coerce_in_place],
        [lambda args, schema: {k: parse_number(v) if isinstance(v, str) and parse_number(v) is not None else v
                               for k, v in args.items()}],                              # ignores the schema
        [_coerce_rounding],                          # '3.5' → 4 in an integer slot
        [_coerce_float_for_integer],                 # '3.5' → 3.5 in an integer slot
        [_coerce_undeclared_too],                    # 'extra' coerced though the schema doesn't declare it
    ]),
    "unknown_arguments_message": (lesson05.unknown_arguments_message, [_unknown_arguments], [stub], [
        [_list_without_suggestion],                  # passes the list, never suggests 'origin' for 'orgin'
        [_always_suggest],                           # suggests 'origin' for 'airline'
        [_first_only],                               # reports only the first unknown argument
        [_always_a_message],                         # a message even when every name is right
        [_no_tool_name],                             # doesn't say which tool
        [lambda tool_name, arguments, parameters: f"Unknown argument in {tool_name}."],     # lists nothing
        [lambda tool_name, arguments, parameters: {"unknown": [n for n in arguments if n not in parameters]}
         if set(arguments) - set(parameters) else None],                                   # a dict, not text
    ]),
    "convert_currency": (lesson05.convert_currency, [CONVERT(_convert), REAL_TOOLS], [None, REAL_TOOLS], [
        [CONVERT(_convert_helper), REAL_TOOLS],      # "A helper.", parameters x, y, z described "x", "y"
        [CONVERT(_convert_letters), REAL_TOOLS],     # "A helper.", right names described "x", "y", "z"
        [CONVERT(_convert_described_letters), REAL_TOOLS],  # a description, parameters described "x", "y", "z"
        [CONVERT(_convert_contradicting), REAL_TOOLS],      # a description about something else: never picked
        [CONVERT(_convert_inverted), REAL_TOOLS],    # the rate applied the wrong way round
        [_convert, REAL_TOOLS],                      # no @tool
        [tool(name="currency_converter")(_convert), REAL_TOOLS],  # not the name the model asks for
        [CONVERT(_convert_free_text), REAL_TOOLS],   # currencies as free text: the model sends 美元, the tool fails
        [CONVERT(_convert_text), REAL_TOOLS],        # '710.0 CNY': text, not a number
    ]),
}


test_checker_passes_the_solution, test_checker_says_not_solved_to_the_stub, \
    test_checker_catches_a_wrong_answer_without_raising = checker_tests(CASES)


def _explain_phrased(intro, ending):
    def explain(error, tool_name):
        lines = [intro]
        lines += [f"- {'.'.join(map(str, p['loc']))}: {json.dumps(p.get('input'), ensure_ascii=False)} ({p['msg']})"
                  for p in error.errors()]
        return "\n".join(lines + [ending.format(tool_name)])
    return explain


@pytest.mark.parametrize("intro,ending", [
    ("调用参数不正确：", "请修正后重新调用 {}。"),
    ("参数有误：", "请改正这些参数，再次调用 {}。"),
    ("Some arguments were wrong:", "Fix these arguments and call {} again."),
    ("Problems with your call:", "Please correct them and call {} again."),
])
def test_explain_errors_accepts_any_clear_phrasing_of_an_error(intro, ending):
    result = lesson04.explain_errors(_explain_phrased(intro, ending))
    assert result.passed, result.message

