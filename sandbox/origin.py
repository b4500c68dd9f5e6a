"""The public origin of a request — `scheme://host[:port]`, the address the client used to reach the sandbox — on
which every absolute URL the sandbox advertises is built: the OAuth metadata's issuer and endpoints, the `iss` of an
authorization response (RFC 9207), a device authorization's verification_uri(_complete). One function,
`public_origin(request)`, decides it, in this order:

1. `public_url`, when set (`python -m sandbox serve --public-url https://host:port`, or `POST /_sandbox/config
   {"public_url": "https://host:port"}`, `null` to unset): a fixed origin for every request, direct ones included,
   as a production server configured with its public name. It wins over the headers below.
2. A request whose TCP peer is a loopback address — a proxy on this machine, such as tools/net_harness.py's nginx —
   is trusted about how the client reached the proxy: `Forwarded` (RFC 7239) with `proto=` and/or `host=`, or else
   `X-Forwarded-Proto` and/or `X-Forwarded-Host`. Only what the nearest proxy said counts (the last element of
   Forwarded, the last value of X-Forwarded-*); a half the proxy left out comes from the request itself (proto
   `http`, host from `Host`). A header with a proto other than http/https or a host that is not `host[:port]` is
   ignored as a whole (an unusable Forwarded leaves X-Forwarded-* to be tried). From any other peer these headers
   are ignored: anybody could send them.
3. Otherwise the sandbox's own address, `http://<listen host>:<port>` (the `api` of the ready line).

The issuer is per request, as in production behind a proxy: there the public origin is always the proxy's, here
the sandbox is one authorization server reachable under two names. Reached through the proxy it says
`https://127.0.0.1:<proxy port>` (in discovery, in the consent redirect's `iss`, in verification_uri); reached
directly it says `http://127.0.0.1:<sandbox port>`. A client that discovered one and gets an authorization
response from the other sees a different `iss` and must refuse the callback (RFC 9207; ProfirestApi's
completeAuthorization does): that is the correct outcome of mixing them, not a sandbox bug. The `iss` of an
authorization response is the origin of the request that produced it — GET /oauth/authorize when it answers at
once (automatic consent, prompt=none, an error), the consent page's form (POST /_sandbox/consent) when the owner
decides, which a browser posts to the origin the page came from. Codes and tokens are not bound to an origin (the
store is one): a code may be exchanged, and tokens used, under either name. The issuer a connection was made under
is kept with it (`issuer` in GET /_sandbox/connections; null for tokens minted by the admin API).

Not built on the origin, on purpose: `Location` headers and the admin and consent pages' links are relative (the
client resolves them against the origin it used, so they are right behind any proxy); problem `type` URIs are the
contract's fixed identifiers `https://api.mujprofirest.cz/problems/<code>`, not addresses of this server."""
from __future__ import annotations

import ipaddress
import re
from urllib.parse import urlsplit

from aiohttp import web

from .state import SANDBOX

_HOST = re.compile(r"^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?)(?::([0-9]{1,5}))?$")
_DEFAULT_PORT = {"http": "80", "https": "443"}


def is_loopback(remote: str | None) -> bool:
    """127.0.0.0/8, ::1 and IPv4-mapped loopback; False for anything else (None: a Unix socket, say)."""
    if not remote:
        return False
    try:
        ip = ipaddress.ip_address(remote.split("%", 1)[0])
    except ValueError:
        return False
    mapped = getattr(ip, "ipv4_mapped", None)
    return (mapped or ip).is_loopback


def _origin(proto: str | None, host: str | None) -> str | None:
    """`proto://host[:port]` in lower case without a default port, or None when either is not acceptable."""
    if not proto or not host:
        return None
    proto, host = proto.strip().lower(), host.strip().lower()
    m = _HOST.match(host)
    if proto not in _DEFAULT_PORT or not m:
        return None
    port = m.group(1)
    if port is not None:
        if not 0 < int(port) < 65536:
            return None
        if port == _DEFAULT_PORT[proto]:
            host = host[: -len(port) - 1]
    if host.startswith("["):
        try:
            ipaddress.IPv6Address(host[1:host.index("]")])
        except ValueError:
            return None
    return f"{proto}://{host}"


def normalize_public_url(value: str) -> str:
    """`--public-url` / config `public_url`: an http(s) origin with no path, query, fragment or user; ValueError
    otherwise. `https://Example.org:443/` becomes `https://example.org`."""
    try:
        parts = urlsplit(value.strip())
        parts.port  # noqa: B018 — raises ValueError on a bad port
    except ValueError:
        raise ValueError(f"public_url {value!r} is not a URL") from None
    if parts.path not in ("", "/") or parts.query or parts.fragment or parts.username or parts.password:
        raise ValueError(f"public_url {value!r} must be an origin only: scheme://host[:port]")
    origin = _origin(parts.scheme, parts.netloc)
    if origin is None:
        raise ValueError(f"public_url {value!r} must be http:// or https:// with a host and an optional port")
    return origin


def _split(header: str, sep: str) -> list[str]:
    """Splits at `sep` outside double quotes."""
    out, cur, quoted, escaped = [], [], False, False
    for ch in header:
        if escaped:
            cur.append(ch)
            escaped = False
        elif quoted and ch == "\\":
            cur.append(ch)
            escaped = True
        elif ch == '"':
            cur.append(ch)
            quoted = not quoted
        elif ch == sep and not quoted:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if quoted:
        raise ValueError("unterminated quoted-string")
    out.append("".join(cur))
    return out


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] == '"':
        return re.sub(r"\\(.)", r"\1", value[1:-1])
    return value


def forwarded_element(header: str) -> dict[str, str] | None:
    """The last element of a Forwarded header (RFC 7239) as {parameter (lower case): value}, or None when the header
    does not parse."""
    try:
        elements = [e for e in _split(header, ",") if e.strip()]
        if not elements:
            return None
        pairs = {}
        for pair in _split(elements[-1], ";"):
            if not pair.strip():
                continue
            name, eq, value = pair.strip().partition("=")
            if not eq or not name.strip() or not value.strip():
                return None
            pairs[name.strip().lower()] = _unquote(value.strip())
        return pairs
    except ValueError:
        return None


def forwarded_origin(headers, remote: str | None) -> str | None:
    """What a trusted (loopback) proxy says the client used, from Forwarded or else X-Forwarded-Proto/-Host; None
    when the peer is not loopback, the proxy said nothing usable, or what it said is not acceptable."""
    if not is_loopback(remote):
        return None
    fallback_host = headers.get("Host")
    fwd = headers.getall("Forwarded", [])
    if fwd:
        element = forwarded_element(", ".join(fwd))
        if element and ("proto" in element or "host" in element):
            origin = _origin(element.get("proto", "http"), element.get("host", fallback_host))
            if origin:
                return origin
    xproto, xhost = headers.getall("X-Forwarded-Proto", []), headers.getall("X-Forwarded-Host", [])
    if xproto or xhost:
        proto = ", ".join(xproto).split(",")[-1] if xproto else "http"
        host = ", ".join(xhost).split(",")[-1] if xhost else fallback_host
        return _origin(proto, host)
    return None


def public_origin(request: web.Request) -> str:
    """The origin this request's absolute URLs are built on (see the module's docstring)."""
    sb = request.app[SANDBOX]
    configured = sb.config.get("public_url")
    if configured:
        return configured
    return forwarded_origin(request.headers, request.remote) or sb.base_url
