"""Images tools return: sniffed by bytes, found in six shapes, read only from allowed places, registered by id.

Every hostile path and URL below gets a MediaError (a message a model can act on) and nothing is read or
fetched: URL refusals happen with every non-loopback connection made impossible (`loopback_only`), so a test
would fail if one were even attempted.
"""
from __future__ import annotations

import base64
import os
import socket
import time
from pathlib import Path

import pytest
from media_helpers import GIF, JPEG, WEBP_LOSSLESS, body, loopback_only, png, redirect, serving

from mini_framework import ImgPath, ImgUrl, Text
from mini_framework.media import sources
from mini_framework.media.images import ImageInfo, sniff
from mini_framework.media.sources import MediaError, MediaPolicy, check_url, fetch_url, read_data_url, read_path
from mini_framework.media.store import Found, MediaStore, find_media

# ----------------------------------------------------------------------------- sniffing

@pytest.mark.parametrize("data,expected", [
    (png(640, 400), ImageInfo("image/png", 640, 400)),
    (GIF, ImageInfo("image/gif", 7, 5)),
    (JPEG, ImageInfo("image/jpeg", 64, 48)),
    (WEBP_LOSSLESS, ImageInfo("image/webp", 9, 6)),
])
def test_the_type_and_size_come_from_the_bytes(data, expected):
    assert sniff(data) == expected


@pytest.mark.parametrize("data", [b"", b"LLM_API_KEY=sk-secret\n", b"<html>404</html>", b"\x89PNG\r\n", b"PK\x03\x04zip",
                                  b"RIFF\0\0\0\0WAVEfmt "])
def test_what_is_not_an_image_is_none(data):
    assert sniff(data) is None


def test_sniffing_a_real_pillow_image_agrees_when_pillow_is_there():
    image = pytest.importorskip("PIL.Image")
    import io

    for fmt, mime in [("PNG", "image/png"), ("JPEG", "image/jpeg"), ("GIF", "image/gif"), ("WEBP", "image/webp")]:
        buffer = io.BytesIO()
        image.new("RGB", (33, 21), (200, 30, 30)).save(buffer, fmt)
        assert sniff(buffer.getvalue()) == ImageInfo(mime, 33, 21), fmt


# ----------------------------------------------------------------------------- six shapes

def test_the_six_shapes_of_a_result_with_images():
    chart = ImgPath("chart.png")
    web = ImgUrl("https://example.com/cat.webp", detail="low")
    assert find_media(chart) == (None, [Found(chart)])
    assert find_media(("销售额", chart)) == ("销售额", [Found(chart)])
    assert find_media([Text("two charts"), chart, web]) == ("two charts", [Found(chart), Found(web)])
    assert find_media({"text": "done", "media": [{"kind": "image", "path": "chart.png"}]}) == ("done", [Found(chart)])
    assert find_media({"kind": "image", "url": "https://example.com/cat.webp", "detail": "low"}) == (None, [Found(web)])
    legacy = {"path": "./data/x.png", "file_size": 12}
    assert find_media(legacy) == (legacy, [Found(ImgPath("./data/x.png"), explicit=False)])


def test_an_image_as_a_value_of_a_dict_but_json_text_with_the_protocol_is_text():
    chart = ImgPath("chart.png")
    assert find_media({"summary": "ok", "chart": chart}) == ({"summary": "ok", "chart": "(image)"}, [Found(chart)])
    text = '{"media": [{"kind": "image", "path": "chart.png"}], "text": "t"}'
    assert find_media(text) == (text, [])  # what a tool passes on as text (a web page, a service) stays text


@pytest.mark.parametrize("value", [
    {"path": "report.pdf"}, {"path": "notes"}, {"url": "https://example.com/page"}, {"url": "ftp://x/y.png"},
    {"kind": "audio", "path": "a.png"}, {"media": "chart.png"}, "chart.png", "{not json", ["a", "b"], 42, None,
    {"media": [{"kind": "image"}]},
])
def test_nothing_else_is_taken_for_an_image(value):
    assert find_media(value)[1] == []


# ----------------------------------------------------------------------------- local paths

