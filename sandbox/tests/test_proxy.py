"""The sandbox behind a TLS proxy: tools/net_harness.py's nginx (HTTP/2 and HTTP/1.1, a certificate from a private
CA, X-Forwarded-Proto/Host and Forwarded set) in front of the session's sandbox. Through the proxy the sandbox
advertises the proxy's https origin — discovery's issuer and endpoints, verification_uri(_complete), the consent
redirect's iss — while direct requests still see http://127.0.0.1:<sandbox port>; public_url wins over both. Partner
consent end to end in headless chromium through the proxy: approve (code exchanged with PKCE through the proxy),
deny, and a callback whose iss was tampered with on its way (refused by the partner's check, the code never used).

Waits are generous (a minute for a browser round trip, 30 s for a request): both cores may be busy."""
from __future__ import annotations

import asyncio
import base64
import hashlib
import http.server
import json
import queue
import secrets
import shutil
import socket
import ssl
import subprocess
import threading
import time
from urllib.parse import parse_qs, urlencode, urlsplit, urlunsplit

import pytest
import requests

from .chromium import Browser, open_page
from .test_net_harness import Harness, unavailable

TIMEOUT = 30
BROWSER_WAIT = 60
SCOPE = "restaurants:read orders:read"


@pytest.fixture(scope="module")
def proxy(sandbox):
    h = Harness(int(sandbox["api"].rsplit(":", 1)[1]))
    yield h
    h.stop()


def origin(proxy, block: str = "h2") -> str:
    return f"https://127.0.0.1:{proxy.info['nginx'][block]}"


def https(proxy) -> requests.Session:
    """A client that trusts the harness's CA (and no proxy from the environment)."""
    s = requests.Session()
    s.verify = proxy.info["ca_file"]
    s.trust_env = False
    return s


def metadata(http: requests.Session, base: str) -> dict:
    r = http.get(base + "/.well-known/oauth-authorization-server", timeout=TIMEOUT)
    assert r.status_code == 200, r.text
    return r.json()


ENDPOINTS = {"authorization_endpoint": "/oauth/authorize", "token_endpoint": "/oauth/token",
             "device_authorization_endpoint": "/oauth/device_authorization", "revocation_endpoint": "/oauth/revoke"}


def assert_on(meta: dict, base: str) -> None:
    assert meta["issuer"] == base
    for field, path in ENDPOINTS.items():
        assert meta[field] == base + path, field


class RefusedCallback(Exception):
    def __init__(self, error: str):
        super().__init__(error)
        self.error = error


class Partner:
    """The partner application `moje-aplikace` (a public client seeded by the sandbox, loopback redirect URIs
    allowed) talking to one base URL: discovery, an authorization URL with state and PKCE S256, the callback's
    checks in the order ProfirestApi.completeAuthorization makes them (state, then iss against discovery's issuer,
    RFC 9207, then error), and the code exchange."""

    client_id = "moje-aplikace"

    def __init__(self, http: requests.Session, base: str, redirect_uri: str):
        self.http, self.base, self.redirect_uri = http, base, redirect_uri
        self.metadata = metadata(http, base)
        self.state = secrets.token_urlsafe(24)
        self.verifier = secrets.token_urlsafe(48)
        challenge = base64.urlsafe_b64encode(hashlib.sha256(self.verifier.encode()).digest()).decode().rstrip("=")
        self.authorization_url = self.metadata["authorization_endpoint"] + "?" + urlencode({
            "response_type": "code", "client_id": self.client_id, "redirect_uri": redirect_uri, "scope": SCOPE,
            "state": self.state, "code_challenge": challenge, "code_challenge_method": "S256"})

    def check(self, params: dict) -> str:
        """The code of an acceptable callback; RefusedCallback otherwise (nothing is sent to the server)."""
        if params.get("state") != self.state:
            raise RefusedCallback("invalid_state")
        if params.get("iss") != self.metadata["issuer"]:
            raise RefusedCallback("invalid_issuer")
        if "error" in params:
            raise RefusedCallback(params["error"])
        return params["code"]

    def exchange(self, code: str) -> requests.Response:
        return self.http.post(self.metadata["token_endpoint"], timeout=TIMEOUT, data={
            "grant_type": "authorization_code", "code": code, "redirect_uri": self.redirect_uri,
            "code_verifier": self.verifier, "client_id": self.client_id})


def callback_params(location: str) -> dict:
    return {k: v[0] for k, v in parse_qs(urlsplit(location).query, keep_blank_values=True).items()}


