"""The practice server on the wire: endpoints, spec validity, stream order, determinism, keep-alive,
logs, API keys, the shared server, the CLI, and the official SDK as a client."""
from __future__ import annotations

import filecmp
import http.client
import importlib.util
import json
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from openai import AuthenticationError, OpenAI

from practice_model import Attempts, Persona, PracticeServer, Reply, errors, shared_server, wire

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"


def chat(text: str, **extra: Any) -> dict[str, Any]:
    """A request to the scripted persona whose last user message is `text`."""
    return {"model": "scripted", "messages": [{"role": "user", "content": text}], **extra}


@pytest.fixture
def sdk():
    """Make OpenAI SDK clients that are closed after the test (no leaked sockets)."""
    clients: list[OpenAI] = []

    def make(**options: Any) -> OpenAI:
        clients.append(OpenAI(**options))
        return clients[-1]
    yield make
    for client in clients:
        client.close()


# -- endpoints -----------------------------------------------------------------------------------


def test_models_list_and_get(server, api):
    raw = api.request(server, "GET", "/v1/models")
    assert raw.status == 200 and api.schema_problems("ListModelsResponse", raw.json()) == []
    assert [m["id"] for m in raw.json()["data"]] == ["scripted", "scripted-vision", "boom", "busy"]
    one = api.request(server, "GET", "/v1/models/scripted").json()
    assert one == {"id": "scripted", "object": "model", "created": wire.CREATED, "owned_by": "practice"}
    assert api.schema_problems("Model", one) == []


def test_default_registry_lists_the_practice_model(sdk):
    with PracticeServer() as s:
        client = sdk(base_url=s.base_url, api_key="x")
        names = [m.id for m in client.models.list()]
        assert names[0] == "practice" and {"practice-sloppy", "practice-hallucinate", "practice-loop",
                                             "practice-flaky"} <= set(names)


@pytest.mark.parametrize("text, extra, finish, calls", [
    ("text", {}, "stop", 0),
    ("one call", {"tools": "WEATHER"}, "tool_calls", 1),
    ("two calls", {"tools": "WEATHER"}, "tool_calls", 2),
    ("mixed", {"tools": "WEATHER"}, "tool_calls", 1),
    ("text", {"n": 3}, "stop", 0),
    ("text", {"max_tokens": 5}, "length", 0),
    ("two calls", {"tools": "WEATHER", "max_completion_tokens": 10}, "length", 1),
    ("text", {"stop": ["sunny"]}, "stop", 0),
])
def test_non_streaming_completions_validate(server, api, text, extra, finish, calls):
    if extra.get("tools") == "WEATHER":
        extra = {**extra, "tools": [api.WEATHER_TOOL]}
    raw = api.post(server, chat(text, **extra))
    body = raw.json()
    assert raw.status == 200 and api.response_problems(body) == []
    assert raw.headers["content-type"] == "application/json" and raw.headers["x-request-id"].startswith("req_")
    assert list(body) == ["id", "object", "created", "model", "choices", "usage", "service_tier",
                          "system_fingerprint"]
    assert re.fullmatch(r"chatcmpl-[0-9A-Za-z]{29}", body["id"]) and body["object"] == "chat.completion"
    assert len(body["choices"]) == extra.get("n", 1)
    for index, choice in enumerate(body["choices"]):
        assert choice["index"] == index and choice["finish_reason"] == finish and choice["logprobs"] is None
        message = choice["message"]
        assert message["role"] == "assistant" and message["refusal"] is None and message["annotations"] == []
        assert len(message.get("tool_calls", [])) == calls
        for call in message.get("tool_calls", []):
            assert re.fullmatch(r"call_[0-9A-Za-z]{24}", call["id"]) and call["type"] == "function"
    usage = body["usage"]
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"] > 0


def test_limits_shape_the_text(server, api):
    full = api.post(server, chat("text")).json()["choices"][0]["message"]["content"]
    assert full == api.TEXT
    cut = api.post(server, chat("text", max_tokens=5)).json()
    assert full.startswith(cut["choices"][0]["message"]["content"]) and cut["usage"]["completion_tokens"] <= 5
    stopped = api.post(server, chat("text", stop="sunny")).json()["choices"][0]["message"]["content"]
    assert stopped == "Hello! It is "


