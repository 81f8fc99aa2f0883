"""Host names of requests: one parser for every server that answers only some names.

`env-serve` (server/local_guard.py) answers only loopback names when it listens on a loopback
address, and the browser UI (ui/guards.py) only loopback names and its `--allowed-host` names: both
guard against DNS rebinding, so both must read a Host header (and an Origin) the same way. A Host
header is `name[:port]` or `[IPv6][:port]` (RFC 9110); anything else (`a@127.0.0.1`,
`localhost/x`, `[::1`, `localhost:8000:9000`, `localhost:abc`) is not a name of this server, so
`host_name` gives the whole header back, which matches no name a server answers.
It sits beside `instances` at the package root: the server and the UI may both import it.
"""

from __future__ import annotations

import ipaddress
import re

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
_HOST = re.compile(r"(?:\[(?P<ip6>[0-9a-f:.]+)\]|(?P<name>[^\[\]:@/?#\\\s]+))(?::[0-9]*)?")


def host_name(header: str) -> str:
    """The name part of a Host header, lower-cased: `[::1]:8765` -> `::1`, `Example.org:80` ->
    `example.org`; a header of no such form comes back whole (lower-cased, stripped)."""
    header = header.strip().lower()
    match = _HOST.fullmatch(header)
    if match is None:
        return header
    return match["ip6"] or match["name"]


def origin_host(origin: str) -> str:
    """The host name of an Origin header (`scheme://host[:port]`, a path ignored); `null` or a
    malformed one comes back whole, which is no loopback name."""
    scheme, sep, rest = origin.strip().partition("://")
    if not sep or not scheme:
        return origin.strip().lower()
    return host_name(rest.split("/", 1)[0])


def is_loopback(name: str) -> bool:
    """A name of this machine's loopback interface: localhost, 127.0.0.0/8 or ::1 (with or
    without brackets)."""
    name = name.strip().lower()
    if name.startswith("[") and name.endswith("]"):
        name = name[1:-1]
    if name in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False
