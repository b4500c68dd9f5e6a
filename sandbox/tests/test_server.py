"""Start-up, problem+json errors, languages, bodies, scopes and the request log."""
import json
import subprocess
import sys

from .conftest import REPO, start_sandbox, stop


def test_first_stdout_line_is_machine_readable():
    proc, ready = start_sandbox()
    try:
        assert ready["api"].startswith("http://127.0.0.1:")
        assert ready["admin"] == ready["api"] + "/admin"
        assert ready["pid"] == proc.pid
    finally:
        stop(proc)


def test_problem_shape_request_id_and_languages(api):
    r = api.call("GET", "/v2/restaurants")
    assert r.status_code == 401
    assert r.headers["Content-Type"].startswith("application/problem+json")
    body = r.json()
    assert body["type"] == "https://api.mujprofirest.cz/problems/invalid_token"
    assert body["code"] == "invalid_token" and body["status"] == 401
    assert body["title"] == "Neplatný nebo prošlý token"  # Czech by default
    assert body["request_id"] == r.headers["Profirest-Request-Id"]
    en = api.call("GET", "/v2/restaurants", lang="en-US,en;q=0.9").json()
    assert en["title"] == "Invalid or expired token"
    assert api.call("GET", "/v2/restaurants", lang="de, en;q=0.5, cs;q=0.8").json()["title"].startswith("Neplatný")


def test_titles_come_from_the_contract_catalog(api):
    catalog = {e["code"]: e for e in json.load(open(REPO / "contract/profirest-v2.openapi.json"))["x-error-catalog"]}
    body = api.call("GET", "/v2/nothing-here", lang="en").json()
    assert body["code"] == "not_found" and body["title"] == catalog["not_found"]["title"]["en"]


def test_unknown_path_and_method(api, pos):
    assert api.call("GET", "/v2/nope", pos).json()["code"] == "not_found"
    r = api.call("PUT", "/v2/restaurants", pos)
    assert r.status_code == 405 and r.json()["code"] == "method_not_allowed"


def test_scopes_and_restaurants_enforced(api):
    t = api.token(scopes=["restaurants:read"])["access_token"]
    r = api.call("GET", "/v2/restaurants/11/staff", t)
    assert r.status_code == 403 and r.json()["code"] == "insufficient_scope"
    assert api.call("GET", "/v2/restaurants/11", t).status_code == 200
    r = api.call("GET", "/v2/restaurants/12", t)
    assert r.status_code == 403 and r.json()["code"] == "restaurant_forbidden"
    assert api.call("GET", "/v2/restaurants/99", t).json()["code"] == "not_found"


def test_malformed_bodies_are_catalog_errors(api, pos):
    path = "/v2/restaurants/11/staff/sessions"
    r = api.call("POST", path, pos, data=b"{not json", headers={"Content-Type": "application/json"})
    assert r.status_code == 400 and r.json()["code"] == "invalid_json"
    r = api.call("POST", path, pos, data=b"method=pin", headers={"Content-Type": "text/plain"})
    assert r.status_code == 415 and r.json()["code"] == "unsupported_media_type"
    r = api.call("POST", path, pos, json_body={"method": "pin", "secret": "1234", "extra": 1})
    assert r.status_code == 422
    assert {"pointer": "/extra", "code": "unknown_field"}.items() <= r.json()["errors"][0].items()
    r = api.call("POST", path, pos, json_body={"method": "face"})
    codes = {(e["pointer"], e["code"]) for e in r.json()["errors"]}
    assert codes == {("/method", "enum"), ("/secret", "required")}
    big = b'{"method": "pin", "secret": "' + b"1" * (1024 * 1024 + 10) + b'"}'
    r = api.call("POST", path, pos, data=big, headers={"Content-Type": "application/json"})
    assert r.status_code == 413 and r.json()["code"] == "payload_too_large"


def test_bad_cursor_and_limit(api, pos):
    r = api.call("GET", "/v2/restaurants/11/staff?cursor=made-up", pos)
    assert r.status_code == 400 and r.json()["code"] == "cursor_invalid"
    r = api.call("GET", "/v2/restaurants/11/staff?limit=101", pos)
    assert r.status_code == 422 and r.json()["errors"][0]["pointer"] == "?limit"


def test_paging_walks_every_item(api, pos):
    seen, cursor = [], None
    while True:
        r = api.call("GET", "/v2/restaurants/11/staff", pos, params={"limit": 2, **({"cursor": cursor} if cursor else {})})
        page = r.json()
        seen += [s["id"] for s in page["data"]]
        cursor = page.get("next_cursor")
        if not cursor:
            break
    assert seen == ["emp_1", "emp_2", "emp_3", "emp_4", "emp_5"]


def test_request_log_redacts_credentials(api, pos):
    api.call("GET", "/v2/connection", pos, headers={"Idempotency-Key": "k-1", "Profirest-Staff-Token": "st_secret"},
             lang="en")
    row = api.admin("GET", "/requests?limit=1")["data"][-1]
    h = {k.lower(): v for k, v in row["headers"].items()}
    assert h["authorization"] == "Bearer <redacted>"
    assert h["profirest-staff-token"] == "<redacted>"
    assert h["idempotency-key"] == "k-1" and h["accept-language"] == "en"
    assert pos not in json.dumps(api.admin("GET", "/requests?limit=500"))
    assert api.admin("GET", "/stats")["requests"]["GET /v2/connection"] == 1


