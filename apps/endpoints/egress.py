"""Where a model call may go: the egress policy (docs/endpoints.md, Where calls may go).

A researcher types an endpoint's base URL and a worker posts to it, so a URL must never reach
the server's own network: addresses that are loopback, private, link-local (cloud metadata),
multicast or otherwise reserved are refused unless the administrator allows their kind or
network in ``DISCERN_EGRESS_ALLOW`` (e.g. ``loopback`` for a local model server, as
``make demo`` does; ``10.1.2.0/24`` for one network). Cloud metadata addresses are refused even
then, unless their own address is listed. Credentials in a URL are refused too.

Every check reads the host as the HTTP clients will (``normal_host``: IDNA's Unicode mapping,
full stops of every script, IP literals in every spelling), so that ``http://127。0。0。1/`` is
the loopback address it connects to. Checked when an endpoint is saved (``url_problem``:
literal addresses, well-known metadata names, credentials, hosts that cannot be read), before
each request (``url_problem`` again, on the URL the client sends) and when a worker connects
(``address_problem`` on every address the host name resolves to, by the client's resolver), so
that a name that resolves, or later re-resolves, to an inside address does not pass.
"""

from __future__ import annotations

import functools
import ipaddress
import os
import re
import socket
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

import idna

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

#: The kinds of inside address an administrator may allow by name.
KINDS = ("loopback", "private", "link-local", "multicast", "reserved")
#: Cloud metadata services: never reached unless their exact address is allowed.
METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(a)
    for a in ("169.254.169.254", "169.254.170.2", "100.100.100.200", "fd00:ec2::254")
)
METADATA_NAMES = frozenset(
    {"metadata", "metadata.google.internal", "instance-data", "instance-data.ec2.internal"}
)
SETTING = "DISCERN_EGRESS_ALLOW"


class EgressRefused(OSError):
    """A connection the egress policy does not allow (raised by the client's resolver)."""


def address_kind(address: IPAddress) -> str | None:
    """The kind of inside address this is, or None for a public one."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address_kind(address.ipv4_mapped)
    if address in METADATA_ADDRESSES:
        return "metadata"
    if address.is_loopback:
        return "loopback"
    if address.is_link_local:
        return "link-local"
    if address.is_multicast:
        return "multicast"
    if address.is_unspecified or address.is_reserved:
        return "reserved"
    if address.is_private or not address.is_global:
        return "private"
    return None


@dataclass(frozen=True)
class EgressPolicy:
    kinds: frozenset[str] = frozenset()
    networks: tuple[IPNetwork, ...] = ()

    @classmethod
    def parse(cls, entries: Iterable[str]) -> EgressPolicy:
        """From the setting's entries: kinds (``loopback``...) and networks (``10.0.0.0/8``)."""
        kinds: set[str] = set()
        networks: list[IPNetwork] = []
        for entry in (e.strip() for e in entries):
            if not entry:
                continue
            if entry in KINDS:
                kinds.add(entry)
                continue
            try:
                networks.append(ipaddress.ip_network(entry, strict=False))
            except ValueError:
                raise ValueError(
                    f"{SETTING}: {entry!r} is neither a kind ({', '.join(KINDS)}) nor a network"
                ) from None
        return cls(frozenset(kinds), tuple(networks))

    def address_problem(self, address: IPAddress, host: str = "") -> str | None:
        """Why a call may not connect to this address, or None when it may."""
        kind = address_kind(address)
        if kind is None or any(address in network for network in self.networks):
            return None
        if kind in self.kinds:
            return None
        named = f"{host} resolves to {address}" if host and host != str(address) else str(address)
        allow = (
            f"only by listing this very address in {SETTING}"
            if kind == "metadata"
            else f"({SETTING})"
        )
        return (
            f"refused by the egress policy: {named} is a {kind} address, inside the server's "
            f"network; an administrator may allow it {allow}"
        )

    def url_problem(self, url: str) -> str | None:
        """Why an endpoint may not have this base URL, as far as the URL alone tells (asked
        before every request: remembered for the URLs last asked about)."""
        return _url_problem(self, url)


