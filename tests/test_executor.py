"""The executor: every call answered exactly once, in order, with nothing raised and nothing leaked."""
from __future__ import annotations

import asyncio
import json
import random
import string
import threading
import time

import pytest

from mini_framework import Executor, ToolCall, ToolError, tool
from mini_framework.executor import describe_exception, redact, success_envelope, unknown_tool_message

SECRET = "sk-live-0123456789abcdefghijKLMNOP"


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def get_weather(city: str, unit: str = "celsius") -> dict:
    """Weather in a city."""
    if city == "Atlantis":
        raise ToolError("暂无该城市数据：Atlantis")
    return {"city": city, "temperature": 22, "unit": unit}


@tool
def leaky(path: str) -> str:
    """Fails with a message full of things a model must not see."""
    raise ConnectionError(f"POST https://api.example.com?api_key={SECRET} failed, Bearer {SECRET}, "
                          f"see {leaky.func.__code__.co_filename}:12")


def results(calls, tools=(add, get_weather, leaky), **options):
    return Executor(tools, **options).run_sync(calls)


def test_a_good_call_runs_and_its_value_is_kept():
    [r] = results([ToolCall("call_1", "add", '{"a": 2, "b": 40}')])
    assert (r.ok, r.content, r.value, r.message) == (True, "42", 42, {"role": "tool", "tool_call_id": "call_1", "content": "42"})


def test_calls_arrive_as_sdk_objects_dicts_or_toolcalls():
    from openai.types.chat import ChatCompletionMessage
    message = ChatCompletionMessage(role="assistant", content=None, tool_calls=[
        {"id": "call_a", "type": "function", "function": {"name": "add", "arguments": '{"a": 1, "b": 2}'}}])
    as_dict = {"id": "call_b", "type": "function", "function": {"name": "add", "arguments": {"a": 3, "b": 4}}}
    assert [r.content for r in results([*message.tool_calls, as_dict])] == ["3", "7"]


def test_number_words_and_broken_json_are_repaired_before_validation():
    [r] = results([ToolCall("c", "add", "```json\n{'a': '一百二十三', 'b': 'four hundred fifty-six',}\n```")])
    assert r.ok and r.value == 579


def test_unknown_tools_get_the_list_and_the_closest_name():
    [r] = results([ToolCall("c", "get_current_weather", '{"city": "北京"}')])
    error = json.loads(r.content)
    assert (r.ok, r.failure, error["status"]) == (False, "unknown_tool", "error")
    assert "Available tools: add, get_weather, leaky" in error["error"] and "Did you mean 'get_weather'?" in error["error"]


def test_unknown_tool_message_without_a_close_name():
    text = unknown_tool_message("calculate_discount", ["get_weather", "add_numbers"])
    assert "Did you mean" not in text and "get_weather, add_numbers" in text


def test_invalid_arguments_name_the_field_then_the_budget_runs_out():
    executor = Executor([get_weather], retry_budget=2)
    bad = ToolCall("c", "get_weather", '{"city": ["北京"]}')
    first, second, third = (executor.run_sync([bad])[0] for _ in range(3))
    assert first.failure == second.failure == "invalid_arguments"
    assert "city" in json.loads(first.content)["error"] and "call get_weather again" in json.loads(first.content)["error"]
    assert third.failure == "gave_up" and "Do not call it again" in json.loads(third.content)["error"]
    assert executor.run_sync([ToolCall("d", "get_weather", '{"city": "北京"}')])[0].ok  # good calls still run


def test_tool_errors_reach_the_model_as_written():
    [r] = results([ToolCall("c", "get_weather", '{"city": "Atlantis"}')])
    assert json.loads(r.content) == {"status": "error", "error": "暂无该城市数据：Atlantis"}


def test_exceptions_become_an_envelope_without_traceback_path_or_key(caplog):
    [r] = results([ToolCall("c", "leaky", '{"path": "x"}')])
    assert r.failure == "exception"
    body = json.loads(r.content)
    assert body["status"] == "error" and body["error"].startswith("leaky failed: ConnectionError")
    for forbidden in (SECRET, "Traceback", "tests/test_executor.py", "/mini_framework/", ".py:"):
        assert forbidden not in r.content
    assert "Traceback" in caplog.text or any(rec.exc_info for rec in caplog.records)  # the full story goes to the log


def test_the_configured_key_is_redacted_whatever_its_shape(monkeypatch):
    monkeypatch.setenv("LLM_API_KEY", "plainkeywithoutprefix12345")
    assert "plainkeywithoutprefix12345" not in redact("auth failed for plainkeywithoutprefix12345")
    assert "[redacted]" in describe_exception(ValueError("password=hunter2hunter2"), "t")