# ------------------------------------------------------------------------------------- what it advertises, by HTTP


def test_discovery_through_the_proxy_is_on_the_proxys_origin(proxy, api):
    if not shutil.which("curl"):
        unavailable("curl is not installed (apt-get install curl)")
    # HTTP/2 (curl negotiates h2 by ALPN) and HTTP/1.1, each on its block's own origin
    for block, version in (("h2", "2"), ("h1", "1.1")):
        url = origin(proxy, block) + "/.well-known/oauth-authorization-server"
        done = subprocess.run(["curl", "-sS", "--http2", "--max-time", str(TIMEOUT), "--cacert", proxy.info["ca_file"],
                               "-w", "\n%{http_version}", url], capture_output=True, text=True, timeout=TIMEOUT + 30)
        body, _, used = done.stdout.rpartition("\n")
        assert done.returncode == 0 and used == version, (block, done.stderr)
        assert_on(json.loads(body), origin(proxy, block))
    # localhost is a name of its own: what the client typed is what it is told
    assert metadata(https(proxy), origin(proxy).replace("127.0.0.1", "localhost"))["issuer"] \
        == origin(proxy).replace("127.0.0.1", "localhost")
    # straight to the sandbox: its own address
    assert_on(metadata(api.http, api.base), api.base)


def test_device_authorization_through_the_proxy(proxy, api):
    http = https(proxy)
    form = {"client_id": "profirest-dochazka", "scope": "attendance:punch"}
    d = http.post(origin(proxy) + "/oauth/device_authorization", data=form, timeout=TIMEOUT).json()
    assert d["verification_uri"] == origin(proxy) + "/admin"
    assert d["verification_uri_complete"] == f"{origin(proxy)}/admin?code={d['user_code']}"
    page = http.get(d["verification_uri_complete"], timeout=TIMEOUT)  # the admin page opens through the proxy
    assert page.status_code == 200 and "text/html" in page.headers["Content-Type"]
    direct = api.form("/oauth/device_authorization", form).json()
    assert direct["verification_uri"] == api.base + "/admin"
    # the connection keeps the origin it was made under
    api.admin("POST", f"/pairings/{d['user_code']}/approve", {"restaurant_id": "11"})
    tok = http.post(origin(proxy) + "/oauth/token", timeout=TIMEOUT, data={
        "grant_type": "urn:ietf:params:oauth:grant-type:device_code", "device_code": d["device_code"],
        "client_id": "profirest-dochazka"}).json()
    row = next(c for c in api.admin("GET", "/connections")["data"] if c["id"] == tok["device_id"])
    assert row["issuer"] == origin(proxy)


def test_the_consent_redirect_carries_the_proxys_iss(proxy, api):
    """Automatic consent (POST /_sandbox/consents/auto, as the Swift tests use it) — set through the proxy too: the
    proxy is a loopback peer, so the admin API answers it."""
    http = https(proxy)
    for decision in ("approve", "deny"):
        r = http.post(origin(proxy) + "/_sandbox/consents/auto", json={"decision": decision, "restaurant_ids": ["11"]},
                      timeout=TIMEOUT)
        assert r.status_code == 200, r.text
        partner = Partner(http, origin(proxy), "http://127.0.0.1:9/callback")
        assert partner.authorization_url.startswith(origin(proxy) + "/oauth/authorize?")
        loc = http.get(partner.authorization_url, allow_redirects=False, timeout=TIMEOUT).headers["Location"]
        params = callback_params(loc)
        assert params["iss"] == origin(proxy) == partner.metadata["issuer"]
        if decision == "approve":
            tokens = partner.exchange(partner.check(params))
            assert tokens.status_code == 200 and tokens.json()["access_token"], tokens.text
        else:
            assert params["error"] == "access_denied"
            with pytest.raises(RefusedCallback, match="access_denied"):
                partner.check(params)
    # straight to the sandbox: its own address
    direct = Partner(api.http, api.base, "http://127.0.0.1:9/callback")
    loc = api.http.get(direct.authorization_url, allow_redirects=False, timeout=TIMEOUT).headers["Location"]
    assert callback_params(loc)["iss"] == api.base


