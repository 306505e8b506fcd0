"""Where an image a tool returns may be read from: allowed folders, public http(s) URLs, data: URLs.

    policy = MediaPolicy(allowed_dirs=["reports"], trusted_hosts=["intranet.example"])
    data = read_path("charts/sales.png", policy)     # or MediaError, saying why
    data = fetch_url("https://example.com/cat.png", policy)

The model chooses a tool's arguments, and so, often, the path or URL a tool returns: a tool that
"shows an image" can be asked for `../../.env`, and one that "downloads a picture" for
`http://169.254.169.254/` (the cloud metadata service, which hands out credentials). So:

    paths     resolved first (`..` and symlinks followed), then required to lie inside an allowed
              folder: the working directory, the framework's media folder (`media_dir()`), and any
              you add. No hidden files or folders (`.env`, `.ssh/`), regular files only, size-limited.
    URLs      http and https only, no user:password@; the host resolved, and *every* address it
              resolves to must be public (no loopback, private, link-local, multicast, reserved, or
              unspecified address, however it is spelled: 127.1, 2130706433, 0x7f000001, [::1],
              [::ffff:127.0.0.1]) unless the host is trusted. The connection then goes to the address
              that was checked, so a DNS answer cannot change in between; each redirect is checked the
              same way; size and time are limited.
    data:     decoded, size-limited; nothing is read or fetched.

A refusal is a MediaError whose message is safe to show a model: it names the problem, not the
machine's absolute paths.

Concessions: a file can be swapped for a symlink between the check and the read (it is opened with
O_NOFOLLOW, which covers the last path component only); no proxy support (environment proxy
variables are ignored); redirects are followed for GET only.
"""
from __future__ import annotations

import base64
import binascii
import http.client
import ipaddress
import os
import socket
import ssl
import stat
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, unquote_to_bytes, urljoin, urlsplit

__all__ = ["MediaError", "MediaPolicy", "check_url", "fetch_url", "media_dir", "read_data_url", "read_path",
           "resolve_host"]

MAX_URL = 2048
REDIRECTS = {301, 302, 303, 307, 308}
PATH_SAFE = "/%?=&;:@!$'()*+,~-._"  # kept as they are when a URL's path is percent-encoded (é -> %C3%A9)


class MediaError(Exception):
    """An image that cannot be used; the message says why, in words a model can act on."""


def media_dir() -> Path:
    """The framework's own folder for images tools create (allowed by default), created if missing.

    It must be a real folder owned by this user and closed to others; if what is there is not (a
    symlink someone planted in the shared temp folder, say), a private folder is made instead.

    >>> media_dir().name.startswith("mini_framework_media")
    True
    """
    global _media_dir
    if _media_dir is not None and _safe_folder(_media_dir):
        return _media_dir
    folder = Path(tempfile.gettempdir()) / "mini_framework_media"
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
    except OSError:
        pass
    if not _safe_folder(folder):
        folder = Path(tempfile.mkdtemp(prefix="mini_framework_media-"))
    _media_dir = folder
    return folder


_media_dir: Path | None = None


def _safe_folder(folder: Path) -> bool:
    """A folder (not a symlink), ours, that nobody else can write to."""
    try:
        info = os.lstat(folder)
    except OSError:
        return False
    owner = getattr(os, "getuid", lambda: info.st_uid)()
    return stat.S_ISDIR(info.st_mode) and info.st_uid == owner and not info.st_mode & 0o022


