"""OAuth: device pairing, refresh rotation, revocation, unpairing, expiry, authorization code + PKCE, client auth."""
import base64
import hashlib
import html
import re
import secrets
import time
from urllib.parse import parse_qs, urlsplit


DEVICE = "urn:ietf:params:oauth:grant-type:device_code"
SCOPE = "restaurants:read staff:read staff:authenticate attendance:read attendance:punch"


def start_pairing(api, client_id="profirest-dochazka"):
    r = api.form("/oauth/device_authorization", {"client_id": client_id, "scope": SCOPE, "device_name": "Píchačka",
                                                 "device_platform": "linux", "app_version": "1.0.0"})
    assert r.status_code == 200, r.text
    return r.json()


def poll(api, dc, client_id="profirest-dochazka"):
    return api.form("/oauth/token", {"grant_type": DEVICE, "device_code": dc, "client_id": client_id})


def test_metadata(api):
    m = api.call("GET", "/.well-known/oauth-authorization-server").json()
    assert m["issuer"] == api.base and m["code_challenge_methods_supported"] == ["S256"]
    assert m["authorization_response_iss_parameter_supported"] is True


def test_device_flow_pending_slow_down_approve(api):
    api.admin("POST", "/config", {"poll_interval": 1, "slow_down_increment": 1})
    d = start_pairing(api)
    assert d["interval"] == 1 and d["expires_in"] == 600
    assert d["verification_uri_complete"].endswith("?code=" + d["user_code"])
    assert poll(api, d["device_code"]).json()["error"] == "authorization_pending"
    r = poll(api, d["device_code"])  # at once: faster than the interval
    assert r.status_code == 400 and r.json()["error"] == "slow_down"
    assert [p["user_code"] for p in api.admin("GET", "/pairings")["data"]] == [d["user_code"]]
    api.admin("POST", f"/pairings/{d['user_code']}/approve", {"restaurant_id": "11"})
    r = poll(api, d["device_code"])
    assert r.json()["error"] == "slow_down"  # still too fast for the grown interval
    time.sleep(3.05)  # the interval is now 1 + 1 + 1 s
    r = poll(api, d["device_code"])
    tok = r.json()
    assert r.status_code == 200 and r.headers["Cache-Control"] == "no-store"
    assert tok["restaurant_id"] == "11" and tok["device_id"].startswith("dev_") and tok["expires_in"] == 1800
    conn = api.call("GET", "/v2/connection", tok["access_token"]).json()
    assert conn["kind"] == "device" and conn["device"]["name"] == "Píchačka" and conn["restaurant_id"] == "11"
    assert poll(api, d["device_code"]).json()["error"] == "invalid_grant"  # a code pairs once
    assert api.admin("GET", "/stats")["slow_downs"] == 2


def test_omit_members_leaves_out_what_the_rfcs_make_optional(api):
    assert api.call("POST", "/_sandbox/config", json_body={"omit_members": ["token_type"]}).status_code == 400
    api.admin("POST", "/config", {"omit_members": ["scope", "expires_in", "refresh_token", "verification_uri_complete",
                                                   "interval"]})
    d = start_pairing(api)
    assert "verification_uri_complete" not in d and "interval" not in d and d["verification_uri"]
    assert poll(api, d["device_code"]).json()["error"] == "authorization_pending"
    api.admin("POST", f"/pairings/{d['user_code']}/approve", {"restaurant_id": "11"})
    time.sleep(5.05)  # without interval in the answer, 5 s (RFC 8628 3.2)
    tok = poll(api, d["device_code"]).json()
    assert tok["token_type"] == "Bearer" and "scope" not in tok and "expires_in" not in tok
    assert tok["refresh_token"], "a pairing still hands out its refresh token"
    form = {"grant_type": "refresh_token", "refresh_token": tok["refresh_token"], "client_id": "profirest-dochazka"}
    first = api.form("/oauth/token", form).json()
    assert "refresh_token" not in first and "scope" not in first and "expires_in" not in first
    # Not rotated: the refresh token the client keeps goes on working.
    second = api.form("/oauth/token", form).json()
    assert second["access_token"] != first["access_token"]
    assert api.call("GET", "/v2/connection", second["access_token"]).status_code == 200


def test_device_flow_denied_and_expired(api):
    api.admin("POST", "/config", {"poll_interval": 0, "device_code_ttl": 1})
    d = start_pairing(api)
    api.admin("POST", f"/pairings/{d['user_code']}/deny")
    assert poll(api, d["device_code"]).json()["error"] == "access_denied"
    d2 = start_pairing(api)
    time.sleep(1.1)
    assert poll(api, d2["device_code"]).json()["error"] == "expired_token"


