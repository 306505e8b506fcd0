"""`@llm_function`: the docstring is the prompt, the return annotation is enforced with structured output,
validated, retried with what was wrong, and a provider's refusal of `response_format` falls back."""
from __future__ import annotations

import asyncio
import copy
import json
from typing import Literal

import httpx
import openai
import pytest
from pydantic import BaseModel

from mini_framework import connect, tool
from mini_framework.functions import LLMFunctionError, llm_function
from mini_framework.functions.prompt import render
from tests.test_agent import ScriptedClient


@pytest.fixture(scope="module")
def practice():
    return connect()  # no .env: the in-process practice model


class Weather(BaseModel):
    city: str
    temperature: float
    summary: str


@tool
def get_weather(city: str) -> dict:
    """Get the current weather for a city."""
    return {"city": city, "temperature": 22, "condition": "晴"}


class Recorder:
    """A client in front of the practice model: records each request; may answer the first ones itself
    (a reply text, or an exception to raise)."""

    def __init__(self, real, script=()):
        self.real, self.script, self.requests = real, list(script), []
        self.chat = self
        self.completions = self

    def create(self, **params):
        self.requests.append(copy.deepcopy(params))  # the run goes on adding to its messages
        if self.script:
            step = self.script.pop(0)
            if isinstance(step, Exception):
                raise step
            response = self.real.chat.completions.create(**params)
            if step is not None:  # None: the practice model's own reply
                response.choices[0].message.content = step
            return response
        return self.real.chat.completions.create(**params)


def refusal(message: str, status: int = 400) -> openai.APIStatusError:
    """The error the SDK raises for a provider's 4xx (DeepSeek's wording for json_schema)."""
    response = httpx.Response(status, request=httpx.Request("POST", "http://127.0.0.1/v1/chat/completions"))
    body = {"error": {"message": message, "type": "invalid_request_error", "param": None, "code": "invalid_request_error"}}
    kind = openai.BadRequestError if status == 400 else openai.UnprocessableEntityError
    return kind(f"Error code: {status} - {body}", response=response, body=body)


# ----------------------------------------------------------------------------- the prompt


def test_placeholders_fill_the_docstring_and_other_parameters_follow_as_lines():
    text = render('Sum {a} and b.\nReply like {"sum": 3} or {unknown}.', {"a": 1, "b": [2, 3], "note": "北京"})
    assert text == 'Sum 1 and b.\nReply like {"sum": 3} or {unknown}.\n\nb: [2, 3]\nnote: 北京'


def test_the_prompt_binds_arguments_like_a_call(practice):
    @llm_function(practice.client, practice.model)
    def greet(name: str, polite: bool = True) -> str:
        """Greet {name}."""

    assert greet.prompt("李雷") == "Greet 李雷.\n\npolite: true"
    with pytest.raises(TypeError):
        greet.prompt("a", "b", "c")


def test_a_function_without_a_docstring_or_with_a_bad_option_is_refused(practice):
    with pytest.raises(TypeError, match="docstring"):
        @llm_function(practice.client, practice.model)
        def nothing(x: int) -> int: ...
    with pytest.raises(ValueError, match="structured"):
        llm_function(practice.client, practice.model, structured="xml")
    with pytest.raises(TypeError, match="response_format"):
        llm_function(practice.client, practice.model, response_format={"type": "json_object"})


# ----------------------------------------------------------------------------- return types, on the practice model