def test_format_error_and_format_result_are_overridable():
    [ok, bad] = results([ToolCall("a", "add", '{"a": 1, "b": 1}'), ToolCall("b", "leaky", '{"path": "x"}')],
                        format_result=success_envelope, format_error=lambda exc, call: f"sorry, {call.name} broke")
    assert json.loads(ok.content) == {"status": "success", "data": 2} and bad.content == "sorry, leaky broke"


# -- concurrency --------------------------------------------------------------------------------

@tool
async def slow_async(label: str, delay: float) -> str:
    """Sleep, then answer."""
    await asyncio.sleep(delay)
    return label


@tool
def slow_sync(label: str, delay: float) -> str:
    """Block, then answer."""
    time.sleep(delay)
    return label


@pytest.mark.parametrize("which", ["slow_async", "slow_sync"])
def test_results_keep_call_order_whatever_finishes_first(which):
    rng = random.Random(7)
    calls = [ToolCall(f"call_{i}", which, json.dumps({"label": f"L{i}", "delay": rng.uniform(0, 0.05)})) for i in range(12)]
    out = results(calls, tools=[slow_async, slow_sync])
    assert [r.call.id for r in out] == [c.id for c in calls]
    assert [r.content for r in out] == [f"L{i}" for i in range(12)]


@pytest.mark.parametrize("which", ["slow_async", "slow_sync"])
def test_calls_of_one_reply_run_concurrently(which):
    calls = [ToolCall(f"c{i}", which, json.dumps({"label": str(i), "delay": 0.2})) for i in range(8)]
    started = time.perf_counter()
    out = results(calls, tools=[slow_async, slow_sync])
    elapsed = time.perf_counter() - started
    assert all(r.ok for r in out)
    assert elapsed < 0.2 * 8 / 2, f"{elapsed:.2f} s: the eight 0.2 s calls did not overlap"  # generous: sequential is 1.6 s


def test_the_concurrency_limit_is_honoured():
    running, peak, lock = [0], [0], threading.Lock()

    @tool
    def counted(i: int) -> int:
        """Count concurrent runs."""
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        time.sleep(0.02)
        with lock:
            running[0] -= 1
        return i

    out = results([ToolCall(f"c{i}", "counted", json.dumps({"i": i})) for i in range(10)], tools=[counted], max_concurrency=3)
    assert [r.value for r in out] == list(range(10)) and peak[0] == 3


def test_timeouts_failures_and_successes_mixed_every_id_answered_once():
    @tool(timeout=0.05)
    def hangs(x: int) -> int:
        """Never returns in time."""
        time.sleep(2)
        return x

    calls = [ToolCall("ok1", "add", '{"a": 1, "b": 2}'), ToolCall("hang", "hangs", '{"x": 1}'),
             ToolCall("boom", "leaky", '{"path": "p"}'), ToolCall("ghost", "nope", "{}"),
             ToolCall("bad", "add", '{"a": "x"}'), ToolCall("ok2", "slow_async", '{"label": "z", "delay": 0.01}')]
    started = time.perf_counter()
    out = results(calls, tools=[add, hangs, leaky, slow_async])
    assert time.perf_counter() - started < 1.5, "a hung tool must not hold up the reply"
    assert [r.call.id for r in out] == [c.id for c in calls]
    assert [r.failure for r in out] == [None, "timeout", "exception", "unknown_tool", "invalid_arguments", None]
    assert "did not finish within 0.05 s" in out[1].content


def test_async_tool_timeout_uses_the_executor_default():
    [r] = results([ToolCall("c", "slow_async", '{"label": "x", "delay": 1}')], tools=[slow_async], timeout=0.05)
    assert r.failure == "timeout"


def test_run_sync_works_inside_a_running_event_loop():
    async def inside():
        return Executor([add]).run_sync([ToolCall("c", "add", '{"a": 1, "b": 1}')])[0].content
    assert asyncio.run(inside()) == "2"


# -- fuzz ---------------------------------------------------------------------------------------

def garbage_arguments(rng: random.Random) -> object:
    valid = json.dumps({"a": rng.randint(-9, 9), "b": rng.choice([1, "二", "3.0", None, [1], {"x": 1}])}, ensure_ascii=False)
    pick = rng.randrange(9)
    if pick == 0:
        return valid[: rng.randrange(len(valid) + 1)]
    if pick == 1:
        chars = list(valid)
        for _ in range(rng.randint(1, 4)):
            chars[rng.randrange(len(chars))] = rng.choice(string.printable + "，：｛｝“”")
        return "".join(chars)
    if pick == 2:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(40))).decode("utf-8", "replace")
    if pick == 3:
        return "[" * rng.randint(1, 3000)
    if pick == 4:
        return rng.choice([None, "", "null", "[]", "42", '"{\\"a\\": 1, \\"b\\": 2}"', {"a": 1, "b": 2}, ["a"], 3.5])
    if pick == 5:
        return '{"a": 1, "b": "' + "x" * rng.randint(1, 200_000) + '"}'
    if pick == 6:
        return "{'a': %d, 'b': %d,}" % (rng.randint(0, 9), rng.randint(0, 9))
    if pick == 7:
        return "```json\n" + valid + "\n```"
    return "".join(rng.choice("{}[]\":,'ab12 ") for _ in range(rng.randrange(30)))


