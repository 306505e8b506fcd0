"""Checks for lesson 09b (images you can't trust): image paths confined to a folder, image URLs only to public
addresses.

Both checks attack the learner's resolvers with hostile input. They never connect anywhere and never ask a real
DNS server: `safe_image_url` gets a resolver callable (a fake, with a fixed table), and the socket module's own
resolving and connecting are switched off while the learner's code runs, so a function that tries either gets a
❌ instead of a connection. Symlink cases are tried only where symlinks can be made (Windows without the right
to create them skips them).
"""
from __future__ import annotations

import contextlib
import ipaddress
import shutil
import socket
import tempfile
from pathlib import Path
from typing import Any, Callable, Iterator

from mini_framework import MediaError

from .checking import CheckResult, Hints, run_check, solved
from .lesson09 import png

PNG = png(4, 3, (30, 80, 220))

# a fake DNS: names and what they resolve to; numeric spellings are resolved the way getaddrinfo does
DNS = {
    "images.example.com": ["93.184.216.34"],
    "cdn.example.org": ["2606:2800:220:1:248:1893:25c8:1946"],
    "localhost": ["127.0.0.1", "::1"],
    "intranet.example.com": ["10.0.0.7"],
    "rebind.example.net": ["93.184.216.34", "127.0.0.1"],
    "metadata.example.net": ["169.254.169.254"],
    "carrier.example.net": ["100.64.0.10"],
}