def test_device_flow_rejects_partner_clients_and_unknown_scopes(api):
    r = api.form("/oauth/device_authorization", {"client_id": "moje-aplikace", "scope": "restaurants:read"})
    assert r.json()["error"] == "unauthorized_client"
    r = api.form("/oauth/device_authorization", {"client_id": "profirest-pos", "scope": "admin:everything"})
    assert r.json()["error"] == "invalid_scope"
    r = api.form("/oauth/device_authorization", {"client_id": "nobody", "scope": "restaurants:read"})
    assert r.status_code == 401 and r.json()["error"] == "invalid_client"


def test_refresh_rotates_and_reuse_is_invalid_grant(api):
    tok = api.token("profirest-kds")
    form = {"grant_type": "refresh_token", "refresh_token": tok["refresh_token"], "client_id": "profirest-kds"}
    r = api.form("/oauth/token", form)
    new = r.json()
    assert r.status_code == 200 and new["refresh_token"] != tok["refresh_token"] and new["device_id"] == tok["device_id"]
    # A retry whose answer was lost, within the grace window and before the new token was used: the same answer.
    again = api.form("/oauth/token", form).json()
    assert again["refresh_token"] == new["refresh_token"] and again["access_token"] == new["access_token"]
    # Once the new refresh token has been used, the old one is spent for good.
    newer = api.form("/oauth/token", dict(form, refresh_token=new["refresh_token"])).json()
    assert api.form("/oauth/token", form).json()["error"] == "invalid_grant"
    stats = api.admin("GET", "/stats")
    assert stats["token_refreshes"] == {"profirest-kds": 2} and stats["refresh_reuse"] == 1 and stats["refresh_replays"] == 1
    assert api.call("GET", "/v2/connection", newer["access_token"]).status_code == 200


def test_refresh_reuse_after_the_grace_window_is_invalid_grant(api):
    api.admin("POST", "/config", {"refresh_grace": 0})
    tok = api.token("profirest-kds")
    form = {"grant_type": "refresh_token", "refresh_token": tok["refresh_token"], "client_id": "profirest-kds"}
    assert api.form("/oauth/token", form).status_code == 200
    import time
    time.sleep(0.05)
    assert api.form("/oauth/token", form).json()["error"] == "invalid_grant"


def test_expire_tokens_now_then_refresh(api):
    tok = api.token()
    api.admin("POST", "/tokens/expire", {})
    r = api.call("GET", "/v2/connection", tok["access_token"])
    assert r.status_code == 401 and r.json()["code"] == "invalid_token"
    assert "invalid_token" in r.headers["WWW-Authenticate"]
    new = api.form("/oauth/token", {"grant_type": "refresh_token", "refresh_token": tok["refresh_token"],
                                    "client_id": "profirest-pos"}).json()
    assert api.call("GET", "/v2/connection", new["access_token"]).status_code == 200


def test_short_access_token_ttl(api):
    api.admin("POST", "/config", {"access_token_ttl": 1})
    tok = api.token()
    assert tok["expires_in"] == 1
    time.sleep(1.1)
    assert api.call("GET", "/v2/connection", tok["access_token"]).status_code == 401


def test_unpair_fails_tokens_at_once(api):
    tok = api.token()
    api.admin("DELETE", f"/devices/{tok['device_id']}")
    assert api.call("GET", "/v2/connection", tok["access_token"]).json()["code"] == "invalid_token"
    r = api.form("/oauth/token", {"grant_type": "refresh_token", "refresh_token": tok["refresh_token"],
                                  "client_id": "profirest-pos"})
    assert r.json()["error"] == "invalid_grant"


def test_unpair_through_the_api_and_delete_connection(api):
    manager = api.token()
    other = api.token("profirest-kds")
    assert {d["id"] for d in api.call("GET", "/v2/restaurants/11/devices", manager["access_token"]).json()["data"]} \
        == {manager["device_id"], other["device_id"]}
    assert api.call("DELETE", f"/v2/restaurants/11/devices/{other['device_id']}", manager["access_token"]).status_code == 204
    assert api.call("GET", "/v2/connection", other["access_token"]).status_code == 401
    assert api.call("DELETE", "/v2/connection", manager["access_token"]).status_code == 204
    assert api.call("GET", "/v2/connection", manager["access_token"]).status_code == 401


def test_revoke_refresh_token_unpairs(api):
    tok = api.token("profirest-kuryr")
    r = api.form("/oauth/revoke", {"token": tok["refresh_token"], "token_type_hint": "refresh_token",
                                   "client_id": "profirest-kuryr"})
    assert r.status_code == 200 and r.content == b""
    assert api.call("GET", "/v2/connection", tok["access_token"]).status_code == 401
    assert api.form("/oauth/revoke", {"token": "unknown", "client_id": "profirest-kuryr"}).status_code == 200


