"""The contract validator itself: it must see drift, or the 500-on-violation rule protects nothing."""
import json

from aiohttp import web
from multidict import CIMultiDict, MultiDict

from sandbox import validation


class FakeRequest:
    def __init__(self, method, path, query=None, headers=None):
        self.method, self.path, self.cookies = method, path, {}
        self.query = MultiDict(query or {})
        self.headers = CIMultiDict({"Authorization": "Bearer x", **(headers or {})})


def test_a_response_missing_a_required_field_is_a_violation():
    req = FakeRequest("GET", "/v2/restaurants/11")
    good = web.Response(body=json.dumps({"id": "11", "name": "Bistro", "timezone": "Europe/Prague",
                                         "currency": "CZK"}).encode(), content_type="application/json")
    assert validation.check_response(req, None, good) == ""
    bad = web.Response(body=json.dumps({"id": "11", "name": "Bistro", "currency": "CZK", "extra": 1}).encode(),
                       content_type="application/json")
    assert "timezone" in validation.check_response(req, None, bad)
    problem = web.Response(body=json.dumps({"type": "https://api.mujprofirest.cz/problems/not_found", "title": "x",
                                            "status": 404, "code": "not_found"}).encode(),
                           content_type="application/problem+json", status=404)
    assert "request_id" in validation.check_response(req, None, problem)


def test_request_errors_and_comma_separated_arrays():
    known, errors = validation.check_request(FakeRequest("GET", "/v2/events", {"types": "order.created,tab.updated"}), None)
    assert known and errors == ""
    known, errors = validation.check_request(FakeRequest("GET", "/v2/events", {"limit": "500"}), None)
    assert known and "limit" in errors
    known, _ = validation.check_request(FakeRequest("GET", "/v2/not-in-the-contract"), None)
    assert not known