def test_usage_estimates(server, api):
    plain = api.post(server, chat("text")).json()["usage"]
    with_tools = api.post(server, chat("text", tools=[api.WEATHER_TOOL])).json()["usage"]
    three = api.post(server, chat("text", n=3)).json()["usage"]
    assert with_tools["prompt_tokens"] > plain["prompt_tokens"]  # tools count towards the prompt
    assert three["completion_tokens"] == 3 * plain["completion_tokens"]
    assert plain["completion_tokens"] == wire.estimate_tokens(api.TEXT)
    assert wire.estimate_tokens("北京今天晴") == 5 and wire.estimate_tokens("abcdefgh") == 2


# -- streaming ----------------------------------------------------------------------------------


def delta_shape(chunk: dict[str, Any]) -> str:
    """A short name for what a chunk carries, to compare whole streams at a glance."""
    if not chunk["choices"]:
        return "usage"
    choice = chunk["choices"][0]
    delta = choice["delta"]
    if choice["finish_reason"]:
        assert delta == {}
        return f"finish:{choice['finish_reason']}"
    if "role" in delta:
        calls = delta.get("tool_calls")
        if calls:
            assert delta == {"role": "assistant", "content": None, "tool_calls": calls, "refusal": None}
            return f"role+header:{calls[0]['index']}" if _is_header(calls[0]) else "bad"
        assert delta == {"role": "assistant", "content": "", "refusal": None}
        return "role"
    if "content" in delta:
        assert list(delta) == ["content"] and isinstance(delta["content"], str)
        return "content"
    (call,) = delta["tool_calls"]
    if _is_header(call):
        return f"header:{call['index']}"
    assert list(call) == ["index", "function"] and list(call["function"]) == ["arguments"]
    return f"args:{call['index']}"


def _is_header(call: dict[str, Any]) -> bool:
    return (list(call) == ["index", "id", "type", "function"] and call["type"] == "function"
            and call["function"]["arguments"] == "" and bool(call["function"]["name"]))


def runs(shapes: list[str]) -> list[str]:
    """Collapse repeated neighbours: ["content", "content", "x"] -> ["content+", "x"]."""
    out: list[str] = []
    for shape in shapes:
        if out and out[-1].rstrip("+") == shape:
            out[-1] = shape + "+"
        else:
            out.append(shape)
    return out


@pytest.mark.parametrize("text, usage, expected", [
    ("text", True, ["role", "content+", "finish:stop", "usage"]),
    ("text", False, ["role", "content+", "finish:stop"]),
    ("one call", True, ["role+header:0", "args:0+", "finish:tool_calls", "usage"]),
    ("two calls", False, ["role+header:0", "args:0+", "header:1", "args:1+", "finish:tool_calls"]),
    ("mixed", True, ["role", "content+", "header:0", "args:0+", "finish:tool_calls", "usage"]),
])
def test_stream_order_is_the_real_one(server, api, text, usage, expected):
    extra: dict[str, Any] = {"stream": True, "tools": [api.WEATHER_TOOL]}
    if usage:
        extra["stream_options"] = {"include_usage": True}
    raw = api.post(server, chat(text, **extra))
    assert raw.status == 200 and raw.headers["content-type"] == "text/event-stream; charset=utf-8"
    assert raw.headers["transfer-encoding"] == "chunked"
    text_stream = raw.body.decode()
    assert api.sse_problems(text_stream) == []
    chunks = api.sse_chunks(text_stream)
    assert runs([delta_shape(c) for c in chunks]) == expected
    assert len({(c["id"], c["created"], c["model"]) for c in chunks}) == 1
    assert all(("usage" in c) == usage for c in chunks)
    assert all(c["usage"] is None for c in chunks[:-1]) if usage else True
    if usage:
        assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["total_tokens"] > 0
    # The stream says exactly what the non-streamed answer says.
    whole = api.post(server, chat(text, tools=[api.WEATHER_TOOL])).json()
    message = whole["choices"][0]["message"]
    assert "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"]) == (
        message["content"] or "")
    assert assemble_calls(chunks) == message.get("tool_calls", [])
    assert chunks[0]["id"] == whole["id"]


