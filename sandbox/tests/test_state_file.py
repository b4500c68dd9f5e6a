"""One state file for `make sandbox` and `make demo`: a device paired through the device flow stays paired when the
sandbox is stopped and started again on the same file, and `--fresh` starts clean."""
from __future__ import annotations

import requests

from .conftest import start_sandbox, stop


def _pair_device(base: str) -> dict:
    """What a terminal does: a code, a manager's approval (admin API), the device's token request."""
    started = requests.post(base + "/oauth/device_authorization", timeout=10, data={
        "client_id": "profirest-dochazka", "scope": "restaurants:read attendance:read", "device_name": "Test"}).json()
    r = requests.post(base + f"/_sandbox/pairings/{started['user_code']}/approve", json={"restaurant_id": "11"},
                      timeout=10)
    assert r.status_code < 300, r.text
    r = requests.post(base + "/oauth/token", timeout=10, data={
        "grant_type": "urn:ietf:params:oauth:grant-type:device_code", "device_code": started["device_code"],
        "client_id": "profirest-dochazka"})
    assert r.status_code == 200, r.text
    return r.json()


def _connection(base: str, token: str) -> requests.Response:
    return requests.get(base + "/v2/connection", headers={"Authorization": "Bearer " + token}, timeout=10)


def test_a_paired_device_stays_paired_across_a_restart_and_fresh_forgets_it(tmp_path):
    db = str(tmp_path / "state.sqlite3")
    proc, ready = start_sandbox("--poll-interval", "0", db=db)
    try:
        tokens = _pair_device(ready["api"])
        assert _connection(ready["api"], tokens["access_token"]).status_code == 200
    finally:
        stop(proc)

    proc, ready = start_sandbox(db=db)  # the same file, as `make sandbox` after `make demo` (or the other way)
    try:
        r = _connection(ready["api"], tokens["access_token"])
        assert r.status_code == 200 and r.json()["restaurant_id"] == "11", r.text
        refreshed = requests.post(ready["api"] + "/oauth/token", timeout=10, data={
            "grant_type": "refresh_token", "refresh_token": tokens["refresh_token"], "client_id": "profirest-dochazka"})
        assert refreshed.status_code == 200, refreshed.text
        devices = requests.get(ready["api"] + "/_sandbox/devices", timeout=10).json()["data"]
        assert [d["client_id"] for d in devices].count("profirest-dochazka") == 1, "no ghost device"
        tokens = refreshed.json()
    finally:
        stop(proc)

    proc, ready = start_sandbox("--fresh", db=db)
    try:
        r = _connection(ready["api"], tokens["access_token"])
        assert r.status_code == 401, r.text
    finally:
        stop(proc)