def test_a_consent_shown_through_the_proxy_and_decided_directly_fails_the_iss_check(proxy, api):
    """The iss is the origin of the request that decides: a form posted to the other name carries that name, and a
    client that discovered the proxy refuses it (as ProfirestApi does)."""
    http = https(proxy)
    partner = Partner(http, origin(proxy), "http://127.0.0.1:9/callback")
    page = http.get(partner.authorization_url, timeout=TIMEOUT)
    assert page.status_code == 200 and 'action="/_sandbox/consent"' in page.text  # relative: posted where it came from
    areq = page.text.split('name="request" value="', 1)[1].split('"', 1)[0]
    r = api.http.post(api.base + "/_sandbox/consent", data={"request": areq, "decision": "approve",
                                                            "restaurant_id": "11"}, allow_redirects=False)
    params = callback_params(r.headers["Location"])
    assert params["iss"] == api.base and params["code"]
    with pytest.raises(RefusedCallback, match="invalid_issuer"):
        partner.check(params)


def test_public_url_wins_through_the_proxy(proxy, api):
    api.admin("POST", "/config", {"public_url": "https://sandbox.example:9443"})
    assert_on(metadata(https(proxy), origin(proxy)), "https://sandbox.example:9443")
    assert_on(metadata(api.http, api.base), "https://sandbox.example:9443")
    # (the api fixture puts the default configuration, public_url null, back before the next test)


# ------------------------------------------------------------------------------------ consent in headless chromium


class CallbackServer:
    """The partner app's loopback redirect URI, http://127.0.0.1:<port>/callback: remembers each callback's query."""

    def __init__(self):
        self.received: queue.Queue[str] = queue.Queue()
        received = self.received

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                hit = urlsplit(self.path).path == "/callback"
                if hit:
                    received.put(self.path)
                body = b'<!doctype html><title>Moje aplikace</title><p id="done">ok</p>'
                self.send_response(200 if hit else 404)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.redirect_uri = f"http://127.0.0.1:{self.server.server_address[1]}/callback"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    async def next(self, timeout: float = BROWSER_WAIT) -> dict:
        path = await asyncio.get_running_loop().run_in_executor(None, lambda: self.received.get(timeout=timeout))
        return callback_params(path)

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def spki_pin(port: int, ca_file: str) -> str:
    """base64(sha256(SubjectPublicKeyInfo)) of the certificate the server on port presents (openssl, which the
    harness needs anyway, takes the key out of the certificate)."""
    context = ssl.create_default_context(cafile=ca_file)
    with socket.create_connection(("127.0.0.1", port), TIMEOUT) as raw, \
            context.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
        der = tls.getpeercert(binary_form=True)
    pem = subprocess.run(["openssl", "x509", "-inform", "DER", "-pubkey", "-noout"], input=der, capture_output=True,
                         check=True, timeout=TIMEOUT).stdout
    spki = subprocess.run(["openssl", "pkey", "-pubin", "-outform", "DER"], input=pem, capture_output=True,
                          check=True, timeout=TIMEOUT).stdout
    return base64.b64encode(hashlib.sha256(spki).digest()).decode()