@functools.lru_cache(maxsize=1024)
def _url_problem(policy: EgressPolicy, url: str) -> str | None:
    parts = urlsplit(url)
    if parts.username is not None or parts.password is not None:
        return "no user name or password in the address: a key goes in a key variable"
    try:
        host = normal_host(parts.hostname or "").rstrip(".")
    except HostUnreadable as error:
        return str(error)
    if host in METADATA_NAMES:
        return policy.address_problem(METADATA_ADDRESS_OF_NAME, host)
    if host == "localhost" or host.endswith(".localhost"):
        return policy.address_problem(LOOPBACK, host)
    address = literal_address(host)
    return None if address is None else policy.address_problem(address, host)


METADATA_ADDRESS_OF_NAME = ipaddress.ip_address("169.254.169.254")
LOOPBACK = ipaddress.ip_address("127.0.0.1")


class HostUnreadable(ValueError):
    """A host name no HTTP client reads the same way: refused, with the reason."""


#: What a host is made of once normal: ASCII letters, digits, hyphens, underscores, dots.
_NORMAL_HOST = re.compile(r"[a-z0-9_.-]+")


def normal_host(host: str) -> str:
    """The host as the HTTP clients connect to it: lower case ASCII, Unicode names mapped by
    IDNA (UTS 46, as yarl and httpx do: ``127。0。0。1`` is ``127.0.0.1``, ``ⓛⓞⓒⓐⓛⓗⓞⓢⓣ`` is
    ``localhost``), IPv6 literals compressed. HostUnreadable when it is none of these."""
    text = host.strip("[]")
    if ":" in text:
        try:
            return str(ipaddress.IPv6Address(text.split("%")[0]))
        except ValueError:
            raise HostUnreadable(f"{host!r} is not a host name or an address") from None
    try:
        if not text.isascii():
            text = idna.encode(text, uts46=True).decode("ascii")
        elif "xn--" in text.lower():  # punycode: it must decode, as the clients decode it
            idna.decode(text)
    except (idna.IDNAError, UnicodeError) as error:
        raise HostUnreadable(f"the host {host!r} cannot be read as a name: {error}") from None
    text = text.lower()
    if not _NORMAL_HOST.fullmatch(text) or ".." in text or text.startswith("."):
        raise HostUnreadable(
            f"the host {host!r} cannot be read as a name: use letters, digits, hyphens and dots"
        )
    return text


def normal_url(url: str) -> str:
    """The URL with its host as ``normal_host`` reads it (HostUnreadable when it cannot)."""
    parts = urlsplit(url)
    host = normal_host(parts.hostname or "")
    netloc = f"[{host}]" if ":" in host else host
    try:
        port = parts.port
    except ValueError:
        raise HostUnreadable(f"the port in {parts.netloc!r} is not a port number") from None
    if port is not None:
        netloc = f"{netloc}:{port}"
    return urlunsplit(parts._replace(netloc=netloc))


def literal_address(host: str) -> IPAddress | None:
    """The address a host written as one means, legacy IPv4 forms included (``0x7f000001``,
    ``2130706433``, ``127.1``, which the system resolver accepts too); None for a name."""
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        pass
    try:
        return ipaddress.IPv4Address(socket.inet_aton(host))
    except OSError:
        return None


def egress_policy() -> EgressPolicy:
    """The policy in force: the setting, or the environment variable when Django is not set up
    (a benchmark's bare client)."""
    from django.conf import settings

    if settings.configured:
        return _parsed(tuple(getattr(settings, SETTING, ()) or ()))
    return _parsed(tuple(os.environ.get(SETTING, "").split(",")))


@functools.lru_cache(maxsize=64)
def _parsed(entries: tuple[str, ...]) -> EgressPolicy:
    return EgressPolicy.parse(entries)
