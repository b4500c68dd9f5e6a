"""The public origin every advertised URL is built on (sandbox/origin.py): Forwarded / X-Forwarded-* believed from a
loopback peer only, `public_url` (--public-url, config) winning over them. The helper on its own (a peer address is
a parameter, so other peers are simulated), a mocked request, and real sandboxes: one reached from a non-loopback
address of this machine, one started with --public-url. Through a real TLS proxy: test_proxy.py."""
from __future__ import annotations

import socket
import subprocess
import sys
from unittest import mock

import pytest
import requests
from aiohttp import web
from aiohttp.test_utils import make_mocked_request
from multidict import CIMultiDict

from sandbox.origin import forwarded_origin, is_loopback, normalize_public_url, public_origin
from sandbox.state import SANDBOX, Sandbox

from .conftest import REPO, start_sandbox, stop

LOOPBACK = "127.0.0.1"
PROXY_HEADERS = {"Host": "127.0.0.1:41001", "X-Forwarded-Proto": "https", "X-Forwarded-Host": "127.0.0.1:41001",
                 "Forwarded": 'proto=https;host="127.0.0.1:41001"'}  # what tools/net_harness.py's nginx sends


def origin(headers: dict | list, remote: str | None = LOOPBACK) -> str | None:
    return forwarded_origin(CIMultiDict(headers), remote)


def test_a_loopback_proxy_is_believed():
    assert origin(PROXY_HEADERS) == "https://127.0.0.1:41001"
    for peer in ("127.0.0.1", "127.0.0.2", "::1", "::ffff:127.0.0.1"):
        assert origin(PROXY_HEADERS, peer) == "https://127.0.0.1:41001", peer


def test_forwarded_headers_from_any_other_peer_are_ignored():
    for peer in ("192.0.2.7", "10.0.0.1", "::ffff:192.0.2.1", "2001:db8::1", "fd00::2", None, "", "not-an-ip"):
        assert origin(PROXY_HEADERS, peer) is None, peer
        assert not is_loopback(peer)


def test_forwarded_first_then_x_forwarded():
    both = {"Forwarded": 'proto=https;host="a.example:8443"', "X-Forwarded-Proto": "http",
            "X-Forwarded-Host": "b.example"}
    assert origin(both) == "https://a.example:8443"
    assert origin({"X-Forwarded-Proto": "https", "X-Forwarded-Host": "b.example:9443"}) == "https://b.example:9443"
    # Forwarded without proto or host (only for=) says nothing about the origin: X-Forwarded-* decide
    assert origin({"Forwarded": "for=192.0.2.60", "X-Forwarded-Proto": "https",
                   "X-Forwarded-Host": "b.example"}) == "https://b.example"


def test_only_the_nearest_proxy_counts():
    """The last Forwarded element, the last X-Forwarded-* value: what the loopback peer added, not what its client
    claimed before it."""
    chain = {"Forwarded": 'proto=http;host=evil.example, for=192.0.2.1;proto=https;host="api.example"'}
    assert origin(chain) == "https://api.example"
    assert origin([("Forwarded", "proto=http;host=evil.example"), ("Forwarded", "proto=https;host=api.example")]) \
        == "https://api.example"
    assert origin({"X-Forwarded-Proto": "http, https", "X-Forwarded-Host": "evil.example, api.example"}) \
        == "https://api.example"


def test_a_missing_half_comes_from_the_request():
    assert origin({"Host": "h.example:8080", "X-Forwarded-Proto": "https"}) == "https://h.example:8080"
    assert origin({"Host": "h.example:8080", "X-Forwarded-Host": "p.example"}) == "http://p.example"
    assert origin({"Host": "h.example", "Forwarded": "proto=https"}) == "https://h.example"


def test_values_are_normalised():
    assert origin({"Forwarded": 'Proto=HTTPS;Host="API.Example:443"'}) == "https://api.example"
    assert origin({"X-Forwarded-Proto": "http", "X-Forwarded-Host": "p.example:80"}) == "http://p.example"
    assert origin({"Forwarded": 'proto=https;host="[::1]:8443"'}) == "https://[::1]:8443"
    assert origin({"Forwarded": r'proto=https;host="a\.example"'}) == "https://a.example"  # quoted-pair


@pytest.mark.parametrize("header", [
    'proto=ftp;host="a.example"', 'proto=https;host="a.example/path"', 'proto=https;host="user@a.example"',
    'proto=https;host="a.example:99999"', 'proto=https;host="a example"', 'proto=https;host="[zz::1]"',
    'proto=https;host="a.example', "proto", 'proto=https;host="a.example:0"', 'proto=https;host=""',
])
def test_an_unusable_header_is_ignored_as_a_whole(header):
    assert origin({"Forwarded": header}) is None
    # … and X-Forwarded-* still get their turn
    assert origin({"Forwarded": header, "X-Forwarded-Proto": "https", "X-Forwarded-Host": "b.example"}) \
        == "https://b.example"
    assert origin({"X-Forwarded-Proto": "gopher", "X-Forwarded-Host": "b.example"}) is None