def assemble_calls(chunks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Accumulate streamed tool-call deltas by index (what lesson 11 teaches)."""
    calls: dict[int, dict[str, Any]] = {}
    for chunk in chunks:
        for choice in chunk["choices"]:
            for part in choice["delta"].get("tool_calls") or []:
                call = calls.setdefault(part["index"], {"id": "", "type": "function",
                                                         "function": {"name": "", "arguments": ""}})
                call["id"] = part.get("id", call["id"])
                call["function"]["name"] += part.get("function", {}).get("name", "")
                call["function"]["arguments"] += part.get("function", {}).get("arguments", "")
    return [calls[i] for i in sorted(calls)]


def test_stream_with_n_and_length_validates(server, api):
    raw = api.post(server, chat("text", stream=True, n=2, max_tokens=4, stream_options={"include_usage": True}))
    assert api.sse_problems(raw.body.decode()) == []
    chunks = api.sse_chunks(raw.body.decode())
    assert [c["choices"][0]["finish_reason"] for c in chunks if c["choices"] and c["choices"][0]["finish_reason"]] \
        == ["length", "length"]


def test_http_1_0_stream_is_not_chunked(server, api):
    body = json.dumps(chat("text", stream=True)).encode()
    data = api.send_raw(server, b"POST /v1/chat/completions HTTP/1.0\r\nContent-Type: application/json\r\n"
                        b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
    head, _, stream = data.partition(b"\r\n\r\n")
    assert b" 200 " in head.split(b"\r\n")[0] and b"chunked" not in head.lower()
    assert api.sse_problems(stream.decode()) == []


# -- the official SDK as a client ---------------------------------------------------------------


def test_sdk_non_streamed_streamed_and_accumulated_agree(server, api, sdk):
    client = sdk(base_url=server.base_url, api_key="anything", max_retries=0)
    messages = [{"role": "user", "content": "two calls"}]
    plain = client.chat.completions.create(model="scripted", messages=messages, tools=[api.WEATHER_TOOL])
    assert plain.choices[0].finish_reason == "tool_calls"
    expected = [(c.id, c.function.name, c.function.arguments) for c in plain.choices[0].message.tool_calls]
    assert [json.loads(a) for _, _, a in expected] == [{"city": "北京"}, {"city": "上海"}]

    stream = client.chat.completions.create(model="scripted", messages=messages, tools=[api.WEATHER_TOOL],
                                            stream=True, stream_options={"include_usage": True})
    chunks = list(stream)
    assert chunks[-1].usage is not None and chunks[-1].usage.total_tokens == plain.usage.total_tokens

    with client.chat.completions.stream(model="scripted", messages=messages, tools=[api.WEATHER_TOOL]) as events:
        final = events.get_final_completion()
    got = [(c.id, c.function.name, c.function.arguments) for c in final.choices[0].message.tool_calls]
    assert got == expected and final.id == plain.id

    text = client.chat.completions.create(model="scripted", messages=[{"role": "user", "content": "text"}])
    assert text.choices[0].message.content == api.TEXT


def test_sdk_follow_up_with_tool_results(server, api, sdk):
    client = sdk(base_url=server.base_url, api_key="anything", max_retries=0)
    messages: list[Any] = [{"role": "user", "content": "one call"}]
    first = client.chat.completions.create(model="scripted", messages=messages, tools=[api.WEATHER_TOOL])
    call = first.choices[0].message.tool_calls[0]
    messages += [first.choices[0].message,  # the SDK object itself, as lessons append it
                 {"role": "tool", "tool_call_id": call.id, "content": "晴 25°C"}]
    second = client.chat.completions.create(model="scripted", messages=messages, tools=[api.WEATHER_TOOL])
    assert second.choices[0].message.content == "Done: 晴 25°C"


# -- determinism and keep-alive ----------------------------------------------------------------


def test_same_request_same_bytes_different_conversation_different_ids(server, api):
    request = chat("two calls", tools=[api.WEATHER_TOOL])
    a, b = api.post(server, request), api.post(server, request)
    assert a.body == b.body and a.headers["x-request-id"] == b.headers["x-request-id"]
    streamed = [api.post(server, {**request, "stream": True}).body for _ in range(2)]
    assert streamed[0] == streamed[1]
    other = api.post(server, chat("two calls", tools=[api.WEATHER_TOOL], temperature=0.2)).json()
    ids = {c["id"] for c in a.json()["choices"][0]["message"]["tool_calls"]}
    assert other["id"] != a.json()["id"]
    assert ids.isdisjoint(c["id"] for c in other["choices"][0]["message"]["tool_calls"])


def test_keep_alive_serves_many_requests_on_one_connection(server, api):
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    statuses = []
    try:
        for body in [chat("text"), chat("text", stream=True), b"{broken", chat("one call", tools=[api.WEATHER_TOOL]),
                     chat("text", stream=True, stream_options={"include_usage": True}), chat("text")]:
            statuses.append(api.post(server, body, conn=conn).status)
            if len(statuses) == 1:
                sock = conn.sock
            assert conn.sock is sock  # still the same TCP connection
        statuses.append(api.request(server, "GET", "/v1/models", conn=conn).status)
        assert conn.sock is sock
    finally:
        conn.close()
    assert statuses == [200, 200, 400, 200, 200, 200, 200]


def test_concurrent_clients_get_their_own_deterministic_answers(server, api):
    from concurrent.futures import ThreadPoolExecutor

    requests = [chat(text, tools=[api.WEATHER_TOOL], **extra) for text in ("text", "one call", "two calls")
                for extra in ({}, {"stream": True})]
    expected = [api.post(server, r).body for r in requests]
    with ThreadPoolExecutor(8) as pool:
        got = list(pool.map(lambda i: api.post(server, requests[i % len(requests)]).body, range(48)))
    assert got == [expected[i % len(requests)] for i in range(48)]


def test_stop_and_start_again(api):
    s = PracticeServer(personas=api.PERSONAS).start()
    assert s.start() is s and s.running  # idempotent
    port = s.port
    s.stop()
    s.stop()
    with pytest.raises(OSError):
        http.client.HTTPConnection("127.0.0.1", port, timeout=2).request("GET", "/v1/models")
    with s:
        assert api.request(s, "GET", "/v1/models").status == 200


# -- logs and keys ------------------------------------------------------------------------------

KEY = "sk-practice-secret-0123456789abcdef"


def test_request_log_redacts_every_key(fresh_server, api):
    auth = {"Authorization": f"Bearer {KEY}", "x-api-key": KEY}
    api.post(fresh_server, chat("text"), headers=auth)
    api.post(fresh_server, chat("text", stream=True), headers=auth)
    api.post(fresh_server, chat(f"please remember {KEY}"), headers=auth)  # a key echoed in a reply, too
    api.post(fresh_server, chat("text"), headers={"Authorization": "Bearer sk-some-other-real-key-123456789"})
    log = fresh_server.requests
    assert [e["status"] for e in log] == [200, 200, 200, 401]
    first = log[0]
    assert first["method"] == "POST" and first["path"] == "/v1/chat/completions"
    assert first["headers"]["authorization"] == "Bearer <redacted>" and first["headers"]["x-api-key"] == "<redacted>"
    assert first["request"] == chat("text") and first["response"]["object"] == "chat.completion"
    assert log[1]["response"].startswith("data: {") and log[1]["response"].endswith("data: [DONE]\n\n")
    text = fresh_server.log_path.read_text(encoding="utf-8")
    assert len(text.splitlines()) == 4 and [json.loads(line) for line in text.splitlines()] == log
    for secret in (KEY, "sk-some-other-real-key-123456789"):
        assert secret not in text and secret not in json.dumps(log, ensure_ascii=False)


def test_placeholder_keys_do_not_scrub_ordinary_words(fresh_server, api):
    """"practice" is both the course's placeholder key and a model name: the log must keep the model."""
    api.post(fresh_server, chat("practice makes perfect"), headers={"Authorization": "Bearer practice"})
    entry = fresh_server.requests[-1]
    assert entry["headers"]["authorization"] == "Bearer <redacted>"
    assert entry["request"]["messages"][0]["content"] == "practice makes perfect"


def test_sdk_with_wrong_and_right_key(fresh_server, sdk):
    with pytest.raises(AuthenticationError) as error:
        sdk(base_url=fresh_server.base_url, api_key="sk-wrong-0123456789-abcdef", max_retries=0).models.list()
    assert "sk-wrong-0123456789-abcdef" not in str(error.value)
    client = sdk(base_url=fresh_server.base_url, api_key=KEY, max_retries=0)
    assert client.chat.completions.create(model="scripted", messages=[{"role": "user", "content": "text"}])


# -- personas with state ------------------------------------------------------------------------


def test_a_stateful_persona_fails_first_then_the_sdk_retry_absorbs_it(api, sdk):
    builds = []

    def flaky() -> Any:
        builds.append(1)
        attempts = Attempts()

        def respond(request: dict[str, Any]) -> Reply:
            if attempts.next(request) <= 2:
                raise errors.rate_limited("flaky", retry_after=0.01)
            return Reply(content="finally")
        return respond

    with PracticeServer(personas=[Persona("flaky", "fails twice per conversation", flaky)]) as s:
        client = sdk(base_url=s.base_url, api_key="x", max_retries=2)
        reply = client.chat.completions.create(model="flaky", messages=[{"role": "user", "content": "hi"}])
        assert reply.choices[0].message.content == "finally"
        assert [e["status"] for e in s.requests] == [429, 429, 200]
        assert builds == [1]  # built once per server, on first use


# -- the shared server and the CLI --------------------------------------------------------------


def test_shared_server_is_a_running_singleton(sdk):
    a, b = shared_server(), shared_server()
    assert a is b and a.running and a.base_url.startswith("http://127.0.0.1:")
    assert sdk(base_url=a.base_url, api_key="x").models.list().data[0].id == "practice"


def test_cli_prints_its_url_and_serves(tmp_path, sdk):
    log = tmp_path / "cli.jsonl"
    command = [sys.executable, "-m", "practice_model", "--port", "0", "--log", str(log)]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO) as proc:
        try:
            line = proc.stdout.readline()
            match = re.fullmatch(r"Practice model listening on (http://127\.0\.0\.1:\d+/v1) \(models: practice.*\)\n",
                                 line)
            assert match, line + proc.stderr.read() if proc.poll() is not None else line
            assert sdk(base_url=match.group(1), api_key="x").models.list().data[0].id == "practice"
            assert log.exists()
        finally:
            proc.send_signal(signal.SIGTERM)  # what `kill` sends; Ctrl-C (SIGINT) ends it the same way
            try:
                assert proc.wait(timeout=10) == 0
            finally:
                if proc.poll() is None:
                    proc.kill()