class FakeResolver:
    """`resolve(host) -> [addresses]` without any network: a fixed table, numeric hosts as getaddrinfo reads them."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def __call__(self, host: str) -> list[str]:
        self.asked.append(host)
        name = str(host).strip("[]").lower().rstrip(".")
        if name in DNS:
            return list(DNS[name])
        try:
            return [str(ipaddress.ip_address(name))]
        except ValueError:
            pass
        try:
            return [socket.inet_ntoa(socket.inet_aton(name))]  # 127.1, 2130706433, 0x7f000001: inet_aton's spellings
        except OSError:
            raise MediaError(f"the host {host!r} could not be resolved") from None


@contextlib.contextmanager
def no_network() -> Iterator[None]:
    """While the learner's code runs: the socket module cannot resolve names or open connections."""
    def refused(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("your function tried to resolve or connect by itself (socket). Use the resolve "
                             "function you were given, and connect nowhere: checking a URL happens before any "
                             "connection")
    saved = socket.getaddrinfo, socket.create_connection, socket.socket.connect, socket.gethostbyname
    socket.getaddrinfo = socket.create_connection = socket.gethostbyname = refused  # type: ignore[assignment]
    socket.socket.connect = refused  # type: ignore[method-assign]
    try:
        yield
    finally:
        socket.getaddrinfo, socket.create_connection, socket.socket.connect, socket.gethostbyname = saved


def _folder() -> tuple[Path, Path]:
    """A charts folder with images, a hidden file, a hidden folder, a symlink out, and a look-alike sibling."""
    base = Path(tempfile.mkdtemp(prefix="lesson09b-"))
    charts = base / "charts"
    (charts / "2024").mkdir(parents=True)
    (charts / ".cache").mkdir()
    (charts / "beijing.png").write_bytes(PNG)
    (charts / "2024" / "june.png").write_bytes(PNG)
    (charts / ".cache" / "old.png").write_bytes(PNG)
    (charts / ".env").write_text("LLM_API_KEY=not-a-real-key\n")
    (base / ".env").write_text("LLM_API_KEY=not-a-real-key\n")
    (base / "charts-private").mkdir()
    (base / "charts-private" / "payroll.png").write_bytes(PNG)
    with contextlib.suppress(OSError, NotImplementedError):
        (charts / "shortcut.png").symlink_to(base / ".env")
        (charts / "logo.png").symlink_to(charts / ".env")
        (charts / "latest").symlink_to(base / "charts-private", target_is_directory=True)
    return base, charts


def _refused(call: Callable[[], Any], what: str, why: str, base: Path | None = None) -> None:
    try:
        with no_network():
            got = call()
    except MediaError:
        return
    except (ValueError, PermissionError, OSError) as error:
        also = (f" If the ValueError came from relative_to, your folder check let it through first: {why}"
                if isinstance(error, ValueError) else "")
        raise AssertionError(f"{what} was refused with {type(error).__name__}; raise MediaError (a message the model "
                             f"can read), so the executor answers the call instead of failing.{also}") from None
    solved(got)
    shown = repr(got).replace(str(base), "…") if base is not None else repr(got)
    raise AssertionError(f"{what} should be refused ({why}), but your function returned {shown:.120}")


def safe_image_path(safe_image_path: Callable[[str, Path], Any]) -> CheckResult:
    """Exercise 1: paths confined to a folder, judged where they really point."""
    def test() -> str:
        base, charts = _folder()
        try:
            return _paths(safe_image_path, base, charts)
        finally:
            shutil.rmtree(base, ignore_errors=True)
    return run_check(1, test, "Resolve first, then judge what you resolved: where the path really points, and "
                              "every part of it below the folder.", recipe=hint.recipes[1])


def safe_image_url(safe_image_url: Callable[[str, Any], Any]) -> CheckResult:
    """Exercise 2: URLs only to public addresses, every address judged, before any connection."""
    return run_check(2, lambda: _urls(safe_image_url), "Resolve first, then judge what you resolved: every address "
                                                       "the host really has.", recipe=hint.recipes[2])


def _paths(safe_image_path: Callable[[str, Path], Any], base: Path, charts: Path) -> str:
    with no_network():
        good = safe_image_path("beijing.png", charts)
    solved(good)
    assert isinstance(good, Path), f"return the resolved Path of the image, not {type(good).__name__} {good!r:.80}"
    assert good == (charts / "beijing.png").resolve(), (
        f"'beijing.png' is inside the folder: return {(charts / 'beijing.png').resolve()}, the path resolved, "
        f"not {good}")
    nested = safe_image_path("2024/june.png", charts)
    assert nested == (charts / "2024" / "june.png").resolve(), f"'2024/june.png' is allowed too, got {nested!r}"
    tidy = safe_image_path("2024/../beijing.png", charts)
    assert tidy == good, (
        f"'2024/../beijing.png' stays inside the folder: return it resolved, {good}, not {tidy!r}. The caller opens "
        "what you return, so return the path you judged")
    hostile = [
        ("../.env", "'..' climbs out of the folder"),
        ("2024/../../.env", "'..' in the middle climbs out too: judge the path after resolving it"),
        (str(base / ".env"), "an absolute path outside the folder"),
        ("/etc/passwd", "an absolute path outside the folder"),
        ("../charts-private/payroll.png", "a sibling folder whose name starts like the allowed one: compare folders, "
                                          "not string prefixes (Path.is_relative_to)"),
        (".env", "a hidden file, inside the folder but never an image to show"),
        (".cache/old.png", "a file inside a hidden folder"),
    ]
    if (charts / "shortcut.png").is_symlink():
        hostile += [("shortcut.png", "a symlink inside the folder that points outside it: resolve() follows it"),
                    ("latest/payroll.png", "a symlinked folder that leads outside"),
                    ("logo.png", "a symlink to the hidden .env in the same folder: look for hidden parts in the "
                                 "path you resolved, not in the one you were given")]
    for path, why in hostile:
        _refused(lambda p=path: safe_image_path(p, charts), repr(path).replace(str(base), "…"), why, base)
    return f"{len(hostile)} hostile paths refused"


def _urls(safe_image_url: Callable[[str, Any], Any]) -> str:
    resolver = FakeResolver()
    with no_network():
        address = safe_image_url("https://images.example.com/chart.png", resolver)
    solved(address)
    assert "images.example.com" in resolver.asked, (
        "resolve the host with the resolve function you were given: resolve('images.example.com')")
    assert address == "93.184.216.34", (
        f"return the address you checked ('93.184.216.34'), so the connection goes exactly there, not {address!r}: "
        "a name resolved again later may answer differently (DNS rebinding)")
    try:
        with no_network():
            six = safe_image_url("http://cdn.example.org:8080/a.webp", FakeResolver())
    except MediaError as error:
        raise AssertionError(f"'http://cdn.example.org:8080/a.webp' resolves to 2606:2800:220:1:248:1893:25c8:1946, "
                             f"a public IPv6 address, but you refused it ({error}): an IPv6 address can be public "
                             "too; judge it by the same rule as an IPv4 one") from None
    assert six == "2606:2800:220:1:248:1893:25c8:1946", f"a public IPv6 address is fine too, got {six!r}"
    hostile = [
        ("http://169.254.169.254/latest/meta-data/", "the cloud metadata service (link-local)"),
        ("http://127.0.0.1/chart.png", "loopback"),
        ("http://127.1/chart.png", "loopback, spelled short"),
        ("http://2130706433/chart.png", "loopback, spelled as one number"),
        ("http://0x7f000001/chart.png", "loopback, spelled in hex"),
        ("http://[::1]/chart.png", "IPv6 loopback"),
        ("http://[::ffff:127.0.0.1]/chart.png", "IPv4 loopback inside an IPv6 address"),
        ("http://localhost:8000/chart.png", "a name that resolves to loopback"),
        ("http://intranet.example.com/chart.png", "a name that resolves to a private address"),
        ("http://metadata.example.net/", "a name that resolves to the metadata address"),
        ("http://rebind.example.net/chart.png", "a name with one public and one loopback address: every address "
                                                "must be public, not just the first"),
        ("http://carrier.example.net/chart.png", "shared address space (100.64.0.0/10) is not public either, though "
                                                 "is_private says False: ask is_global"),
        ("http://0.0.0.0/chart.png", "the unspecified address"),
        ("http://224.0.0.1/chart.png", "a multicast address"),
        ("file:///etc/passwd", "only http and https"),
        ("ftp://images.example.com/chart.png", "only http and https"),
    ]
    for url, why in hostile:
        _refused(lambda u=url: safe_image_url(u, FakeResolver()), url, why)
    return f"{len(hostile)} hostile URLs refused, none connected to"


# What check.hint(N) prints: the approach, for a learner who asks (a ❌ shows it too).
hint = Hints({
    1: ("Join the path to the folder and resolve the result, so '..' and symlinks are followed before anything "
        "is judged. Resolve the folder too, and compare folders, not strings (pathlib can tell whether one path "
        "lies inside another). Then look at each part of the path below the folder: one that starts with a dot "
        "is hidden. Refuse by raising MediaError with a sentence that says why; otherwise return the resolved "
        "path.\n中文：先把路径接到文件夹后面再 resolve（跟随 `..` 和符号链接），文件夹本身也 resolve；用 pathlib 判断"
        "“在不在文件夹里”，不要比较字符串前缀；再看文件夹以下的每一段，以点开头的就是隐藏文件。拒绝时抛出 MediaError"
        "并说明原因，否则返回 resolve 后的路径。"),
    2: ("Split the URL and accept only the http and https schemes with a host. Ask the resolve function you were "
        "given for the host's addresses, and judge every one of them with the ipaddress module: an IPv4 address "
        "carried inside an IPv6 one is judged as the IPv4 address; public means global and not multicast. Refuse "
        "with MediaError; otherwise return the address you checked, so the connection goes exactly there.\n"
        "中文：拆开 URL，只接受带主机名的 http 和 https；用给你的 resolve 函数查出主机的全部地址，用 ipaddress 模块"
        "逐个判断：藏在 IPv6 里的 IPv4 地址按 IPv4 判断；“公网”指 is_global 且不是组播。拒绝时抛出 MediaError，"
        "否则返回你检查过的那个地址，连接就只去那里。"),
})