@dataclass(frozen=True)
class MediaPolicy:
    """Where images may come from, and how big they may be.

    >>> MediaPolicy(max_bytes=1_000_000).max_images
    4
    """

    allowed_dirs: tuple[Path, ...] = ()  # folders besides the working directory and media_dir()
    trusted_hosts: frozenset[str] = frozenset()  # hosts fetched even when their address is private
    include_working_dir: bool = True  # False: only media_dir() and allowed_dirs
    max_bytes: int = 5 * 2**20  # per image
    max_images: int = 4  # images attached in full per round; the rest are referred to by id
    max_round_bytes: int = 12 * 2**20  # all images attached in one round
    timeout: float = 10.0  # seconds per URL, redirects included
    max_redirects: int = 3

    def __post_init__(self) -> None:
        object.__setattr__(self, "allowed_dirs", tuple(Path(p) for p in self.allowed_dirs))
        object.__setattr__(self, "trusted_hosts", frozenset(h.lower().strip("[]") for h in self.trusted_hosts))
        for name in ("max_bytes", "max_images", "max_round_bytes", "max_redirects"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"MediaPolicy.{name} must be a whole number >= 0, not {value!r}")
        if not isinstance(self.timeout, (int, float)) or not self.timeout > 0:
            raise ValueError(f"MediaPolicy.timeout must be a number of seconds > 0, not {self.timeout!r}")

    def named_folders(self) -> str:
        """The allowed folders in words, for a refusal (never their absolute paths).

        >>> MediaPolicy(allowed_dirs=["charts"], include_working_dir=False).named_folders()
        'the media folder and 1 configured folder'
        """
        names = ["the working directory"] if self.include_working_dir else []
        names.append("the media folder")
        if self.allowed_dirs:
            count = len(self.allowed_dirs)
            names.append(f"{count} configured folder{'s' if count > 1 else ''}")
        return ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else names[0]

    def folders(self) -> list[Path]:
        """The allowed folders, resolved: the working directory as it is now (unless it is the root of
        the file system, or gone), the media folder, and `allowed_dirs`."""
        found = []
        if self.include_working_dir:
            try:
                here = Path.cwd().resolve()
            except OSError:
                here = None
            if here is not None and here != Path(here.anchor):
                found.append(here)
        return [*found, media_dir().resolve(), *(p.resolve() for p in self.allowed_dirs)]


# ----------------------------------------------------------------------------- local files