# -- the vendored spec --------------------------------------------------------------------------


@pytest.mark.skipif(not (SHARED / "reference" / "openai-openapi.json").exists(), reason="../shared not present")
def test_vendored_spec_matches_the_shared_one():
    assert filecmp.cmp(SHARED / "tools" / "validate_openai_chat.py",
                       REPO / "tests" / "openapi" / "validate_openai_chat.py", shallow=False)
    spec = importlib.util.spec_from_file_location("extract", REPO / "tests" / "openapi" / "extract.py")
    extract = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(extract)
    fresh = extract.render(extract.extract(json.loads((SHARED / "reference" / "openai-openapi.json").read_text())))
    assert fresh == (REPO / "tests" / "openapi" / "chat_schemas.json").read_text(encoding="utf-8")


# -- end to end through the real planner --------------------------------------------------------


def _planner_exists() -> bool:
    return (REPO / "practice_model" / "planner.py").exists()


@pytest.mark.skipif(not _planner_exists(), reason="practice_model/planner.py not written yet")
def test_planner_calls_get_weather_for_beijing(api):
    with PracticeServer() as s:
        request = {"model": "practice", "messages": [{"role": "user", "content": "北京现在天气怎么样？"}],
                   "tools": [api.WEATHER_TOOL]}
        raw = api.post(s, request)
        assert raw.status == 200 and api.response_problems(raw.json()) == []
        (call,) = raw.json()["choices"][0]["message"]["tool_calls"]
        assert call["function"]["name"] == "get_weather" and json.loads(call["function"]["arguments"]) == {
            "city": "北京"}
        streamed = api.post(s, {**request, "stream": True, "stream_options": {"include_usage": True}})
        assert api.sse_problems(streamed.body.decode()) == []
        assert assemble_calls(api.sse_chunks(streamed.body.decode())) == [call]
        messages = request["messages"] + [raw.json()["choices"][0]["message"],
                                          {"role": "tool", "tool_call_id": call["id"], "content": "晴，25°C"}]
        final = api.post(s, {**request, "messages": messages}).json()
        assert api.response_problems(final) == [] and final["choices"][0]["finish_reason"] == "stop"
        assert final["choices"][0]["message"]["content"]