def test_public_url_is_an_origin_only():
    assert normalize_public_url("https://Sandbox.Example:443/") == "https://sandbox.example"
    assert normalize_public_url("https://127.0.0.1:8443") == "https://127.0.0.1:8443"
    assert normalize_public_url("http://[::1]:8080") == "http://[::1]:8080"
    for bad in ("ftp://x.example", "https://x.example/api", "https://x.example?a=1", "https://u:p@x.example",
                "https://x.example:99999", "x.example", "https://", ""):
        with pytest.raises(ValueError):
            normalize_public_url(bad)


def request_from(peer: str, headers: dict, public_url: str | None = None) -> web.Request:
    app = web.Application()
    sb = Sandbox()
    sb.base_url = "http://127.0.0.1:8080"
    sb.config["public_url"] = public_url
    app[SANDBOX] = sb
    transport = mock.Mock()
    transport.get_extra_info.side_effect = lambda name, default=None: (peer, 50000) if name == "peername" else default
    return make_mocked_request("GET", "/.well-known/oauth-authorization-server", headers=CIMultiDict(headers), app=app,
                               transport=transport)


def test_public_origin_of_a_request():
    assert public_origin(request_from("127.0.0.1", PROXY_HEADERS)) == "https://127.0.0.1:41001"
    assert public_origin(request_from("192.0.2.7", PROXY_HEADERS)) == "http://127.0.0.1:8080"  # the sandbox's own
    assert public_origin(request_from("127.0.0.1", {})) == "http://127.0.0.1:8080"
    for peer in ("127.0.0.1", "192.0.2.7"):  # public_url wins over the headers, for every peer
        assert public_origin(request_from(peer, PROXY_HEADERS, "https://sandbox.example")) == "https://sandbox.example"


def non_loopback_address() -> str | None:
    """An IPv4 address of this machine that is not loopback (the route to a private address; nothing is sent)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.connect(("10.255.255.255", 1))
        address = s.getsockname()[0]
    except OSError:
        return None
    finally:
        s.close()
    return None if is_loopback(address) else address


def test_a_real_non_loopback_peer_cannot_move_the_issuer():
    """A sandbox listening on this machine's own non-loopback address, called from that address: the peer is not
    loopback, so a forged Forwarded / X-Forwarded-* header changes nothing."""
    address = non_loopback_address()
    if not address:
        pytest.skip("this machine has no non-loopback IPv4 address")
    proc, ready = start_sandbox("--host", address, validate=False)
    try:
        assert ready["api"] == f"http://{address}:{ready['api'].rsplit(':', 1)[1]}"
        url = ready["api"] + "/.well-known/oauth-authorization-server"
        assert requests.get(url, headers=PROXY_HEADERS, timeout=30).json()["issuer"] == ready["api"]
        d = requests.post(ready["api"] + "/oauth/device_authorization", headers=PROXY_HEADERS, timeout=30,
                          data={"client_id": "profirest-pos", "scope": "orders:read"}).json()
        assert d["verification_uri"] == ready["api"] + "/admin"
        # the admin API stays loopback only, and a forwarded header does not open it
        assert requests.get(ready["api"] + "/_sandbox/config", headers=PROXY_HEADERS, timeout=30).status_code == 403
    finally:
        stop(proc)


def test_public_url_option_wins_over_the_headers():
    proc, ready = start_sandbox("--public-url", "https://Sandbox.Example:443/")
    try:
        assert ready["public_url"] == "https://sandbox.example"
        for headers in ({}, PROXY_HEADERS):
            m = requests.get(ready["api"] + "/.well-known/oauth-authorization-server", headers=headers,
                             timeout=30).json()
            assert m["issuer"] == "https://sandbox.example"
            assert m["token_endpoint"] == "https://sandbox.example/oauth/token"
        assert requests.get(ready["api"] + "/_sandbox/config", timeout=30).json()["public_url"] \
            == "https://sandbox.example"
    finally:
        stop(proc)


def test_a_bad_public_url_option_is_refused_at_start():
    done = subprocess.run([sys.executable, "-m", "sandbox", "serve", "--port", "0", "--db", ":memory:",
                           "--public-url", "https://x.example/api"], cwd=REPO, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2 and "origin only" in done.stderr, done.stderr


def test_public_url_in_the_config(api):
    meta = "/.well-known/oauth-authorization-server"
    assert api.call("GET", meta).json()["issuer"] == api.base
    assert api.admin("POST", "/config", {"public_url": "https://proxy.example:8443/"})["public_url"] \
        == "https://proxy.example:8443"
    assert api.call("GET", meta, headers=PROXY_HEADERS).json()["issuer"] == "https://proxy.example:8443"
    for bad in ("ftp://x.example", "https://x.example/path", 8443, ["https://x.example"]):
        r = api.http.post(api.base + "/_sandbox/config", json={"public_url": bad}, timeout=30)
        assert r.status_code == 400, (bad, r.text)
    assert api.admin("GET", "/config")["public_url"] == "https://proxy.example:8443"  # a refused value changes nothing
    api.admin("POST", "/config", {"public_url": None})
    assert api.call("GET", meta).json()["issuer"] == api.base