def pkce():
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
    return verifier, challenge


def authorize_params(client_id="moje-aplikace", redirect="mojeaplikace://profirest", challenge="", state=None):
    return {"response_type": "code", "client_id": client_id, "redirect_uri": redirect,
            "scope": "restaurants:read orders:read", "state": state or secrets.token_urlsafe(16),
            "code_challenge": challenge, "code_challenge_method": "S256"}


def test_authorization_code_with_pkce_state_and_iss(api):
    api.admin("POST", "/consents/auto", {"decision": "approve", "restaurant_ids": ["11", "12"]})
    verifier, challenge = pkce()
    params = authorize_params(challenge=challenge)
    r = api.call("GET", "/oauth/authorize", params=params, allow_redirects=False)
    assert r.status_code == 302
    q = parse_qs(urlsplit(r.headers["Location"]).query)
    assert q["state"] == [params["state"]] and q["iss"] == [api.base]
    r = api.form("/oauth/token", {"grant_type": "authorization_code", "code": q["code"][0], "client_id": "moje-aplikace",
                                  "redirect_uri": params["redirect_uri"], "code_verifier": "x" * 43})
    assert r.json()["error"] == "invalid_grant"  # wrong verifier burns the code
    r = api.call("GET", "/oauth/authorize", params=params, allow_redirects=False)
    code = parse_qs(urlsplit(r.headers["Location"]).query)["code"][0]
    tok = api.form("/oauth/token", {"grant_type": "authorization_code", "code": code, "client_id": "moje-aplikace",
                                    "redirect_uri": params["redirect_uri"], "code_verifier": verifier}).json()
    conn = api.call("GET", "/v2/connection", tok["access_token"]).json()
    assert conn["kind"] == "partner" and conn["restaurant_id"] is None
    assert [x["id"] for x in conn["restaurants"]] == ["11", "12"]
    assert api.call("GET", "/v2/restaurants/11/orders", tok["access_token"]).status_code == 200
    assert api.call("GET", "/v2/restaurants/11/staff", tok["access_token"]).json()["code"] == "insufficient_scope"


def test_authorization_denied_and_bad_requests(api):
    api.admin("POST", "/consents/auto", {"decision": "deny"})
    _, challenge = pkce()
    params = authorize_params(challenge=challenge, redirect="http://127.0.0.1:5555/cb")
    r = api.call("GET", "/oauth/authorize", params=params, allow_redirects=False)
    q = parse_qs(urlsplit(r.headers["Location"]).query)
    assert r.headers["Location"].startswith("http://127.0.0.1:5555/cb?")
    assert q["error"] == ["access_denied"] and q["iss"] == [api.base] and q["state"] == [params["state"]]
    bad = api.call("GET", "/oauth/authorize", params={**params, "redirect_uri": "https://evil.example/cb"},
                   allow_redirects=False)
    assert bad.status_code == 400 and bad.headers["Content-Type"].startswith("text/html")
    r = api.call("GET", "/oauth/authorize", params={**params, "code_challenge_method": "plain"}, allow_redirects=False)
    assert parse_qs(urlsplit(r.headers["Location"]).query)["error"] == ["invalid_request"]


def consent_page(api, **kw):
    _, challenge = pkce()
    params = {**authorize_params(challenge=challenge, redirect="http://localhost:9999/done"), **kw}
    page = api.call("GET", "/oauth/authorize", params=params, allow_redirects=False)
    assert page.status_code == 200 and page.headers["Content-Type"].startswith("text/html"), page.text
    return params, page.text, page.text.split('name="request" value="')[1].split('"')[0]


def decide(api, areq, decision="approve", restaurant_ids=()):
    return api.http.post(api.base + "/_sandbox/consent", allow_redirects=False,
                         data={"request": areq, "decision": decision, "restaurant_id": list(restaurant_ids)})


def test_consent_page_form(api):
    params, _, areq = consent_page(api)
    r = decide(api, areq, restaurant_ids=["11"])
    assert r.status_code == 302 and "code=" in r.headers["Location"]
    assert decide(api, areq, restaurant_ids=["11"]).status_code == 400  # a decision is made once


def test_consent_page_shows_scope_descriptions_from_the_contract(api):
    _, text, _ = consent_page(api, scope="restaurants:read orders:read orders:write")
    assert "Číst provozovny / Read restaurants" in text and "Číst objednávky / Read orders" in text
    assert "Vytvářet kalkulace a objednávky, měnit jejich stav / Create quotes and orders, change their status" in text
    from sandbox import contract
    described = contract.scope_descriptions()
    assert set(described) == set(contract.all_scopes())
    assert all(" / " in d for d in described.values())  # every scope has a Czech and an English description


