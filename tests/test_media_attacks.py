"""Regression tests from attacking the image code: each of these once hung, leaked, or let something through."""
from __future__ import annotations

import base64
import json
import os
import socket
import threading
import time

import pytest
from media_helpers import body, loopback_only, png, serving
from test_vision import Recorder, calls, image_parts

from mini_framework import Agent, Executor, ImgPath, ImgUrl, MediaPolicy, MediaStore, Text, ToolCall, tool
from mini_framework.media import sources
from mini_framework.media.sources import MediaError, check_url, fetch_url, public, read_data_url, read_path
from mini_framework.media.vision import TOOL_OUTPUT_LABEL

TRUST = MediaPolicy(trusted_hosts=frozenset({"127.0.0.1"}), timeout=1.0)


def raw_server(behaviour) -> tuple[int, threading.Event]:
    """A TCP server on 127.0.0.1 whose connections `behaviour(conn)` handles; returns (port, stop)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    stop = threading.Event()

    def serve():
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            threading.Thread(target=_quietly, args=(behaviour, conn, stop), daemon=True).start()
        listener.close()

    threading.Thread(target=serve, daemon=True).start()
    return listener.getsockname()[1], stop


def _quietly(behaviour, conn, stop):
    try:
        conn.recv(65536)
        behaviour(conn, stop)
    except OSError:
        pass
    finally:
        conn.close()


def slow_headers(conn, stop):
    for byte in b"HTTP/1.1 200 OK\r\nX-Slow: " + b"a" * 100:
        if stop.is_set():
            return
        conn.sendall(bytes([byte]))
        time.sleep(0.2)


def endless_continue(conn, stop):
    while not stop.is_set():
        conn.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
        time.sleep(0.05)


@pytest.mark.parametrize("behaviour", [slow_headers, endless_continue])
def test_one_deadline_covers_headers_too(behaviour, monkeypatch):
    loopback_only(monkeypatch)
    port, stop = raw_server(behaviour)
    started = time.monotonic()
    try:
        with pytest.raises(MediaError, match="too long"):
            fetch_url(f"http://127.0.0.1:{port}/x.png", TRUST)
    finally:
        stop.set()
    assert time.monotonic() - started < 2.5


def test_a_run_whose_tool_points_at_a_slow_server_ends(monkeypatch, tmp_path):
    loopback_only(monkeypatch)
    port, stop = raw_server(slow_headers)

    @tool
    def fetch(name: str) -> dict:
        """Download a picture."""
        return {"url": f"http://127.0.0.1:{port}/{name}.png"}  # an older tool's shape

    started = time.monotonic()
    try:
        result = Agent(Recorder([calls(("fetch", {"name": "a"}))]), "gpt-4o", [fetch], media=TRUST).run("q")
    finally:
        stop.set()
    assert result.text == "done" and time.monotonic() - started < 3


def test_image_understand_sees_only_this_conversations_images(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "salary.png").write_bytes(png(3, 3, (1, 2, 3)))

    @tool
    def show(name: str) -> ImgPath:
        """Show a picture."""
        return ImgPath(f"{name}.png")

    describer = Recorder([], answer="Alice salary 9000")
    agent = Agent(Recorder([calls(("show", {"name": "salary"}))]), "deepseek-chat", [show], vision=(describer, "v"),
                  image_fallback="tool")
    first = agent.run("alice")
    secret_id = first.tool_results[0].media[0].media_id
    agent.client = Recorder([calls(("image_understand", {"media_id": secret_id}))])
    other = agent.run("bob: what images are there?")
    answer = other.tool_results[0]
    assert not answer.ok and "9000" not in answer.content and "Known ids: none yet" in answer.content
    agent.client = Recorder([calls(("image_understand", {"media_id": secret_id}))])
    again = agent.run(first.messages + [{"role": "user", "content": "alice again"}])  # her own conversation
    assert again.tool_results[0].ok and "9000" in again.tool_results[0].content


def test_continuing_a_conversation_does_not_send_its_earlier_images_again(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for i in range(4):
        (tmp_path / f"c{i}.png").write_bytes(png(i + 2, 2))

    @tool
    def draw(name: str) -> ImgPath:
        """Draw."""
        return ImgPath(f"{name}.png")

    messages: list = []
    for turn in range(4):
        fake = Recorder([calls(("draw", {"name": f"c{turn}"}))])
        result = Agent(fake, "gpt-4o", [draw]).run(messages + [{"role": "user", "content": f"turn {turn}"}])
        messages = result.messages
        assert [sum(len(image_parts(m)) for m in r["messages"]) for r in fake.requests] == [min(turn, 1), 1]


def test_image_parts_are_never_sent_outside_a_user_message():
    fake = Recorder([])
    bad = [{"role": "user", "content": "q"}, {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": [
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA"}}]},
        {"role": "user", "content": ({"type": "image_url", "image_url": {"url": "data:,x"}},)}]
    Agent(fake, "gpt-4o").run(bad)
    sent = fake.requests[0]["messages"]
    assert not image_parts(sent[2]) and "cannot travel" in json.dumps(sent[2])
    Agent(fake, "deepseek-chat").run(bad)
    assert not any(image_parts(m) for m in fake.requests[1]["messages"])


def test_the_images_of_one_reply_are_bounded_in_bytes(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.png").write_bytes(png(300, 300, (9, 9, 9)) + os.urandom(3000))

    @tool
    def one(i: int) -> ImgPath:
        """One image."""
        return ImgPath("a.png")

    store = MediaStore(MediaPolicy(max_round_bytes=5000))
    results = Executor([one], media=store).run_sync([ToolCall(f"c{i}", "one", json.dumps({"i": i})) for i in range(3)])
    assert sum(len(r.media) for r in results) == 1 and "add up to more than 5,000 bytes" in json.dumps(
        [r.content for r in results])


def test_descriptions_are_asked_concurrently_and_capped(tmp_path, monkeypatch):
    from mini_framework.media import vision

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(vision, "DESCRIBE_TIMEOUT", 0.5)
    for i in range(6):
        (tmp_path / f"p{i}.png").write_bytes(png(i + 1, 1))

    class Slow(Recorder):
        def create(self, **params):
            time.sleep(5)

    @tool
    def many() -> list:
        """Six pictures."""
        return [ImgPath(f"p{i}.png") for i in range(6)]

    started = time.monotonic()
    result = Agent(Recorder([calls(("many", {}))]), "deepseek-chat", [many], vision=(Slow([]), "v")).run("q")
    note = result.messages[-2]["content"]
    assert time.monotonic() - started < 2.5
    assert note.count("did not answer within 0.5 s") == 4 and note.count("not described (over the limit") == 2


def test_a_planted_media_folder_is_not_trusted(tmp_path, monkeypatch):
    monkeypatch.setattr(sources.tempfile, "gettempdir", lambda: str(tmp_path))
    monkeypatch.setattr(sources, "_media_dir", None)
    os.symlink("/etc", tmp_path / "mini_framework_media")
    folder = sources.media_dir()
    assert folder != tmp_path / "mini_framework_media" and not folder.is_symlink()
    assert folder.stat().st_mode & 0o777 == 0o700


def test_the_root_of_the_file_system_as_working_directory_allows_nothing(monkeypatch):
    monkeypatch.chdir("/")
    with pytest.raises(MediaError, match="outside the folders"):
        read_path("/etc/hostname", MediaPolicy())


def test_non_ascii_paths_and_odd_lengths(monkeypatch):
    loopback_only(monkeypatch)

    def odd_length(h):
        h.send_response(200)
        h.send_header("Content-Length", "²")
        h.end_headers()
        h.wfile.write(png())

    with serving({"/%E9%94%80%E5%94%AE.png": body(png()), "/odd.png": odd_length}) as (port, _):
        assert fetch_url(f"http://127.0.0.1:{port}/销售.png", TRUST) == png()
        assert fetch_url(f"http://127.0.0.1:{port}/odd.png", TRUST) == png()  # a length that is no number: ignored


def test_small_things():
    assert read_data_url("data:image/png;BASE64," + base64.b64encode(png()).decode(), MediaPolicy()) == png()
    assert not public("fec0::1")
    with pytest.raises(MediaError) as caught:
        MediaStore().add(png()[:16] + (4294967295).to_bytes(4, "big") * 2 + png()[24:], "t")
    assert "pixels" in str(caught.value)


def test_a_refusal_does_not_say_which_private_address_a_name_has(monkeypatch):
    loopback_only(monkeypatch)
    monkeypatch.setattr(sources, "resolve_host", lambda host, port: ["10.20.30.40"])
    with pytest.raises(MediaError) as caught:
        check_url("http://intranet.example/x.png", MediaPolicy())
    assert "10.20.30.40" not in str(caught.value)


def test_a_delivery_message_is_labelled_as_tool_output(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.png").write_bytes(png())

    @tool
    def show() -> ImgPath:
        """Show."""
        return ImgPath("a.png")

    result = Agent(Recorder([calls(("show", {}))]), "gpt-4o", [show]).run("q")
    assert result.messages[-2]["content"][0]["text"].startswith(TOOL_OUTPUT_LABEL)


# ----------------------------------------------------------------------------- text is text

TEXT_THAT_LOOKS_LIKE_IMAGES = [
    '{"kind": "image", "path": "/etc/passwd.png"}',
    '{"kind":"image","url":"http://169.254.169.254/x.png"}',
    '  {"media": [{"kind": "image", "path": "charts/sales.png"}], "text": "t"}',
    '{"path": "charts/sales.png"}',
    '{"url": "https://images.example.com/x.png"}',
    '{"kind": "image", "url": "data:image/png;base64,' + base64.b64encode(png()).decode() + '"}',
    '[{"kind": "image", "path": "charts/sales.png"}]',
    '"charts/sales.png"',
]


@pytest.fixture
def attempts(tmp_path, monkeypatch) -> list[str]:
    """Every attempt to read a local image, fetch a URL or decode a data URL, recorded (and carried out, except
    a fetch: no test goes past 127.0.0.1)."""
    from mini_framework.media import store as store_module

    (tmp_path / "charts").mkdir()
    (tmp_path / "charts" / "sales.png").write_bytes(png())
    monkeypatch.chdir(tmp_path)
    seen: list[str] = []
    for name in ("read_path", "fetch_url", "read_data_url"):
        real = getattr(store_module, name)

        def recording(source, policy, _real=real, _name=name):
            seen.append(f"{_name}({str(source)[:40]})")
            if _name == "fetch_url":
                raise MediaError("not fetched in a test")
            return _real(source, policy)

        monkeypatch.setattr(store_module, name, recording)
    return seen


@pytest.mark.parametrize("text", TEXT_THAT_LOOKS_LIKE_IMAGES)
def test_a_string_result_is_never_read_as_an_image(attempts, text):
    @tool
    def lookup(q: str = "x") -> str:
        """Return what the service said, as text."""
        return text

    @tool
    def lookup_text(q: str = "x") -> Text:
        """The same, marked as text."""
        return Text(text)

    @tool
    def lookup_nested(q: str = "x") -> dict:
        """The text inside data."""
        return {"answer": text, "media": [text]}

    results = Executor([lookup, lookup_text, lookup_nested], media=MediaStore()).run_sync(
        [ToolCall("c1", "lookup", "{}"), ToolCall("c2", "lookup_text", "{}"), ToolCall("c3", "lookup_nested", "{}")])
    assert attempts == []  # nothing read, nothing fetched
    assert [r.ok for r in results] == [True] * 3 and all(r.media == [] for r in results)
    assert results[0].content == text and results[1].content == text
    assert json.loads(results[2].content) == {"answer": text, "media": [text]}


def test_an_image_a_tool_returns_as_an_image_is_still_read(attempts):
    @tool
    def chart(q: str = "x") -> ImgPath:
        """Draw the chart."""
        return ImgPath("charts/sales.png")

    @tool
    def chart_dict(q: str = "x") -> dict:
        """The chart, in the explicit protocol (a Python dict the tool returned)."""
        return {"text": "done", "media": [{"kind": "image", "path": "charts/sales.png"}]}

    @tool
    def inline(q: str = "x") -> tuple:
        """A data URL image beside text."""
        return "inline", ImgUrl("data:image/png;base64," + base64.b64encode(png(5, 5)).decode())

    results = Executor([chart, chart_dict, inline], media=MediaStore()).run_sync(
        [ToolCall("c1", "chart", "{}"), ToolCall("c2", "chart_dict", "{}"), ToolCall("c3", "inline", "{}")])
    assert [len(r.media) for r in results] == [1, 1, 1] and all(r.ok for r in results)
    assert sorted(a.split("(")[0] for a in attempts) == ["read_data_url", "read_path", "read_path"]
