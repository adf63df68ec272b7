"""The egress policy where the client connects (apps.endpoints.egress): the aiohttp
transport's session, whose middleware checks each request's URL (aiohttp connects to an IP
literal without asking the resolver) and whose resolver checks each address a name resolves
to, and a check before each request of the httpx transport. Imported where a client is made,
not with the models."""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from typing import Any

import aiohttp
import httpx2
from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.client_middlewares import ClientHandlerType

from apps.endpoints.egress import EgressPolicy, EgressRefused, egress_policy


class GuardedResolver(AbstractResolver):
    """aiohttp's default resolver, refusing a name when any of its addresses is refused: the
    connector connects only to what this returns, so a name that resolves (or re-resolves) to
    an inside address never gets a connection."""

    def __init__(self, policy: EgressPolicy) -> None:
        self.policy = policy
        self.inner = aiohttp.DefaultResolver()

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        results = await self.inner.resolve(host, port, family)
        check(self.policy, host, [result["host"] for result in results])
        return results

    async def close(self) -> None:
        await self.inner.close()


class CheckedURLs:
    """aiohttp middleware: each request's URL, as aiohttp will connect to it, goes through the
    policy's URL check first (IP literals in every spelling, ``localhost``, metadata names)."""

    def __init__(self, policy: EgressPolicy) -> None:
        self.policy = policy

    async def __call__(
        self, request: aiohttp.ClientRequest, handler: ClientHandlerType
    ) -> aiohttp.ClientResponse:
        if problem := self.policy.url_problem(str(request.url)):
            raise EgressRefused(problem)
        return await handler(request)


def guarded_session() -> aiohttp.ClientSession:
    """The aiohttp session of the SDK's aiohttp client (made in the loop that uses it): URLs
    and names go through the egress policy's guards, and no connection cap of its own (the
    endpoint's limiter bounds the requests in flight)."""
    from apps.endpoints.client import tls_context

    policy = egress_policy()
    connector = aiohttp.TCPConnector(limit=0, ssl=tls_context(), resolver=GuardedResolver(policy))
    return aiohttp.ClientSession(connector=connector, middlewares=(CheckedURLs(policy),))


class CheckedTransport(httpx2.AsyncBaseTransport):
    """The httpx transport's guard: the host's addresses are checked before each request (the
    connection then resolves the name again; the aiohttp transport, the default, connects only
    to the addresses it checked)."""

    def __init__(self, inner: httpx2.AsyncBaseTransport, policy: EgressPolicy) -> None:
        self.inner, self.policy = inner, policy

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        url = request.url
        if problem := self.policy.url_problem(str(url)):
            raise EgressRefused(problem)
        port = url.port or (443 if url.scheme == "https" else 80)
        infos: list[Any] = await asyncio.get_running_loop().getaddrinfo(
            url.host, port, type=socket.SOCK_STREAM
        )
        check(self.policy, url.host, [info[4][0] for info in infos])
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


def check(policy: EgressPolicy, host: str, addresses: list[str]) -> None:
    """EgressRefused when any address the host resolves to is refused."""
    for text in addresses:
        address = ipaddress.ip_address(text.split("%")[0])
        if problem := policy.address_problem(address, host):
            raise EgressRefused(problem)
