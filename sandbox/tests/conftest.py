"""One sandbox process per test session (validating every request and response against the contract);
each test starts from the seed data."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import requests

REPO = Path(__file__).resolve().parents[2]


def start_sandbox(*extra: str, db: str = ":memory:", validate: bool = True) -> tuple[subprocess.Popen, dict]:
    proc = subprocess.Popen([sys.executable, "-W", "ignore", "-m", "sandbox", "serve", "--port", "0", "--db", db,
                             *(["--validate"] if validate else []), "--quiet", *extra], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=open(os.environ.get("SANDBOX_TEST_LOG", os.devnull), "ab"), text=True)
    line = proc.stdout.readline()
    ready = json.loads(line)
    assert ready["sandbox"] == "ready", line
    return proc, ready


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(5)
    except subprocess.TimeoutExpired:
        proc.kill()


class Api:
    def __init__(self, base: str):
        self.base = base
        self.http = requests.Session()

    def admin(self, method: str, path: str, body: dict | None = None) -> dict:
        r = self.http.request(method, self.base + "/_sandbox" + path, json=body if body is not None else None)
        assert r.status_code < 300, (r.status_code, r.text)
        return r.json()

    def token(self, client_id: str = "profirest-pos", restaurant_id: str = "11", scopes=None, **kw) -> dict:
        return self.admin("POST", "/tokens", {"client_id": client_id, "restaurant_id": restaurant_id,
                                              "scopes": scopes, **kw})

    def call(self, method: str, path: str, token: str | None = None, json_body=None, headers=None,
             data=None, lang: str | None = None, session=None, **kw) -> requests.Response:
        h = dict(headers or {})
        if token:
            h["Authorization"] = "Bearer " + token
        if lang:
            h["Accept-Language"] = lang
        http = session or self.http
        return http.request(method, self.base + path, json=json_body, data=data, headers=h, timeout=30, **kw)

    def form(self, path: str, fields: dict, auth=None) -> requests.Response:
        return self.http.post(self.base + path, data=fields, auth=auth, timeout=30)


@pytest.fixture(scope="session")
def sandbox():
    proc, ready = start_sandbox()
    yield ready
    stop(proc)


@pytest.fixture(scope="session")
def default_config(sandbox):
    return requests.get(sandbox["api"] + "/_sandbox/config").json()


@pytest.fixture
def api(sandbox, default_config) -> Api:
    a = Api(sandbox["api"])
    a.admin("POST", "/reset", {})
    a.admin("POST", "/config", default_config)
    yield a
    stats = a.admin("GET", "/stats")
    assert stats["contract_violations"] == 0, "the sandbox broke its contract; see SANDBOX_TEST_LOG"


@pytest.fixture
def pos(api) -> str:
    """An access token of a register paired to restaurant 11 with every scope."""
    return api.token()["access_token"]


def pytest_configure(config):
    # openapi-core leaves oauth2 to the handlers and warns about it
    config.addinivalue_line("filterwarnings", "ignore:Unsupported scheme type:UserWarning")
