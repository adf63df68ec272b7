"""The egress policy where a model call connects (apps.endpoints.egress): the aiohttp
session, whose middleware checks each request's URL (aiohttp connects to an IP literal
without asking the resolver) and whose resolver checks each address a name resolves to.
Imported where a session is made, not with the models."""

from __future__ import annotations

import ipaddress
import socket

import aiohttp
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
    """The aiohttp session of model calls and of the SDK's client (made in the loop that
    uses it): URLs and names go through the egress policy's guards, and no connection cap of
    its own (the endpoint's limiter bounds the requests in flight)."""
    from apps.endpoints.client import tls_context

    policy = egress_policy()
    connector = aiohttp.TCPConnector(limit=0, ssl=tls_context(), resolver=GuardedResolver(policy))
    return aiohttp.ClientSession(connector=connector, middlewares=(CheckedURLs(policy),))


def check(policy: EgressPolicy, host: str, addresses: list[str]) -> None:
    """EgressRefused when any address the host resolves to is refused."""
    for text in addresses:
        address = ipaddress.ip_address(text.split("%")[0])
        if problem := policy.address_problem(address, host):
            raise EgressRefused(problem)