def test_consent_page_shows_the_clients_name(api):
    _, text, _ = consent_page(api)
    assert "Moje aplikace" in text and "moje-aplikace" not in text
    _, text, _ = consent_page(api, client_id="sandbox-eshop")
    assert "Sandbox e-shop" in text and "sandbox-eshop" not in text
    from sandbox.clients import client_name
    assert client_name("profirest-pos") == "profirest-pos"  # no display name: the id


def test_consent_page_ticks_no_restaurant(api):
    _, text, _ = consent_page(api)
    boxes = re.findall(r'<input[^>]*name="restaurant_id"[^>]*>', text)
    assert len(boxes) == 2 and not any("checked" in box for box in boxes), boxes


def test_consent_approved_with_no_restaurant_asks_again(api):
    params, _, areq = consent_page(api)
    for chosen in ([], ["99"]):  # none, or only one that does not exist
        r = decide(api, areq, restaurant_ids=chosen)
        assert r.status_code == 200 and "Location" not in r.headers
        assert "Vyberte aspoň jednu provozovnu / Choose at least one restaurant" in r.text
        assert f'name="request" value="{areq}"' in r.text  # the same request, still waiting
    r = decide(api, areq, restaurant_ids=["12"])
    q = parse_qs(urlsplit(r.headers["Location"]).query)
    assert r.status_code == 302 and q["code"] and q["state"] == [params["state"]]
    _, _, areq = consent_page(api)
    q = parse_qs(urlsplit(decide(api, areq, "deny").headers["Location"]).query)
    assert q["error"] == ["access_denied"]  # denying needs no restaurant


def test_unknown_scope_redirect_carries_the_detail(api):
    _, challenge = pkce()
    params = {**authorize_params(challenge=challenge), "scope": "orders:read admin:everything"}
    r = api.call("GET", "/oauth/authorize", params=params, allow_redirects=False)
    assert r.status_code == 302
    q = parse_qs(urlsplit(r.headers["Location"]).query)
    assert q["error"] == ["invalid_scope"] and q["error_description"] == ["Unknown scopes: admin:everything"]
    assert q["state"] == [params["state"]] and q["iss"] == [api.base]


def test_consent_page_escapes_what_it_shows(api):
    redirect = "http://127.0.0.1:5555/cb?a=1&b='x'"
    _, text, _ = consent_page(api, redirect_uri=redirect)
    assert html.escape(redirect) in text and redirect not in text
    r = api.call("GET", "/oauth/authorize", allow_redirects=False,
                 params={**authorize_params(challenge="c" * 43), "client_id": "<b>x</b>"})
    assert r.status_code == 400 and "&lt;b&gt;x&lt;/b&gt;" in r.text and "<b>x</b>" not in r.text


def test_confidential_client_basic_auth(api):
    api.admin("POST", "/consents/auto", {"decision": "approve"})
    verifier, challenge = pkce()
    params = authorize_params("sandbox-eshop", "http://127.0.0.1:8000/callback", challenge)
    loc = api.call("GET", "/oauth/authorize", params=params, allow_redirects=False).headers["Location"]
    code = parse_qs(urlsplit(loc).query)["code"][0]
    fields = {"grant_type": "authorization_code", "code": code, "redirect_uri": params["redirect_uri"],
              "code_verifier": verifier}
    r = api.form("/oauth/token", {**fields, "client_id": "sandbox-eshop"})
    assert r.status_code == 401 and r.json()["error"] == "invalid_client"
    r = api.form("/oauth/token", {**fields, "client_secret": "sandbox-secret", "client_id": "sandbox-eshop"})
    assert r.json()["error"] == "invalid_request"
    r = api.form("/oauth/token", fields, auth=("sandbox-eshop", "wrong"))
    assert r.status_code == 401 and r.json()["error"] == "invalid_client"
    tok = api.form("/oauth/token", fields, auth=("sandbox-eshop", "sandbox-secret")).json()
    assert "access_token" in tok
    r = api.form("/oauth/token", {"grant_type": "refresh_token", "refresh_token": tok["refresh_token"]},
                 auth=("sandbox-eshop", "sandbox-secret"))
    assert r.status_code == 200 and "refresh_token" not in r.json()  # confidential: keep the old one
    assert api.form("/oauth/token", {"grant_type": "refresh_token", "refresh_token": tok["refresh_token"]},
                    auth=("sandbox-eshop", "sandbox-secret")).status_code == 200


def test_token_endpoint_rejects_bad_forms(api):
    r = api.call("POST", "/oauth/token", json_body={"grant_type": "refresh_token"})
    assert r.status_code == 400 and r.json()["error"] == "invalid_request"
    r = api.form("/oauth/token", {"grant_type": "password", "client_id": "profirest-pos"})
    assert r.json()["error"] == "invalid_request"