def test_fuzz_every_call_gets_exactly_one_answer_and_nothing_raises():
    rng = random.Random(20261129)
    names = ["add", "get_weather", "leaky", "ad", "", "add ", "../../etc/passwd", "x" * 300, "获取天气", None]
    executor = Executor([add, get_weather, leaky], retry_budget=10_000)
    total = 0
    for batch in range(90):
        calls = [ToolCall(f"call_{batch}_{i}", rng.choice(names) or "", garbage_arguments(rng)) for i in range(rng.randint(1, 12))]
        out = executor.run_sync(calls)
        total += len(calls)
        assert [r.call.id for r in out] == [c.id for c in calls]
        for r in out:
            assert isinstance(r.content, str) and r.message["tool_call_id"] == r.call.id
            assert r.ok or json.loads(r.content)["status"] == "error"
            assert len(r.content) < 5_000
    assert total >= 500


def test_a_tool_raising_timeouterror_is_an_exception_not_our_timeout():
    @tool
    def socket_timeout(host: str) -> str:
        """Raises the built-in TimeoutError at once, as a socket would."""
        raise TimeoutError(f"timed out connecting to {host}")

    [r] = results([ToolCall("c", "socket_timeout", '{"host": "db"}')], tools=[socket_timeout], timeout=30)
    assert r.failure == "exception" and "TimeoutError timed out connecting to db" in r.content and r.seconds < 1


def test_a_failing_format_error_falls_back_to_the_default_envelope():
    def broken(exc, call):
        raise RuntimeError("formatter bug")

    [r] = results([ToolCall("c", "leaky", '{"path": "x"}')], format_error=broken)
    assert r.failure == "exception" and json.loads(r.content)["status"] == "error" and SECRET not in r.content


def test_a_failing_format_result_is_reported_not_raised():
    [r] = results([ToolCall("c", "add", '{"a": 1, "b": 2}')], format_result=lambda value, call, tool: 1 / 0)
    assert r.failure == "exception" and "ZeroDivisionError" in r.content


def test_keys_never_reach_the_log_but_the_traceback_does(caplog):
    caplog.set_level("WARNING", logger="mini_framework")
    results([ToolCall("c", "leaky", '{"path": "x"}')])
    assert "Traceback" in caplog.text and "ConnectionError" in caplog.text
    assert SECRET not in caplog.text and "[redacted]" in caplog.text


# -- hostile tools ------------------------------------------------------------------------------