@pytest.mark.skipif(not _planner_exists(), reason="practice_model/planner.py not written yet")
def test_planner_parallel_calls_through_the_sdk(api, sdk):
    with PracticeServer() as s:
        client = sdk(base_url=s.base_url, api_key="x", max_retries=0)
        messages = [{"role": "user", "content": "北京和上海现在天气怎么样？"}]
        plain = client.chat.completions.create(model="practice", messages=messages, tools=[api.WEATHER_TOOL])
        calls = [(c.function.name, json.loads(c.function.arguments)) for c in plain.choices[0].message.tool_calls]
        assert calls == [("get_weather", {"city": "北京"}), ("get_weather", {"city": "上海"})]
        with client.chat.completions.stream(model="practice", messages=messages, tools=[api.WEATHER_TOOL]) as events:
            final = events.get_final_completion()
        def triples(message: Any) -> list[tuple[str, str, str]]:
            return [(c.id, c.function.name, c.function.arguments) for c in message.tool_calls]
        assert triples(final.choices[0].message) == triples(plain.choices[0].message)


# -----------------------------------------------------------------------------
# what lessons on cost and pairing rely on, with the real persona


WEATHER_FN = {"type": "function", "function": {"name": "get_weather", "description": "查询指定城市当前的天气",
              "parameters": {"type": "object", "required": ["city"], "properties": {
                  "city": {"type": "string", "description": "城市名称"}}}}}