def test_an_int_from_chinese_and_english_number_words(practice):
    recorder = Recorder(practice.client)

    @llm_function(recorder, practice.model)
    def to_number(text: str) -> int:
        """Write the number in the text as digits."""

    assert to_number("一百二十三") == 123 and to_number("one hundred twenty-three") == 123
    fmt = recorder.requests[0]["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True
    assert fmt["json_schema"]["schema"]["properties"] == {"value": {"type": "integer"}}  # wrapped: not an object


def test_a_pydantic_model_a_list_and_a_literal(practice):
    @llm_function(practice.client, practice.model, tools=[get_weather])
    def weather(question: str) -> Weather:
        """Answer this question about the weather: {question}"""

    @llm_function(practice.client, practice.model)
    def numbers(text: str) -> list[int]:
        """The numbers in: {text}"""

    @llm_function(practice.client, practice.model)
    def sentiment(review: str) -> Literal["positive", "negative"]:
        """Classify the sentiment of this review: {review}"""

    answer = weather("北京现在天气怎么样？")
    assert isinstance(answer, Weather) and answer.city == "北京" and answer.temperature == 22
    assert numbers("3 and 5") == [3, 5]
    assert sentiment("Terrible service, a negative experience.") == "negative"


def test_a_str_return_is_plain_text_without_response_format(practice):
    recorder = Recorder(practice.client)

    @llm_function(recorder, practice.model)
    def chat(message: str) -> str:
        """{message}"""

    assert isinstance(chat("你好"), str) and "response_format" not in recorder.requests[0]


def test_with_tools_the_tools_run_and_the_final_answer_is_structured(practice):
    recorder = Recorder(practice.client)

    @llm_function(recorder, practice.model, tools=[get_weather])
    def weather(question: str) -> Weather:
        """{question}"""

    answer = weather.run("北京和上海现在天气怎么样？")
    assert isinstance(answer.value, Weather) and answer.mode == "json_schema"
    names = [r.call.name for r in answer.results[0].tool_results]
    assert names == ["get_weather", "get_weather"] and answer.usage.requests == 2
    assert all("tools" in r and r["response_format"]["type"] == "json_schema" for r in recorder.requests)


def test_with_tools_an_invalid_final_answer_is_retried_in_the_same_conversation(practice):
    recorder = Recorder(practice.client, [None, '{"city": "北京"}'])  # the call, then an answer missing fields

    @llm_function(recorder, practice.model, tools=[get_weather])
    def weather(question: str) -> Weather:
        """{question}"""

    answer = weather.run("北京现在天气怎么样？")
    assert answer.value.temperature == 22 and len(answer.results) == 2
    retry = recorder.requests[2]["messages"]
    assert [m["role"] for m in retry] == ["user", "assistant", "tool", "assistant", "user"]
    assert "temperature: Field required" in retry[-1]["content"] and "tools" in recorder.requests[2]
    assert [r.call.name for r in answer.results[0].tool_results] == ["get_weather"]
    assert answer.results[1].tool_results == []                     # the retry read the result it had
    assert len(recorder.requests) == 3


def test_an_async_function_gives_an_async_llm_function(practice):
    @llm_function(practice.client, practice.model)
    async def to_number(text: str) -> int:
        """Write the number in {text} as digits."""

    assert asyncio.iscoroutinefunction(to_number)
    assert asyncio.run(to_number("四十二")) == 42


# ----------------------------------------------------------------------------- invalid replies, refusals


def test_an_invalid_reply_is_retried_with_what_was_wrong(practice):
    recorder = Recorder(practice.client, ['{"value": "many"}'])

    @llm_function(recorder, practice.model)
    def to_number(text: str) -> int:
        """Write the number in {text} as digits."""

    answer = to_number.run("一百二十三")
    assert answer.value == 123 and answer.replies == ['{"value": "many"}', '{"value": 123}']
    retry = recorder.requests[1]["messages"][-1]
    assert retry["role"] == "user" and "value: Input should be a valid integer" in retry["content"]
    assert recorder.requests[1]["messages"][-2] == {"role": "assistant", "content": '{"value": "many"}'}


def test_past_the_budget_a_clear_error_carries_every_raw_reply(practice):
    bad = ["Sure! Here you go: 123", '{"number": 123}', '{"value": null}']
    recorder = Recorder(practice.client, bad)

    @llm_function(recorder, practice.model, max_retries=2)
    def to_number(text: str) -> int:
        """Write the number in {text} as digits."""

    with pytest.raises(LLMFunctionError, match="no valid answer in 3 tries") as caught:
        to_number("一百二十三")
    assert caught.value.replies == bad and len(caught.value.results) == 3 and len(recorder.requests) == 3
    assert "not JSON" in caught.value.problems[0] and 'no "value"' in caught.value.problems[1]


def test_a_code_fence_or_a_bare_value_is_accepted_without_a_retry(practice):
    recorder = Recorder(practice.client, ['```json\n{"value": [1, 2,]}\n```', "[3]"])

    @llm_function(recorder, practice.model, max_retries=0)
    def numbers(text: str) -> list[int]:
        """The numbers in {text}."""

    assert numbers("1, 2") == [1, 2] and numbers("3") == [3]


def test_a_refused_json_schema_falls_back_to_json_object_and_is_remembered(practice):
    recorder = Recorder(practice.client, [refusal("This response_format type is unavailable now")])

    @llm_function(recorder, practice.model)
    def to_number(text: str) -> int:
        """Write the number in {text} as digits."""

    answer = to_number.run("一百二十三")
    assert answer.value == 123 and answer.mode == "json_object"
    first, second = recorder.requests
    assert first["response_format"]["type"] == "json_schema" and second["response_format"] == {"type": "json_object"}
    system = second["messages"][0]
    assert system["role"] == "system" and "JSON schema" in system["content"] and '"value"' in system["content"]

    @llm_function(recorder, practice.model)  # another function, the same client and model: json_object at once
    def double(text: str) -> int:
        """Twice the number in {text}."""

    double("七")
    assert recorder.requests[2]["response_format"] == {"type": "json_object"}


def test_a_provider_refusing_every_response_format_gets_the_schema_in_the_prompt(practice):
    recorder = Recorder(practice.client, [
        refusal("Failed to deserialize the JSON body into the target type: response_format.type `json_schema` "
                "is unavailable now", 422),
        refusal("response_format is not supported by this model"),
        '{"value": 123}'])  # the practice model follows a schema in the prompt only with json_object: scripted here

    @llm_function(recorder, practice.model)
    def to_number(text: str) -> int:
        """Write the number in {text} as digits."""

    answer = to_number.run("一百二十三")
    assert answer.mode == "prompt" and answer.value == 123
    assert "response_format" not in recorder.requests[2] and recorder.requests[2]["messages"][0]["role"] == "system"


def test_another_bad_request_is_raised_not_taken_for_a_refusal(practice):
    recorder = Recorder(practice.client, [refusal("Invalid 'messages[0].content': string too long.")])

    @llm_function(recorder, practice.model)
    def to_number(text: str) -> int:
        """Write the number in {text} as digits."""

    with pytest.raises(openai.BadRequestError):
        to_number("一")
    assert len(recorder.requests) == 1


def test_a_gated_tool_pauses_and_that_is_a_clear_error():
    @tool(requires_approval=True)
    def send_email(to: str, body: str) -> str:
        """Send an e-mail."""
        raise AssertionError("must not run")

    reply = {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {
        "name": "send_email", "arguments": json.dumps({"to": "a@example.com", "body": "hi"})}}]}

    @llm_function(ScriptedClient([reply]), "m", tools=[send_email])
    def mail(text: str) -> bool:
        """Mail {text}."""

    with pytest.raises(LLMFunctionError, match="paused for a person's decision on send_email"):
        mail("hello")