@pytest.fixture
def workspace(tmp_path, monkeypatch):
    """A working directory with an image, a secret beside it, and a secret outside it."""
    inside = tmp_path / "work"
    (inside / "charts").mkdir(parents=True)
    (inside / "charts" / "sales.png").write_bytes(png())
    (inside / ".env").write_text("LLM_API_KEY=sk-live-secret\n")
    (tmp_path / "secret.png").write_bytes(png())
    monkeypatch.chdir(inside)
    return inside


def test_an_image_inside_the_working_directory_is_read(workspace):
    assert read_path("charts/sales.png", MediaPolicy()) == png()


def _refused(path, policy=None) -> str:
    with pytest.raises(MediaError) as caught:
        read_path(path, policy or MediaPolicy())
    message = str(caught.value)
    assert "sk-live-secret" not in message
    return message


def test_hostile_paths_are_refused_before_anything_is_read(workspace, tmp_path):
    os.symlink(tmp_path / "secret.png", workspace / "charts" / "link.png")
    os.symlink(workspace / "charts", workspace / "loop_a")
    os.mkfifo(workspace / "charts" / "pipe.png")
    (workspace / "big.png").write_bytes(png() + b"\0" * 2000)
    (workspace / "text.png").write_text("LLM_API_KEY=sk-live-secret")
    (workspace / ".hidden").mkdir()
    (workspace / ".hidden" / "x.png").write_bytes(png())
    assert "outside the folders" in _refused("../secret.png")
    assert "outside the folders" in _refused("../../../../etc/passwd")
    assert "outside the folders" in _refused("/etc/passwd")
    assert "outside the folders" in _refused(str(tmp_path / "secret.png"))
    assert "outside the folders" in _refused("charts/link.png")              # a symlink out
    assert "outside the folders" in _refused("charts/../../secret.png")
    assert "hidden" in _refused(".env")
    assert "hidden" in _refused(".hidden/x.png")
    assert "not a regular file" in _refused("charts/pipe.png")                # a FIFO: reading would block
    assert "not a regular file" in _refused("charts")                          # a folder
    assert "no file" in _refused("charts/missing.png")
    assert "not a file path" in _refused("")
    assert "not a file path" in _refused("charts/sales.png\0.txt")
    assert "over the limit" in _refused("big.png", MediaPolicy(max_bytes=1000))
    assert "cannot be opened" in _refused("x" * 5000 + ".png") or "no file" in _refused("x" * 5000 + ".png")


def test_devices_are_outside_and_not_regular(workspace):
    assert "outside the folders" in _refused("/dev/zero")
    assert "outside the folders" in _refused("/proc/self/environ")


def test_a_text_file_named_png_is_not_an_image(workspace):
    (workspace / "text.png").write_text("LLM_API_KEY=sk-live-secret")
    data = read_path("text.png", MediaPolicy())  # inside and regular: read, then refused by its bytes
    with pytest.raises(MediaError, match="not a PNG, JPEG, GIF or WebP"):
        MediaStore().add(data, "show_image")


def test_more_folders_can_be_allowed_and_the_working_directory_left_out(workspace, tmp_path):
    assert read_path(tmp_path / "secret.png", MediaPolicy(allowed_dirs=(tmp_path,))) == png()
    assert "outside the folders" in _refused("charts/sales.png", MediaPolicy(include_working_dir=False))


# ----------------------------------------------------------------------------- URLs: refused before connecting

HOSTILE_URLS = [
    "http://169.254.169.254/latest/meta-data/iam/",   # cloud metadata
    "http://127.0.0.1/chart.png", "http://127.1/chart.png", "http://2130706433/chart.png",
    "http://0x7f000001/chart.png", "http://0177.0.0.1/chart.png", "http://[::1]/chart.png",
    "http://[::ffff:127.0.0.1]/chart.png", "http://[::ffff:169.254.169.254]/x.png", "http://localhost:8000/x.png",
    "http://10.0.0.1/x.png", "http://172.16.5.4/x.png", "http://192.168.1.1/x.png", "http://100.64.0.1/x.png",
    "http://0.0.0.0/x.png", "http://[::]/x.png", "http://224.0.0.1/x.png", "http://[fe80::1]/x.png",
    "http://[fd00::1]/x.png", "http://[2002:7f00:1::]/x.png", "http://255.255.255.255/x.png",
]