def finishes_within(seconds: float, function) -> list:
    """Run `function` in a daemon thread; its return value in a list, or AssertionError if it hangs."""
    box: list = []
    thread = threading.Thread(target=lambda: box.append(function()), daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still running after {seconds} s"
    return box


@tool
def empty_next(x: int) -> int:
    """Raises StopIteration, as next(iter([])) does."""
    return next(iter([]))


@pytest.mark.parametrize("timeout", [None, 30])
def test_a_sync_tool_raising_stopiteration_is_an_exception_not_a_hang_or_a_timeout(timeout):
    [[r]] = finishes_within(5, lambda: Executor([empty_next], timeout=timeout).run_sync([ToolCall("c", "empty_next", '{"x": 1}')]))
    assert r.failure == "exception" and "StopIteration" in r.content and r.seconds < 5


def test_an_async_tool_raising_stopiteration_is_an_exception():
    @tool
    async def async_next(x: int) -> int:
        """Raises StopIteration inside a coroutine."""
        return next(iter([]))

    [r] = results([ToolCall("c", "async_next", '{"x": 1}')], tools=[async_next])
    assert r.failure == "exception" and "StopIteration" in r.content


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_systemexit_from_a_tool_fails_that_call_and_the_batch_goes_on(kind):
    def body(x: int) -> int:
        """Exits, like argparse on bad input."""
        raise SystemExit(2)

    async def async_body(x: int) -> int:
        """Exits, like argparse on bad input."""
        raise SystemExit(2)

    exits = tool(name="exits")(body if kind == "sync" else async_body)
    out = results([ToolCall("a", "exits", '{"x": 1}'), ToolCall("b", "add", '{"a": 1, "b": 2}')], tools=[exits, add])
    assert [r.failure for r in out] == ["exception", None] and "SystemExit" in out[0].content


class Unprintable(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no message for you")


@tool
def raises_unprintable(x: int) -> int:
    """Raises an exception whose message cannot be read."""
    raise Unprintable()


def test_an_exception_whose_str_raises_is_reported_and_the_batch_is_kept():
    out = results([ToolCall("a", "raises_unprintable", '{"x": 1}'), ToolCall("b", "add", '{"a": 1, "b": 2}')],
                  tools=[raises_unprintable, add])
    assert [r.failure for r in out] == ["exception", None]
    assert "Unprintable (its message could not be read)" in out[0].content


def test_when_even_formatting_fails_the_configured_format_error_is_still_used():
    def custom(exc, call):
        return "custom: " + call.id

    weird = ToolCall("c", ["not", "hashable"], "{}")  # a bug-shaped call: looking up its name raises
    [r] = Executor([add], format_error=custom).run_sync([weird])
    assert r.content == "custom: c" and r.failure == "exception"


def test_nothing_escapes_even_when_every_formatter_fails():
    def broken(exc, call):
        raise RuntimeError("formatter bug")

    out = results([ToolCall("a", "raises_unprintable", '{"x": 1}'), ToolCall("b", "add", '{"a": 1, "b": 2}')],
                  tools=[raises_unprintable, add], format_error=broken)
    assert out[0].failure == "exception" and json.loads(out[0].content)["status"] == "error" and out[1].ok


def test_an_async_tool_that_swallows_cancellation_is_abandoned_at_its_timeout():
    finished = threading.Event()

    @tool(timeout=0.1)
    async def stubborn(x: int) -> str:
        """Ignores cancellation, then answers late."""
        for _ in range(20):
            try:
                await asyncio.sleep(0.05)
            except asyncio.CancelledError:
                pass
        finished.set()
        return "late success"

    [[r]] = finishes_within(5, lambda: results([ToolCall("c", "stubborn", '{"x": 1}')], tools=[stubborn]))
    assert r.failure == "timeout" and "late success" not in r.content and r.seconds < 0.5


def test_an_async_tool_that_never_ends_does_not_stop_the_run():
    @tool(timeout=0.1)
    async def forever(x: int) -> str:
        """Ignores every cancellation, forever."""
        while True:
            try:
                await asyncio.sleep(0.05)
            except asyncio.CancelledError:
                pass

    [out] = finishes_within(5, lambda: results([ToolCall("a", "forever", '{"x": 1}'), ToolCall("b", "add", '{"a": 1, "b": 2}')],
                                               tools=[forever, add]))
    assert [r.failure for r in out] == ["timeout", None]


def test_the_retry_budget_resets_when_the_tool_works_again():
    executor = Executor([add], retry_budget=2)
    bad, good = ToolCall("c", "add", '{"a": "x", "b": 1}'), ToolCall("c", "add", '{"a": 1, "b": 1}')
    failures = [executor.run_sync([call])[0].failure for call in (bad, bad, good, bad, bad, bad)]
    assert failures == ["invalid_arguments", "invalid_arguments", None, "invalid_arguments", "invalid_arguments",
                        "gave_up"]


def test_two_tools_with_one_name_are_refused():
    @tool(name="add")
    def other_add(x: int) -> int:
        """Another add."""
        return x

    with pytest.raises(ValueError, match="two tools are named 'add'"):
        Executor([add, other_add])


def test_sync_tools_see_the_callers_context_variables():
    import contextvars
    request_id: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="none")

    @tool
    def whoami(x: int) -> str:
        """Reads a context variable."""
        return request_id.get()

    async def main() -> str:
        request_id.set("req-42")
        return (await Executor([whoami]).run([ToolCall("c", "whoami", '{"x": 1}')]))[0].content

    assert asyncio.run(main()) == "req-42"


def test_every_repair_is_recorded_on_the_result():
    [r] = results([ToolCall("c", "add", "```json\n{'a': '一百二十三', 'b': 4,}\n```")])
    assert r.ok and r.value == 127
    assert r.repairs == ["code fence", "single quotes", "trailing commas", 'coerced a: "一百二十三" -> 123']
    [clean] = results([ToolCall("c", "add", '{"a": 1, "b": 2}')])
    assert clean.repairs == []


def test_the_result_formatter_sees_the_call_and_the_tool_and_may_return_parts():
    seen = []

    def formatter(value, call, tool):
        seen.append((call.id, tool.name))
        return [{"type": "text", "text": f"sum {value}"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}]

    [r] = results([ToolCall("c", "add", '{"a": 1, "b": 2}')], format_result=formatter)
    assert seen == [("c", "add")] and r.content == "sum 3" and r.message["content"] == "sum 3"
    assert r.attachments == [{"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}]


def test_a_formatter_returning_something_else_is_reported():
    [r] = results([ToolCall("c", "add", '{"a": 1, "b": 2}')], format_result=lambda value, call, tool: 42)
    assert r.failure == "exception" and "format_result must return" in r.content
