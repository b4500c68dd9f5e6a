"""Customers with ETag / If-None-Match (304) / If-Match (428, 412) and JSON merge patch."""
from __future__ import annotations

from aiohttp import web

from .db import iso
from .errors import ApiError, json_response
from .operation import Ctx, operation
from .paging import page
from .state import new_id

HOME_RESTAURANT = "11"  # customer events belong to the demo owner's first restaurant


def etag(c: dict) -> str:
    return f'"{c["version"]}"'


def _email_owner(ctx: Ctx, email: str | None, except_id: str | None = None) -> dict | None:
    if not email:
        return None
    for c in ctx.sb.store.list("customer"):
        if c.get("email") and c["email"].lower() == email.lower() and c["id"] != except_id:
            return c
    return None


@operation("listCustomers")
async def list_customers(ctx: Ctx) -> web.Response:
    email = ctx.request.query.get("email")
    items = [c for c in ctx.sb.store.list("customer")
             if email is None or (c.get("email") or "").lower() == email.lower()]
    return page(ctx.request, items, f"customers:{email}")


@operation("createCustomer", body="CustomerCreate", idempotent=True)
async def create_customer(ctx: Ctx) -> web.Response:
    b = ctx.body
    taken = _email_owner(ctx, b.get("email"))
    if taken:
        raise ApiError("customer_email_taken", "Another customer has this email.", existing_id=taken["id"])
    c = {"id": new_id("cus_", 4), "name": b["name"], "email": b.get("email"), "phone": b.get("phone"),
         "note": b.get("note"), "loyalty_points": 0, "version": 1, "updated_at": iso()}
    ctx.sb.store.put("customer", c["id"], c)
    ctx.sb.emit("customer.updated", HOME_RESTAURANT, {"customer_id": c["id"], "version": 1})
    return json_response(c, 201, {"ETag": etag(c), "Location": f"/v2/customers/{c['id']}"})


def _customer(ctx: Ctx) -> dict:
    c = ctx.sb.store.get("customer", ctx.request.match_info["customer_id"])
    if not c:
        raise ApiError("not_found", "No such customer.")
    return c


def _matches(header: str, tag: str) -> bool:
    values = [v.strip() for v in header.split(",")]
    return "*" in values or tag in values or ("W/" + tag) in values


@operation("getCustomer")
async def get_customer(ctx: Ctx) -> web.Response:
    c = _customer(ctx)
    inm = ctx.request.headers.get("If-None-Match")
    if inm and _matches(inm, etag(c)):
        return web.Response(status=304, headers={"ETag": etag(c)})
    return json_response(c, 200, {"ETag": etag(c)})


@operation("updateCustomer", body="CustomerUpdate")
async def update_customer(ctx: Ctx) -> web.Response:
    c = _customer(ctx)
    im = ctx.request.headers.get("If-Match")
    if not im:
        raise ApiError("precondition_required", "Send If-Match with the ETag from GET.")
    if not _matches(im, etag(c)) or im.strip().startswith("W/"):
        raise ApiError("precondition_failed", f"The current ETag is {etag(c)}.")
    b = ctx.body
    if "email" in b and b["email"]:
        taken = _email_owner(ctx, b["email"], c["id"])
        if taken:
            raise ApiError("customer_email_taken", "Another customer has this email.", existing_id=taken["id"])
    changed = False
    for k, v in b.items():
        if c.get(k) != v:
            c[k] = v
            changed = True
    if changed:
        c["version"] += 1
        c["updated_at"] = iso()
        ctx.sb.store.put("customer", c["id"], c)
        ctx.sb.emit("customer.updated", HOME_RESTAURANT, {"customer_id": c["id"], "version": c["version"]})
    return json_response(c, 200, {"ETag": etag(c)})
