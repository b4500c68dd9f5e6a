"""The contract, loaded once: the OpenAPI document, the error catalog and JSON Schema validators of its schemas."""
from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any

from jsonschema import Draft202012Validator, FormatChecker
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from . import CONTRACT_PATH

_FORMATS = FormatChecker()


@lru_cache(maxsize=1)
def spec() -> dict[str, Any]:
    with open(CONTRACT_PATH, encoding="utf-8") as f:
        return json.load(f)


@lru_cache(maxsize=1)
def catalog() -> dict[str, dict[str, Any]]:
    """x-error-catalog by code: {"status": int, "title": {"cs", "en"}, ...}."""
    return {e["code"]: e for e in spec()["x-error-catalog"]}


@lru_cache(maxsize=1)
def all_scopes() -> list[str]:
    return list(spec()["components"]["securitySchemes"]["oauth2"]["flows"]["authorizationCode"]["scopes"])


@lru_cache(maxsize=1)
def scope_descriptions() -> dict[str, str]:
    """Each scope as a person reads it, Czech / English: {"orders:read": "Číst objednávky / Read orders"}, from the
    oauth2 scheme's scopes (English) and x-scopes-cs (Czech); a scope with only one of them shows that one."""
    flow = spec()["components"]["securitySchemes"]["oauth2"]["flows"]["authorizationCode"]
    cs_texts = flow.get("x-scopes-cs") or {}
    out = {}
    for scope, en in flow["scopes"].items():
        texts = [t.strip().rstrip(".") for t in (cs_texts.get(scope) or "", en or "") if t and t.strip()]
        out[scope] = " / ".join(texts)
    return out


@lru_cache(maxsize=1)
def device_clients() -> list[str]:
    return list(spec()["x-device-clients"])


@lru_cache(maxsize=1)
def _registry() -> Registry:
    # The whole document is one resource, so "#/components/schemas/X" resolves inside it.
    return Registry().with_resource("urn:profirest", Resource.from_contents(spec(), default_specification=DRAFT202012))


@lru_cache(maxsize=None)
def validator(schema_name: str) -> Draft202012Validator:
    schema = {"$ref": f"urn:profirest#/components/schemas/{schema_name}"}
    return Draft202012Validator(schema, registry=_registry(), format_checker=_FORMATS)


@lru_cache(maxsize=1)
def operations() -> dict[str, dict[str, Any]]:
    """operationId -> {"method", "path", "op"}."""
    out = {}
    for path, item in spec()["paths"].items():
        for method, op in item.items():
            if method in ("get", "post", "put", "patch", "delete"):
                out[op["operationId"]] = {"method": method.upper(), "path": path, "op": op}
    return out


@lru_cache(maxsize=None)
def query_params(operation_id: str) -> tuple[str, ...]:
    names = []
    for p in operations()[operation_id]["op"].get("parameters", []):
        if "$ref" in p:
            p = spec()["components"]["parameters"][p["$ref"].rsplit("/", 1)[1]]
        if p.get("in") == "query":
            names.append(p["name"])
    return tuple(names)


@lru_cache(maxsize=None)
def produced_types(operation_id: str) -> tuple[str, ...]:
    """Media types of the operation's success responses."""
    out = []
    for status, resp in operations()[operation_id]["op"].get("responses", {}).items():
        if status.startswith("2"):
            out += [t for t in resp.get("content", {}) if t not in out]
    return tuple(out)


def op_scopes(operation_id: str) -> list[str]:
    sec = operations()[operation_id]["op"].get("security") or []
    for req in sec:
        if "oauth2" in req:
            return list(req["oauth2"])
    return []


_CODE_BY_VALIDATOR = {
    "required": "required",
    "additionalProperties": "unknown_field",
    "unevaluatedProperties": "unknown_field",
    "type": "wrong_type",
    "minimum": "too_small",
    "exclusiveMinimum": "too_small",
    "minItems": "too_small",
    "minLength": "too_short",
    "maximum": "too_large",
    "exclusiveMaximum": "too_large",
    "maxItems": "too_large",
    "maxLength": "too_long",
    "pattern": "pattern",
    "enum": "enum",
    "const": "enum",
    "format": "format",
}


def _pointer(parts) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def field_errors(schema_name: str, instance: Any, lang: str = "cs") -> list[dict[str, str]]:
    """Validate instance against a component schema; [] when valid, else FieldError dicts."""
    errors: list[dict[str, str]] = []
    for err in validator(schema_name).iter_errors(instance):
        _collect(err, errors)
    # Stable order, no duplicates.
    seen = set()
    out = []
    for e in sorted(errors, key=lambda e: (e["pointer"], e["code"])):
        k = (e["pointer"], e["code"])
        if k not in seen:
            seen.add(k)
            out.append(e)
    return out


def _collect(err, out: list) -> None:
    kind = err.validator
    if kind in ("oneOf", "anyOf", "allOf") and err.context:
        # Prefer the errors of the branch that matched the discriminator (or the deepest ones).
        branches: dict = {}
        for sub in err.context:
            branches.setdefault(sub.relative_schema_path[0] if sub.relative_schema_path else 0, []).append(sub)

        def wrong_kind(subs) -> bool:  # the branch of another discriminator value / type
            return any(s.validator in ("enum", "const", "type") and (not s.relative_path or s.relative_path[-1] == "type") for s in subs)

        candidates = [b for b in branches.values() if not wrong_kind(b)] or list(branches.values())
        if not candidates:
            out.append({"pointer": _pointer(list(err.absolute_path)), "code": "wrong_type", "message": err.message[:300]})
            return
        for sub in min(candidates, key=len):
            _collect(sub, out)
        return
    base = list(err.absolute_path)
    if kind == "required":
        missing = re.findall(r"'([^']+)' is a required property", err.message)
        for name in missing or ["?"]:
            out.append({"pointer": _pointer(base + [name]), "code": "required", "message": f"{name} is required"})
        return
    if kind in ("additionalProperties", "unevaluatedProperties"):
        names = re.findall(r"'([^']+)'", err.message)
        inst = err.instance if isinstance(err.instance, dict) else {}
        names = [n for n in names if n in inst] or names
        for name in names:
            out.append({"pointer": _pointer(base + [name]), "code": "unknown_field", "message": f"unknown field {name}"})
        return
    out.append({"pointer": _pointer(base), "code": _CODE_BY_VALIDATOR.get(kind, kind), "message": err.message[:300]})