def test_prompt_tokens_count_the_tools_array_so_leaving_tools_out_saves_them():
    messages = [{"role": "user", "content": "谢谢！"}]
    tools = [WEATHER_FN] * 3
    with PracticeServer() as practice, OpenAI(base_url=practice.base_url, api_key="practice") as client:
        without = client.chat.completions.create(model="practice", messages=messages).usage
        offered = client.chat.completions.create(model="practice", messages=messages, tools=tools).usage
        unused = client.chat.completions.create(model="practice", messages=messages, tools=tools,
                                                tool_choice="none").usage
    tools_json = json.dumps(tools, ensure_ascii=False, separators=(",", ":"))
    assert offered.prompt_tokens - without.prompt_tokens == wire.estimate_tokens(tools_json) > 100
    assert unused.prompt_tokens == offered.prompt_tokens          # tool_choice="none" does not make them free


def test_answering_only_the_first_of_several_calls_gets_the_real_400():
    question = {"role": "user", "content": "北京和上海的天气怎么样？"}
    with PracticeServer() as practice, OpenAI(base_url=practice.base_url, api_key="practice") as client:
        reply = client.chat.completions.create(model="practice", messages=[question], tools=[WEATHER_FN])
        first, second = reply.choices[0].message.tool_calls
        messages = [question, reply.choices[0].message.model_dump(exclude_none=True),
                    {"role": "tool", "tool_call_id": first.id, "content": '{"temperature": 22}'}]
        with pytest.raises(Exception) as raised:
            client.chat.completions.create(model="practice", messages=messages, tools=[WEATHER_FN])
    error = raised.value
    assert getattr(error, "status_code", None) == 400
    assert error.body == {   # type: ignore[attr-defined]
        "message": "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
                   f"'tool_call_id'. The following tool_call_ids did not have response messages: {second.id}",
        "type": "invalid_request_error", "param": "messages.[1].role", "code": None}