@pytest.mark.parametrize("url", HOSTILE_URLS)
def test_local_and_private_addresses_are_refused_before_any_connection(url, monkeypatch):
    attempts = loopback_only(monkeypatch)
    with pytest.raises(MediaError, match="local or private address|could not be resolved"):
        fetch_url(url, MediaPolicy())
    assert attempts == []


@pytest.mark.parametrize("url,reason", [
    ("file:///etc/passwd", "only http and https"), ("ftp://example.com/x.png", "only http and https"),
    ("gopher://example.com/", "only http and https"), ("javascript:alert(1)", "only http and https"),
    ("http://user:pw@example.com/x.png", "user name or password"), ("http://example.com:99999/x.png", "port"),
    ("http:///x.png", "no host"), ("http://exa mple.com/x.png", "not a URL"), ("http://e.com/" + "a" * 3000, "not a URL"),
    ("", "not a URL"),
])
def test_urls_that_are_not_plain_http_are_refused(url, reason, monkeypatch):
    attempts = loopback_only(monkeypatch)
    with pytest.raises(MediaError, match=reason):
        fetch_url(url, MediaPolicy())
    assert attempts == []


def test_a_name_that_resolves_to_a_private_address_is_refused(monkeypatch):
    attempts = loopback_only(monkeypatch)
    monkeypatch.setattr(sources, "resolve_host", lambda host, port: {
        "evil.example": ["10.0.0.5"], "mixed.example": ["93.184.216.34", "127.0.0.1"]}[host])
    for url in ["http://evil.example/x.png", "https://mixed.example/x.png"]:
        with pytest.raises(MediaError, match="local or private"):
            fetch_url(url, MediaPolicy())
    assert attempts == []


# ----------------------------------------------------------------------------- URLs that are fetched (loopback, trusted)

def test_a_trusted_host_is_fetched_from_the_address_that_was_checked(monkeypatch):
    attempts = loopback_only(monkeypatch)
    lookups = []

    def resolve(host, port):
        lookups.append(host)
        return ["127.0.0.1"] if len(lookups) == 1 else ["10.9.9.9"]  # a DNS answer that changes after the check

    monkeypatch.setattr(sources, "resolve_host", resolve)
    with serving({"/chart.png": body(png())}) as (port, seen):
        data = fetch_url(f"http://images.example:{port}/chart.png", MediaPolicy(trusted_hosts=frozenset({"images.example"})))
    assert data == png() and lookups == ["images.example"]
    assert attempts == [("127.0.0.1", port)] and seen[0]["host"] == f"images.example:{port}"


def test_a_redirect_to_a_private_address_is_refused_before_following_it(monkeypatch):
    attempts = loopback_only(monkeypatch)
    with serving({"/go.png": redirect("http://169.254.169.254/latest/meta-data/")}) as (port, _):
        with pytest.raises(MediaError, match="local or private"):
            fetch_url(f"http://127.0.0.1:{port}/go.png", MediaPolicy(trusted_hosts=frozenset({"127.0.0.1"})))
    assert attempts == [("127.0.0.1", port)]


def test_redirects_are_limited_and_followed_on_the_same_trusted_host(monkeypatch):
    loopback_only(monkeypatch)
    policy = MediaPolicy(trusted_hosts=frozenset({"127.0.0.1"}))
    with serving({"/a.png": redirect("/b.png"), "/b.png": body(png()), "/loop.png": redirect("/loop.png")}) as (port, _):
        assert fetch_url(f"http://127.0.0.1:{port}/a.png", policy) == png()
        with pytest.raises(MediaError, match="more than 3 redirects"):
            fetch_url(f"http://127.0.0.1:{port}/loop.png", policy)