async def wait_js(page, expression: str, timeout: float = BROWSER_WAIT):
    """page.wait_for that rides out a navigation (an evaluation in a page being replaced fails: try again)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            value = await page.js(expression)
            if value:
                return value
        except (AssertionError, asyncio.TimeoutError):
            pass
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {expression}")
        await asyncio.sleep(0.2)


def tampered(location: str, iss: str) -> str:
    parts = urlsplit(location)
    params = callback_params(location)
    params["iss"] = iss
    return urlunsplit(parts._replace(query=urlencode(params)))


def consent_in_chromium(proxy, partner: Partner, callbacks: CallbackServer, decision: str,
                        tamper_iss: str | None = None) -> tuple[dict, str | None]:
    """The owner's side in headless chromium: open the partner's authorization URL (through the proxy, HTTP/2),
    tick restaurant 11 when approving, click Approve or Deny; the browser follows the redirect to the partner's
    callback. With tamper_iss, the consent form's 302 is rewritten inside the browser (DevTools Fetch) before it
    is followed, its iss replaced: what a mix-up attacker would do. Answers the callback's parameters and the
    Location the sandbox itself sent when it was rewritten."""
    # Trust: --ignore-certificate-errors-spki-list with the proxy's own key only (works in headless mode, checked with
    # Chromium 156), not --ignore-certificate-errors: any other certificate still fails (see the `untrusted` check).
    pin = spki_pin(proxy.info["nginx"]["h2"], proxy.info["ca_file"])

    async def scenario():
        browser = Browser(f"--ignore-certificate-errors-spki-list={pin}")
        try:
            async with open_page(browser) as page:
                untrusted = await page.send("Page.navigate", url=origin(proxy, "untrusted") + "/admin")
                assert "CERT" in untrusted.get("errorText", ""), untrusted
                nav = await page.send("Page.navigate", url=partner.authorization_url)
                assert "errorText" not in nav, nav
                await wait_js(page, "document.readyState === 'complete' && document.getElementById('approve') !== null")
                assert await page.js("location.origin") == origin(proxy)
                assert await page.js("performance.getEntriesByType('navigation')[0].nextHopProtocol") == "h2"
                assert await page.js("document.getElementById('client').textContent") == "Moje aplikace"
                assert await page.js("document.querySelector('form').action") == origin(proxy) + "/_sandbox/consent"
                if tamper_iss:
                    await page.send("Fetch.enable", patterns=[{"urlPattern": "*/_sandbox/consent",
                                                               "requestStage": "Response"}])
                if decision == "approve":
                    await page.click('input[name="restaurant_id"][value="11"]')
                await page.click(f"#{decision}")
                original = None
                if tamper_iss:
                    paused = await page.event("Fetch.requestPaused", BROWSER_WAIT)
                    headers = paused["responseHeaders"]
                    original = next(h["value"] for h in headers if h["name"].lower() == "location")
                    headers = [h if h["name"].lower() != "location" else {"name": h["name"],
                                                                          "value": tampered(original, tamper_iss)}
                               for h in headers]
                    await page.send("Fetch.fulfillRequest", requestId=paused["requestId"],
                                    responseCode=paused["responseStatusCode"], responseHeaders=headers, body="")
                params = await callbacks.next()
                await wait_js(page, "document.getElementById('done') !== null")  # the browser is back at the app
                return params, original
        finally:
            browser.close()

    return asyncio.run(scenario())


@pytest.fixture
def callbacks():
    c = CallbackServer()
    yield c
    c.close()


def partner_grants(api) -> list[dict]:
    return [c for c in api.admin("GET", "/connections")["data"] if c["client_id"] == Partner.client_id]


def test_partner_consent_approved_in_chromium_through_the_proxy(proxy, api, callbacks):
    http = https(proxy)
    partner = Partner(http, origin(proxy), callbacks.redirect_uri)
    params, _ = consent_in_chromium(proxy, partner, callbacks, "approve")
    assert params["state"] == partner.state and params["code"]
    assert params["iss"] == origin(proxy) == partner.metadata["issuer"]
    tokens = partner.exchange(partner.check(params))
    assert tokens.status_code == 200, tokens.text
    body = tokens.json()
    assert body["access_token"] and body["refresh_token"] and set(body["scope"].split()) == set(SCOPE.split())
    conn = http.get(origin(proxy) + "/v2/connection", headers={"Authorization": "Bearer " + body["access_token"]},
                    timeout=TIMEOUT)
    assert conn.status_code == 200, conn.text
    assert conn.json()["kind"] == "partner" and [r["id"] for r in conn.json()["restaurants"]] == ["11"]
    [grant] = partner_grants(api)
    assert grant["issuer"] == origin(proxy)
    # the code is single-use
    assert partner.exchange(params["code"]).json()["error"] == "invalid_grant"


def test_partner_consent_denied_in_chromium_through_the_proxy(proxy, api, callbacks):
    partner = Partner(https(proxy), origin(proxy), callbacks.redirect_uri)
    params, _ = consent_in_chromium(proxy, partner, callbacks, "deny")
    assert params["error"] == "access_denied" and "code" not in params
    assert params["state"] == partner.state and params["iss"] == origin(proxy)
    with pytest.raises(RefusedCallback, match="access_denied"):  # the iss check passed; the answer is no
        partner.check(params)
    assert partner_grants(api) == []


def test_a_tampered_iss_is_refused_and_the_code_never_used(proxy, api, callbacks):
    partner = Partner(https(proxy), origin(proxy), callbacks.redirect_uri)
    params, original = consent_in_chromium(proxy, partner, callbacks, "approve", tamper_iss=api.base)
    sent = callback_params(original)
    assert sent["iss"] == origin(proxy)  # the sandbox said the proxy's origin …
    assert params["iss"] == api.base and params["code"] == sent["code"]  # … the callback arrived with another
    with pytest.raises(RefusedCallback, match="invalid_issuer"):
        partner.check(params)
    assert partner_grants(api) == []  # refused before the exchange: no connection was made
