"""Exercise checkers of lesson 09b: each solution passes, each stub waits, each realistic wrong answer gets ❌."""
from __future__ import annotations

import ipaddress
import os
import socket
from pathlib import Path
from urllib.parse import urlsplit

from checker_cases import boom, checker_tests, stub

from course import lesson09b
from mini_framework import MediaError

# -- exercise 1: safe_image_path; exercise 2: safe_image_url ----------------------------------------------


def safe_image_path(path, folder, *, resolve=True, prefix=False, hidden=True, dotdot_only=False, error=MediaError,
                    hidden_in_input=False, give_resolved=True):
    root = Path(folder).resolve()
    if dotdot_only:
        if ".." in str(path):
            raise error("no ..")
        return root / path
    resolved = (root / path).resolve() if resolve else Path(os.path.normpath(root / path))
    inside = str(resolved).startswith(str(root)) if prefix else resolved.is_relative_to(root)
    if not inside:
        raise error(f"{path!r} is outside the folder")
    judged = str(path) if hidden_in_input else str(resolved)[len(str(root)):]
    if hidden and any(part.startswith(".") for part in judged.split(os.sep)):
        raise error(f"{path!r} is hidden")
    return resolved if give_resolved else root / path


def unchecked_path(path, folder):
    return (Path(folder) / path).resolve()


def public(address, *, mapped=True, only_private=False, no_ipv6=False):
    ip = ipaddress.ip_address(address)
    if no_ipv6 and ip.version == 6:
        return False
    if mapped and ip.version == 6 and ip.ipv4_mapped:
        ip = ip.ipv4_mapped
    if only_private:
        return not (ip.is_private or ip.is_loopback)
    return ip.is_global and not ip.is_multicast


def safe_image_url(url, resolve, *, schemes=("http", "https"), every=True, give="address", only_private=False,
                   by_name=False, own_dns=False, mapped=True, no_ipv6=False):
    parts = urlsplit(url)
    if schemes and (parts.scheme not in schemes or not parts.hostname):
        raise MediaError("only http(s)")
    host = parts.hostname or ""
    if by_name:
        if host in ("localhost", "127.0.0.1", "169.254.169.254", "::1") or host.startswith(("10.", "192.168.")):
            raise MediaError("a local host")
        return host
    addresses = [socket.gethostbyname(host)] if own_dns else resolve(host)
    checked = addresses if every else addresses[:1]
    if any(not public(a, only_private=only_private, mapped=mapped, no_ipv6=no_ipv6) for a in checked):
        raise MediaError("not a public address")
    return addresses[0] if give == "address" else host


def url_solution(url, resolve):
    return safe_image_url(url, resolve)


def wrong(function, **options):
    def wrapped(*args):
        return function(*args, **options)
    return wrapped


CASES = {
    "safe_image_path": (lesson09b.safe_image_path, [safe_image_path], [stub], [
        [unchecked_path],  # no check at all
        [wrong(safe_image_path, dotdot_only=True)],  # only looks for '..' in the text
        [wrong(safe_image_path, resolve=False)],  # normpath: a symlink leads out
        [wrong(safe_image_path, prefix=True)],  # string prefix: 'charts-private' passes
        [wrong(safe_image_path, hidden=False)],  # .env inside the folder
        [wrong(safe_image_path, error=ValueError)],  # refuses, but not with MediaError
        [wrong(safe_image_path, hidden_in_input=True)],  # hidden parts judged before resolving
        [wrong(safe_image_path, give_resolved=False)],  # judges the resolved path, returns the unresolved one
        [boom],
    ]),
    "safe_image_url": (lesson09b.safe_image_url, [url_solution], [stub], [
        [wrong(safe_image_url, by_name=True)],  # a blacklist of host names: 127.1 passes
        [wrong(safe_image_url, every=False)],  # only the first address checked
        [wrong(safe_image_url, give="host")],  # returns the name, to be resolved again later
        [wrong(safe_image_url, schemes=())],  # file:// and ftp:// allowed
        [wrong(safe_image_url, only_private=True)],  # is_private only: 100.64/10, multicast pass
        [wrong(safe_image_url, own_dns=True)],  # resolves by itself (the check allows no network)
        [wrong(safe_image_url, no_ipv6=True)],  # every IPv6 address refused, public ones too
        [boom],
    ]),
}

test_checker_passes_the_solution, test_checker_says_not_solved_to_the_stub, \
    test_checker_catches_a_wrong_answer_without_raising = checker_tests(CASES)


def test_the_url_check_connects_nowhere_and_restores_the_socket_module():
    before = socket.getaddrinfo, socket.create_connection, socket.socket.connect
    result = lesson09b.safe_image_url(wrong(safe_image_url, own_dns=True))
    assert "tried to resolve or connect by itself" in result.message
    assert (socket.getaddrinfo, socket.create_connection, socket.socket.connect) == before


def test_the_fake_resolver_reads_numeric_hosts_as_getaddrinfo_does():
    resolve = lesson09b.FakeResolver()
    assert [resolve(h)[0] for h in ("127.1", "2130706433", "0x7f000001", "::ffff:127.0.0.1")] == [
        "127.0.0.1", "127.0.0.1", "127.0.0.1", "::ffff:7f00:1"]


def test_a_public_ipv6_address_refused_is_told_so():
    said = lesson09b.safe_image_url(wrong(safe_image_url, no_ipv6=True)).message
    assert "IPv6" in said, said


def test_a_lesson_09_saved_before_the_split_still_runs_its_path_and_url_check():
    from course import lesson09

    assert lesson09.safe_image(safe_image_path, url_solution).passed
    assert lesson09.safe_image(stub, url_solution).status == "not solved"
    assert lesson09.safe_image(safe_image_path, wrong(safe_image_url, only_private=True)).status == "wrong"