def test_size_status_and_time_limits(monkeypatch):
    loopback_only(monkeypatch)
    policy = MediaPolicy(trusted_hosts=frozenset({"127.0.0.1"}), max_bytes=1000, timeout=0.5)

    def no_length(h):
        h.send_response(200)
        h.end_headers()
        h.wfile.write(b"\0" * 5000)

    def trickle(h):
        h.send_response(200)
        h.end_headers()
        for _ in range(40):
            h.wfile.write(b"\0")
            h.wfile.flush()
            time.sleep(0.05)

    routes = {"/big.png": body(b"\0" * 5000), "/nolength.png": no_length, "/slow.png": trickle}
    with serving(routes) as (port, _):
        base = f"http://127.0.0.1:{port}"
        with pytest.raises(MediaError, match="over the limit"):
            fetch_url(base + "/big.png", policy)
        with pytest.raises(MediaError, match="over the limit"):
            fetch_url(base + "/nolength.png", policy)
        with pytest.raises(MediaError, match="HTTP 404"):
            fetch_url(base + "/missing.png", policy)
        started = time.monotonic()
        with pytest.raises(MediaError, match="too long"):
            fetch_url(base + "/slow.png", policy)
        assert time.monotonic() - started < 1.5


def test_a_port_nobody_listens_on_is_a_clear_error(monkeypatch):
    loopback_only(monkeypatch)
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    with pytest.raises(MediaError, match="failed"):
        fetch_url(f"http://127.0.0.1:{port}/x.png", MediaPolicy(trusted_hosts=frozenset({"127.0.0.1"})))


def test_check_url_returns_the_checked_address():
    target = check_url("https://93.184.216.34/x.png?size=2", MediaPolicy())
    assert (target.address, target.port, target.path) == ("93.184.216.34", 443, "/x.png?size=2")


# ----------------------------------------------------------------------------- data: URLs

def test_data_urls_are_decoded_within_the_limit():
    url = "data:image/png;base64," + base64.b64encode(png()).decode()
    assert read_data_url(url, MediaPolicy()) == png()
    with pytest.raises(MediaError, match="limit"):
        read_data_url(url, MediaPolicy(max_bytes=10))
    with pytest.raises(MediaError, match="not valid"):
        read_data_url("data:image/png;base64,@@@", MediaPolicy())
    with pytest.raises(MediaError, match="comma"):
        read_data_url("data:image/png;base64", MediaPolicy())


# ----------------------------------------------------------------------------- the store

def test_a_media_id_names_the_tool_and_the_bytes_not_the_path(workspace):
    store = MediaStore()
    media = store.load(Found(ImgPath("charts/sales.png")), "draw_chart")
    assert media.media_id.startswith("tool:draw_chart:") and len(media.media_id.rsplit(":", 1)[1]) == 8
    assert "sales" not in media.media_id and "charts" not in media.label()
    assert store.load(Found(ImgPath("./charts/../charts/sales.png")), "draw_chart") is media  # same bytes, same one
    assert store.get(media.media_id) is media and store.get("tool:draw_chart:00000000") is None


def test_an_image_is_encoded_once_per_media_id(monkeypatch):
    store = MediaStore()
    media = store.add(png(), "draw_chart")
    calls = []
    real = base64.b64encode
    monkeypatch.setattr(base64, "b64encode", lambda data: calls.append(1) or real(data))
    first = store.data_url(media)
    assert store.data_url(media) == first and first.startswith("data:image/png;base64,") and len(calls) == 1


def test_the_store_forgets_the_oldest_beyond_its_limits():
    store = MediaStore(max_items=3)
    ids = [store.add(png(i + 1, 1), "t").media_id for i in range(5)]
    assert list(store.items) == ids[2:]
    small = MediaStore(max_bytes=1)
    small.add(png(1, 1), "t")
    assert len(small.items) == 1  # the newest is always kept


def test_a_policy_refuses_nonsense_settings():
    with pytest.raises(ValueError, match="max_bytes"):
        MediaPolicy(max_bytes=-1)
    with pytest.raises(ValueError, match="timeout"):
        MediaPolicy(timeout=0)
    assert MediaPolicy(trusted_hosts=frozenset({"[::1]", "Images.Example"})).trusted_hosts == {"::1", "images.example"}


def test_the_media_folder_is_allowed_by_default(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    target = sources.media_dir() / "test_media_default.png"
    target.write_bytes(png())
    try:
        assert read_path(target, MediaPolicy(include_working_dir=False)) == png()
    finally:
        target.unlink()
    assert Path(sources.media_dir()).is_dir()