def test_cli_talks_to_a_running_sandbox(api, sandbox):
    out = subprocess.run([sys.executable, "-m", "sandbox", "devices", "--url", sandbox["api"]], cwd=REPO,
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 0


def test_restart_keeps_state_on_the_same_port(api, pos):
    api.admin("POST", "/restart", {"down_ms": 100})
    import time
    for _ in range(50):
        time.sleep(0.1)
        try:
            r = api.call("GET", "/v2/connection", pos, session=__import__("requests").Session())
            if r.status_code == 200:
                break
        except Exception:  # noqa: BLE001
            continue
    assert r.status_code == 200


def test_file_database_keeps_pairings_across_processes(tmp_path):
    import requests
    db = str(tmp_path / "state.sqlite3")
    proc, ready = start_sandbox(db=db)
    try:
        tok = requests.post(ready["api"] + "/_sandbox/tokens", json={}).json()["access_token"]
    finally:
        stop(proc)
    proc, ready = start_sandbox(db=db)
    try:
        r = requests.get(ready["api"] + "/v2/connection", headers={"Authorization": "Bearer " + tok})
        assert r.status_code == 200
    finally:
        stop(proc)


def test_not_acceptable(api, pos):
    r = api.call("GET", "/v2/restaurants", pos, headers={"Accept": "text/html"})
    assert r.status_code == 406 and r.json()["code"] == "not_acceptable"
    assert api.call("GET", "/v2/restaurants", pos, headers={"Accept": "application/*;q=0.8, text/html"}).status_code == 200
    assert api.call("GET", "/v2/restaurants/11/backups", pos, headers={"Accept": "*/*"}).status_code == 200


def test_without_validation_the_rules_hold_too():
    import requests
    proc, ready = start_sandbox(validate=False)
    try:
        base = ready["api"]
        tok = requests.post(base + "/_sandbox/tokens", json={}).json()["access_token"]
        h = {"Authorization": "Bearer " + tok, "Content-Type": "application/json"}
        path = base + "/v2/restaurants/11/staff/sessions"
        assert requests.post(path, data=b"{", headers=h).json()["code"] == "invalid_json"
        big = b'{"method": "pin", "secret": "' + b"1" * (1024 * 1024) + b'"}'
        assert requests.post(path, data=big, headers=h).json()["code"] == "payload_too_large"
        assert requests.post(path, data=b'{"method": "pin", "secret": "1234"}', headers=h).status_code == 201
    finally:
        stop(proc)


def test_cli_approves_a_code(api, sandbox):
    d = api.form("/oauth/device_authorization", {"client_id": "profirest-pos", "scope": "restaurants:read"}).json()
    out = subprocess.run([sys.executable, "-m", "sandbox", "approve", d["user_code"].lower().replace("-", ""),
                          "--restaurant", "12", "--url", sandbox["api"]], cwd=REPO, capture_output=True, text=True,
                         timeout=30)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["status"] == "approved"
    tok = api.form("/oauth/token", {"grant_type": "urn:ietf:params:oauth:grant-type:device_code",
                                    "device_code": d["device_code"], "client_id": "profirest-pos"}).json()
    assert tok["restaurant_id"] == "12"
    out = subprocess.run([sys.executable, "-m", "sandbox", "approve", "BBBB-CCCC", "--url", sandbox["api"]], cwd=REPO,
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 1


def test_an_undrained_stderr_pipe_never_blocks_the_server():
    import requests
    proc = subprocess.Popen([sys.executable, "-m", "sandbox", "serve", "--port", "0", "--db", ":memory:"], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # stderr is never read
    try:
        base = json.loads(proc.stdout.readline())["api"]
        http = requests.Session()
        for _ in range(1500):  # ~250 KB of access log, far beyond a pipe's 64 KB buffer
            assert http.get(base + "/v2/connection?" + "x" * 120, timeout=5).status_code == 401
    finally:
        stop(proc)


def test_stops_on_sigterm_and_when_stdin_closes():
    import signal
    import subprocess
    import sys

    cmd = [sys.executable, "-m", "sandbox", "serve", "--port", "0", "--db", ":memory:", "--quiet"]
    # SIGTERM ends it even when the parent started it with the signal blocked (XCTest's Process does, on Linux).
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            preexec_fn=lambda: signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM}))
    assert '"ready"' in proc.stdout.readline()
    proc.terminate()
    assert proc.wait(timeout=5) == 0
    # A test run that dies leaves no sandbox behind: its end of stdin closes.
    proc = subprocess.Popen(cmd + ["--exit-on-stdin-eof"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    assert '"ready"' in proc.stdout.readline()
    proc.stdin.close()
    assert proc.wait(timeout=5) == 0


def test_every_contract_operation_is_served_at_its_path():
    """The routes of @operation handlers come from the contract: each operationId is served at its method and path,
    by the handler that names it (or, for the current staff session, by the one handler both its operations share)."""
    from sandbox import contract
    from sandbox.server import make_app
    from sandbox.state import Sandbox

    app = make_app(Sandbox())
    served = {(route.method, route.resource.canonical): route.handler for route in app.router.routes()
              if route.resource is not None}
    for operation_id, where in contract.operations().items():
        handler = served.get((where["method"], where["path"]))
        assert handler is not None, f"{operation_id}: {where['method']} {where['path']} has no route"
        named = getattr(handler, "operation_id", None)
        assert named in (operation_id, None), f"{operation_id} is served by the handler of {named}"