class Thing:
    """Not something JSON can describe."""


def test_a_return_type_that_is_not_json_is_refused_when_decorated(practice):
    with pytest.raises(TypeError, match="cannot be described as JSON"):
        @llm_function(practice.client, practice.model)
        def make(text: str) -> Thing:
            """Make a thing of {text}."""

    with pytest.raises(TypeError, match="cannot be read"):
        @llm_function(practice.client, practice.model)
        def unknown(text: str) -> NoSuchType:  # type: ignore[name-defined]  # noqa: F821
            """Make {text}."""


def test_llama_cpp_refusing_json_schema_gets_its_json_mode_with_the_schema():
    """practice@llamacpp answers json_schema as llama-cpp-python's server does (a 500 from its request model);
    its JSON mode takes the schema beside it, which constrains decoding."""
    llama = connect(max_retries=0)  # the SDK would retry the 500 twice first
    recorder = Recorder(llama.client)

    @llm_function(recorder, "practice@llamacpp")
    def to_number(text: str) -> int:
        """Write the number in {text} as digits."""

    answer = to_number.run("一百二十三")
    assert answer.value == 123 and answer.mode == "json_object_schema"
    sent = recorder.requests[-1]["response_format"]
    assert sent["type"] == "json_object" and sent["schema"]["properties"] == {"value": {"type": "integer"}}
    assert to_number("四十二") == 42 and recorder.requests[-1]["response_format"]["type"] == "json_object"
