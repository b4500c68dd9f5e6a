"""Contract validation of every request and response with openapi-core (the --validate / test mode).

A response that breaks the contract is a sandbox bug: it is logged loudly and answered as 500 internal_error, so
drift shows up in the client's integration tests instead of hiding. A 2xx answer to a request the contract calls
invalid is such a bug too."""
from __future__ import annotations

import json
import logging
import warnings
from typing import Any
from urllib.parse import urlsplit

from aiohttp import web
from multidict import CIMultiDict, MultiDict

from openapi_core import Config, OpenAPI
from openapi_core.datatypes import RequestParameters
from openapi_core.templating.paths.exceptions import OperationNotFound, PathNotFound, ServerNotFound
from openapi_core.validation.request.exceptions import SecurityValidationError

from . import contract

log = logging.getLogger("sandbox.contract")
# openapi-core does not check oauth2 itself (the handlers do): its warning about that is noise
warnings.filterwarnings("ignore", message="Unsupported scheme type")
SERVER = "https://api.mujprofirest.cz"

_openapi: OpenAPI | None = None


def _is_uri(value) -> bool:
    return not isinstance(value, str) or bool(urlsplit(value).scheme)


def openapi() -> OpenAPI:
    global _openapi
    if _openapi is None:
        config = Config(extra_media_type_deserializers={
            "application/problem+json": json.loads, "application/merge-patch+json": json.loads,
            # binary bodies ({"type": "string", "format": "binary"}): one character per byte, so maxLength counts bytes
            "application/zip": lambda data: data.decode("latin-1") if isinstance(data, bytes) else data},
            extra_format_validators={"uri": _is_uri}, extra_format_unmarshallers={"uri": str})
        _openapi = OpenAPI.from_dict(contract.spec(), config=config)
    return _openapi


class _Req:
    def __init__(self, request: web.Request, body: bytes | None):
        # Arrays are one comma-joined parameter (style form, explode false): openapi-core splits them itself.
        query = MultiDict(request.query)
        self.parameters = RequestParameters(query=query, header=CIMultiDict(request.headers), cookie=request.cookies)
        self.host_url = SERVER
        self.path = request.path
        self.method = request.method.lower()
        self.body = body
        self.content_type = request.headers.get("Content-Type", "").lower()


class _Resp:
    def __init__(self, resp: web.Response):
        self.status_code = resp.status
        self.headers = CIMultiDict(resp.headers)
        ct = resp.headers.get("Content-Type", "")
        self.content_type = ct.lower()
        body = resp.body
        self.data = body if isinstance(body, bytes) else (body.encode() if isinstance(body, str) else b"")


def _describe(errors: list[Any]) -> str:
    parts = []
    for e in errors:
        text = str(e)
        cause = getattr(e, "__cause__", None)
        subs = getattr(cause, "schema_errors", None) or getattr(e, "schema_errors", None)
        if subs:
            text += ": " + "; ".join(f"{'/'.join(map(str, s.absolute_path))}: {s.message}" for s in list(subs)[:5])
        elif cause:
            text += f": {cause}"
        parts.append(text)
    return " | ".join(parts)[:2000]


def check_request(request: web.Request, body: bytes | None) -> tuple[bool, str]:
    """(known operation, errors text ('' when valid)). Security problems are the handlers' job."""
    try:
        # the validators (not the unmarshallers, which are ~20× slower on big bodies) with every error
        errs = [e for e in openapi().request_validator.iter_errors(_Req(request, body))
                if not isinstance(e, SecurityValidationError)]
        if errs and isinstance(errs[0], (PathNotFound, OperationNotFound, ServerNotFound)):
            return False, ""
        return True, _describe(errs) if errs else ""
    except (PathNotFound, OperationNotFound, ServerNotFound):
        return False, ""
    except Exception as e:  # noqa: BLE001 — e.g. a body that is not UTF-8: invalid for the contract
        return True, f"the validator could not read the request: {type(e).__name__}"


def check_response(request: web.Request, body: bytes | None, resp: web.Response) -> str:
    try:
        errs = list(openapi().response_validator.iter_errors(_Req(request, body), _Resp(resp)))
        if errs and isinstance(errs[0], (PathNotFound, OperationNotFound, ServerNotFound)):
            return ""
        return _describe(errs) if errs else ""
    except (PathNotFound, OperationNotFound, ServerNotFound):
        return ""
    except Exception as e:  # noqa: BLE001
        return f"the validator could not read the response: {type(e).__name__}: {e}"[:500]
