"""Lints contract/profirest-v2.openapi.json.

Besides the standard OpenAPI 3.1 validation, it enforces the house rules the generator and the sandbox rely on:
every schema and every operation's main response has an example and each example validates against its schema,
operation ids are unique, every error code the contract's prose mentions is in x-error-catalog, and the catalog
itself is well formed, and every scope has a Czech description beside its English one (x-scopes-cs). Secret members (tokens, PINs, the PKCE verifier) carry `x-secret: true`, which the generator
turns into a redacting description and mirror: the flag is `true` or absent, and a member named like a secret must
have it, so a new token field cannot print by default. Every schema, schema property, parameter and operation is
described: the generator turns these descriptions into the library's documentation (a property that is only a $ref
is described by its schema's description).
"""
import json
import re
import sys
from pathlib import Path

from jsonschema import Draft202012Validator
from openapi_spec_validator import validate

CONTRACT = Path(__file__).resolve().parent.parent / "contract" / "profirest-v2.openapi.json"

# Member names that always hold a secret, wherever they appear; `code` and `token` are secrets only in the schemas
# listed, since elsewhere `code` is an error or product code.
SECRET_NAMES = {"access_token", "refresh_token", "id_token", "client_secret", "device_code", "code_verifier",
                "secret", "pin", "password", "staff_token"}
SECRET_MEMBERS = {("TokenRequest", "code"), ("RevocationRequest", "token"), ("StaffSession", "token")}


def check_secrets(schemas: dict, problems: list[str]) -> None:
    def walk(where: str, schema, owner: str) -> None:
        if isinstance(schema, list):
            for item in schema:
                walk(where, item, owner)
            return
        if not isinstance(schema, dict):
            return
        if "x-secret" in schema and schema["x-secret"] is not True:
            problems.append(f"{where}: x-secret must be true (or left out)")
        for name, member in (schema.get("properties") or {}).items():
            if isinstance(member, dict):
                named_secret = name in SECRET_NAMES or (owner, name) in SECRET_MEMBERS
                if named_secret and member.get("x-secret") is not True:
                    problems.append(f"{where}.{name}: a secret member; mark it x-secret: true so it never prints")
                walk(f"{where}.{name}", member, owner)
        for key in ("items", "additionalProperties", "allOf", "oneOf", "anyOf"):
            if key in schema:
                walk(f"{where}/{key}", schema[key], owner)

    for name, schema in schemas.items():
        walk(f"schema {name}", schema, name)


def described(node) -> bool:
    return isinstance(node, dict) and isinstance(node.get("description"), str) and bool(node["description"].strip())


def check_descriptions(spec: dict, problems: list[str]) -> None:
    """Every schema, schema property, parameter and operation has a description: it becomes the documentation of the
    generated model, member or method, so the generator never has to make one up."""
    components = spec["components"]
    schemas = components["schemas"]

    def target(ref: str):
        return schemas.get(ref.rsplit("/", 1)[-1]) if ref.startswith("#/components/schemas/") else None

    def walk(where: str, schema) -> None:
        if isinstance(schema, list):
            for item in schema:
                walk(where, item)
            return
        if not isinstance(schema, dict):
            return
        for name, member in (schema.get("properties") or {}).items():
            only_ref = isinstance(member, dict) and set(member) == {"$ref"}
            if not described(member) and not (only_ref and described(target(member["$ref"]))):
                problems.append(f"{where}.{name}: no description (say what the member is, in English)")
            walk(f"{where}.{name}", member)
        for key in ("items", "additionalProperties", "allOf", "oneOf", "anyOf"):
            if key in schema:
                walk(f"{where}/{key}", schema[key])

    for name, schema in schemas.items():
        if not described(schema):
            problems.append(f"schema {name}: no description")
        walk(f"schema {name}", schema)
    for name, parameter in (components.get("parameters") or {}).items():
        if not described(parameter):
            problems.append(f"parameter {name}: no description")
    for path, item in spec["paths"].items():
        for method, op in item.items():
            where = op.get("operationId") or f"{method.upper()} {path}"
            if not str(op.get("summary") or "").strip():
                problems.append(f"{where}: no summary")
            if not described(op):
                problems.append(f"{where}: no description")
            for parameter in op.get("parameters") or []:
                if "$ref" not in parameter and not described(parameter):
                    problems.append(f"{where}: parameter {parameter.get('name')} has no description")