def read_path(path: str | os.PathLike[str], policy: MediaPolicy) -> bytes:
    """The bytes of an image file inside an allowed folder, at most `policy.max_bytes`."""
    shown = str(path)[:200]
    if not str(path) or "\0" in str(path):
        raise MediaError(f"{shown!r} is not a file path")
    folders = policy.folders()
    try:  # where it points, judged before asking whether it exists: no probing outside the folders
        resolved = Path(os.path.abspath(path)).resolve(strict=False)
        if not any(resolved.is_relative_to(f) for f in folders):
            raise MediaError(f"{shown!r}{_points_to(path, resolved)} is outside the folders images may come from "
                             f"({policy.named_folders()}): nothing was read")
        resolved = resolved.resolve(strict=True)
    except FileNotFoundError:
        raise MediaError(f"there is no file at {shown!r}") from None
    except (OSError, RuntimeError):  # a symlink loop, a path too long, no permission
        raise MediaError(f"{shown!r} cannot be opened") from None
    roots = [f for f in folders if resolved.is_relative_to(f)]
    root = max(roots, key=lambda f: len(f.parts)) if roots else None  # the most specific folder decides
    if root is None:
        raise MediaError(f"{shown!r} is outside the folders images may come from: nothing was read")
    if any(part.startswith(".") for part in resolved.relative_to(root).parts):
        raise MediaError(f"{shown!r}{_points_to(path, resolved)} is a hidden file or inside a hidden folder: "
                         "nothing was read")
    try:
        fd = os.open(resolved, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        raise MediaError(f"{shown!r} cannot be opened") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise MediaError(f"{shown!r} is not a regular file: nothing was read")
        if info.st_size > policy.max_bytes:
            raise MediaError(f"{shown!r} is {info.st_size:,} bytes, over the limit of {policy.max_bytes:,}")
        chunks, size = [], 0
        while size <= policy.max_bytes:
            chunk = os.read(fd, min(1 << 20, policy.max_bytes + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        data = b"".join(chunks)
    except OSError:
        raise MediaError(f"{shown!r} cannot be read") from None
    finally:
        os.close(fd)
    if len(data) > policy.max_bytes:
        raise MediaError(f"{shown!r} is over the limit of {policy.max_bytes:,} bytes")
    return data


def _points_to(path: str | os.PathLike[str], resolved: Path) -> str:
    """' (resolved: /srv/.env)' when following `..` and symlinks leads somewhere the path does not say, else ''.

    >>> _points_to("/srv/a.png", Path("/srv/a.png")), _points_to("/srv/app/../.env", Path("/srv/.env"))
    ('', " (resolved: '/srv/.env')")
    """
    return "" if str(resolved) == str(path) else f" (resolved: {str(resolved)[:200]!r})"


def read_data_url(url: str, policy: MediaPolicy) -> bytes:
    """The bytes of a `data:` URL (base64 or percent-encoded), at most `policy.max_bytes`.

    >>> read_data_url("data:image/png;base64,iVBORw0KGgo=", MediaPolicy())
    b'\\x89PNG\\r\\n\\x1a\\n'
    """
    header, comma, payload = url.partition(",")
    if not comma:
        raise MediaError("a data: URL needs a comma before its data")
    if len(payload) > policy.max_bytes * 4 // 3 + 8:
        raise MediaError(f"the data: URL holds more than the limit of {policy.max_bytes:,} bytes")
    try:
        data = base64.b64decode(payload, validate=True) if header.lower().endswith(";base64") \
            else unquote_to_bytes(payload)
    except (binascii.Error, ValueError):
        raise MediaError("the data: URL's base64 data is not valid") from None
    if len(data) > policy.max_bytes:
        raise MediaError(f"the data: URL holds more than the limit of {policy.max_bytes:,} bytes")
    return data


# ----------------------------------------------------------------------------- URLs

def resolve_host(host: str, port: int) -> list[str]:
    """Every address `host` resolves to (the system resolver; tests replace this function)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        raise MediaError(f"the host {host!r} could not be resolved") from None
    return [str(info[4][0]) for info in infos]


def public(address: str) -> bool:
    """Whether an IP address is a public one (IPv4 inside IPv6 is judged as the IPv4 address it carries).

    >>> public("93.184.216.34"), public("127.0.0.1"), public("::ffff:10.0.0.1"), public("169.254.169.254")
    (True, False, False, False)
    """
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address):
        inner = ip.ipv4_mapped or ip.sixtofour or (ip.teredo[1] if ip.teredo else None)
        if inner is not None and not public(str(inner)):
            return False
    site_local = isinstance(ip, ipaddress.IPv6Address) and ip.is_site_local
    return ip.is_global and not (ip.is_multicast or ip.is_reserved or ip.is_loopback or ip.is_link_local
                                 or ip.is_private or ip.is_unspecified or site_local)


@dataclass(frozen=True)
class Target:
    """A checked URL: where to connect (the address that was checked) and what to ask for."""

    scheme: str
    host: str
    port: int
    address: str
    path: str


def check_url(url: str, policy: MediaPolicy) -> Target:
    """A URL checked against the policy, resolved to the address to connect to; or MediaError, before any
    connection is made."""
    if not isinstance(url, str) or not url or len(url) > MAX_URL or any(c.isspace() or ord(c) < 32 for c in url):
        raise MediaError(f"{str(url)[:100]!r} is not a URL that can be fetched")
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise MediaError(f"only http and https URLs are fetched, not {scheme or 'this'!r} ones")
    if parts.username is not None or parts.password is not None:
        raise MediaError("a URL with a user name or password in it is not fetched")
    host = (parts.hostname or "").rstrip(".")
    try:
        port = parts.port or (443 if scheme == "https" else 80)
    except ValueError:
        raise MediaError(f"the URL's port is not a number from 1 to 65535: {url[:100]!r}") from None
    if not host:
        raise MediaError(f"the URL has no host: {url[:100]!r}")
    addresses = resolve_host(host, port)
    if not addresses:
        raise MediaError(f"the host {host!r} could not be resolved")
    if host.lower() not in policy.trusted_hosts:
        private = [a for a in addresses if not public(a)]
        if private:
            raise MediaError(f"{host!r} is a local or private address, which tools may not fetch unless it is "
                             "trusted: nothing was fetched")
    path = quote(parts.path or "/", safe=PATH_SAFE) + (f"?{quote(parts.query, safe=PATH_SAFE)}" if parts.query else "")
    return Target(scheme, host, port, addresses[0], path)


def fetch_url(url: str, policy: MediaPolicy) -> bytes:
    """GET an image URL within the policy: every hop checked before connecting, size and time limited."""
    deadline = time.monotonic() + policy.timeout
    for _ in range(policy.max_redirects + 1):
        target = check_url(url, policy)
        status, location, body = _get(target, deadline, policy.max_bytes)
        if status in REDIRECTS:
            if not location:
                raise MediaError(f"the server redirected (HTTP {status}) without saying where")
            url = urljoin(url, location)
            continue
        if status != 200:
            raise MediaError(f"the server answered HTTP {status} for {target.host!r}")
        return body
    raise MediaError(f"more than {policy.max_redirects} redirects: nothing was fetched")


class _Pinned(http.client.HTTPConnection):
    """HTTP to an address that was checked, with the URL's host name in the Host header."""

    def __init__(self, target: Target, timeout: float) -> None:
        super().__init__(target.host, target.port, timeout=timeout)
        self.address = target.address

    def connect(self) -> None:
        self.sock = socket.create_connection((self.address, self.port), self.timeout)


class _PinnedTLS(http.client.HTTPSConnection):
    """HTTPS to an address that was checked; the certificate is verified against the URL's host name."""

    def __init__(self, target: Target, timeout: float) -> None:
        self.tls = ssl.create_default_context()
        super().__init__(target.host, target.port, timeout=timeout, context=self.tls)
        self.address = target.address

    def connect(self) -> None:
        sock = socket.create_connection((self.address, self.port), self.timeout)
        self.sock = self.tls.wrap_socket(sock, server_hostname=self.host)


def _get(target: Target, deadline: float, max_bytes: int) -> tuple[int, str, bytes]:
    """One GET: (status, Location header, body of at most max_bytes), within the deadline."""
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise MediaError("fetching the image took too long")
    kind = _PinnedTLS if target.scheme == "https" else _Pinned
    connection = kind(target, timeout=remaining)
    watchdog = threading.Timer(remaining, _cut, (connection,))  # one deadline for everything, headers included
    watchdog.daemon = True
    watchdog.start()
    try:
        connection.request("GET", target.path, headers={"User-Agent": "mini_framework", "Accept": "image/*"})
        response = connection.getresponse()
        if response.status in REDIRECTS:
            return response.status, response.getheader("Location") or "", b""
        length = (response.getheader("Content-Length") or "").strip()
        if length.isascii() and length.isdigit() and int(length) > max_bytes:
            raise MediaError(f"the image is {int(length):,} bytes, over the limit of {max_bytes:,}")
        return response.status, "", _read(connection, response, deadline, max_bytes)
    except (OSError, http.client.HTTPException, ValueError) as error:
        late = isinstance(error, TimeoutError) or time.monotonic() >= deadline
        reason = "took too long" if late else f"failed ({type(error).__name__})"
        raise MediaError(f"fetching the image from {target.host!r} {reason}") from None
    finally:
        watchdog.cancel()
        connection.close()


def _cut(connection: http.client.HTTPConnection) -> None:
    """At the deadline: shut the socket, so a read blocked on a slow server returns at once."""
    sock = connection.sock
    if sock is not None:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def _read(connection: http.client.HTTPConnection, response: http.client.HTTPResponse, deadline: float,
          max_bytes: int) -> bytes:
    """The body in chunks, stopping at the size limit or the deadline (a slow trickle counts too)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise MediaError("fetching the image took too long")
        if connection.sock is not None:
            connection.sock.settimeout(remaining)
        chunk = response.read1(65536)
        if not chunk:
            if time.monotonic() >= deadline:  # the watchdog cut the connection: the body is incomplete
                raise MediaError("fetching the image took too long")
            return b"".join(chunks)
        size += len(chunk)
        if size > max_bytes:
            raise MediaError(f"the image is over the limit of {max_bytes:,} bytes")
        chunks.append(chunk)