def main() -> int:
    spec = json.loads(CONTRACT.read_text(encoding="utf-8"))
    validate(spec)  # raises on any structural error
    problems: list[str] = []

    schemas = spec["components"]["schemas"]
    registry_root = {"components": spec["components"]}

    def check_example(where: str, schema: dict, example) -> None:
        wrapped = dict(schema)
        wrapped["components"] = registry_root["components"]
        for error in Draft202012Validator(wrapped, format_checker=Draft202012Validator.FORMAT_CHECKER).iter_errors(example):
            problems.append(f"{where}: example does not match its schema: {error.message} at /{'/'.join(map(str, error.absolute_path))}")

    for name, schema in schemas.items():
        if "example" not in schema:
            problems.append(f"schema {name}: no example")
        else:
            check_example(f"schema {name}", {"$ref": f"#/components/schemas/{name}"}, schema["example"])

    check_secrets(schemas, problems)
    check_descriptions(spec, problems)

    seen_ids: set[str] = set()
    for path, item in spec["paths"].items():
        for method, op in item.items():
            oid = op.get("operationId")
            if not oid:
                problems.append(f"{method.upper()} {path}: no operationId")
            elif oid in seen_ids:
                problems.append(f"{method.upper()} {path}: duplicate operationId {oid}")
            seen_ids.add(oid or "")
            if not op.get("tags"):
                problems.append(f"{oid}: no tag")
            if "security" not in op:
                problems.append(f"{oid}: no security (use [] for public operations)")
            success = sorted(code for code in op["responses"] if code.startswith("2"))
            if not success:
                problems.append(f"{oid}: no success response")
                continue
            main = op["responses"][success[0]]
            for ctype, media in (main.get("content") or {}).items():
                if ctype == "application/json":
                    if "example" not in media:
                        problems.append(f"{oid}: main response has no example")
                    else:
                        check_example(f"{oid} {success[0]}", media["schema"], media["example"])
            body = (op.get("requestBody") or {}).get("content") or {}
            for ctype, media in body.items():
                if "json" in ctype or "form" in ctype:
                    if "example" not in media:
                        problems.append(f"{oid}: request body {ctype} has no example")
                    else:
                        check_example(f"{oid} request", media["schema"], media["example"])

    catalog = spec.get("x-error-catalog") or []
    codes = [entry["code"] for entry in catalog]
    if len(codes) != len(set(codes)):
        problems.append("x-error-catalog: duplicate codes")
    for entry in catalog:
        for key in ("code", "status", "retryable", "library_only", "title", "description"):
            if key not in entry:
                problems.append(f"x-error-catalog {entry.get('code')}: missing {key}")
        if not re.fullmatch(r"[a-z][a-z0-9_]*", entry["code"]):
            problems.append(f"x-error-catalog {entry['code']}: codes are snake_case")
        if set(entry.get("title", {})) != {"cs", "en"}:
            problems.append(f"x-error-catalog {entry['code']}: titles in cs and en")
    # The consent page shows each scope as "Czech / English": x-scopes-cs names the same scopes as scopes.
    for name, scheme in (spec.get("components", {}).get("securitySchemes") or {}).items():
        for flow_name, flow in (scheme.get("flows") or {}).items():
            where = f"securitySchemes.{name}.flows.{flow_name}"
            scopes, cs = flow.get("scopes") or {}, flow.get("x-scopes-cs") or {}
            if set(cs) != set(scopes):
                problems.append(f"{where}: x-scopes-cs must describe exactly the scopes (missing: "
                                f"{sorted(set(scopes) - set(cs))}, unknown: {sorted(set(cs) - set(scopes))})")
            for scope in scopes:
                if not str(scopes.get(scope) or "").strip() or (scope in cs and not str(cs[scope] or "").strip()):
                    problems.append(f"{where}: {scope} has an empty description")
    for required in ("network_error", "timeout", "not_paired", "unexpected_redirect", "staff_session_required"):
        entry = next((e for e in catalog if e["code"] == required), None)
        if not entry or not entry["library_only"]:
            problems.append(f"x-error-catalog: library-only code {required} missing or not marked library_only")

    # Codes named in prose as "NNN code_name" must exist in the catalog.
    text = json.dumps(spec["paths"], ensure_ascii=False)
    oauth = set(schemas["OAuthErrorCode"]["enum"])
    for status, code in set(re.findall(r"\b([1-5][0-9][0-9]) ([a-z]+_[a-z_]+)\b", text)):
        if code not in codes and code not in oauth:
            problems.append(f"prose names {status} {code}, which is not in x-error-catalog")

    for p in problems:
        print(f"contract: {p}", file=sys.stderr)
    ops = sum(len(v) for v in spec["paths"].values())
    if problems:
        print(f"contract: {len(problems)} problem(s)", file=sys.stderr)
        return 1
    print(f"contract: OK — OpenAPI {spec['openapi']}, {ops} operations, {len(schemas)} schemas, {len(codes)} error codes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
