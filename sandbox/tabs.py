"""At the register: tabs (open, add priced items, closed by their receipt) and receipts, issued once per id, with a
manager's offline approval checked against the key derived from the manager's PIN (offline.py)."""
from __future__ import annotations

from aiohttp import web

from . import offline
from .auth import STAFF_SCOPES, employee_ref
from .catalog import price_items
from .db import iso
from .errors import ApiError, json_response
from .operation import Ctx, operation, owned
from .paging import page
from .state import Sandbox, new_id


def _need_staff_scope(ctx: Ctx, scope: str) -> dict:
    emp = ctx.staff_employee
    if scope not in STAFF_SCOPES.get(emp["role"], []):
        raise ApiError("insufficient_scope", f"{emp['name']} ({emp['role']}) may not do this ({scope}).")
    return emp


@operation("listTabs")
async def list_tabs(ctx: Ctx) -> web.Response:
    tabs = [t for t in ctx.sb.store.list("tab", ctx.rid) if t["status"] == "open"]
    return page(ctx.request, tabs, "tabs:" + ctx.rid)


@operation("createTab", body="TabCreate", staff="required", idempotent=True)
async def create_tab(ctx: Ctx) -> web.Response:
    emp = _need_staff_scope(ctx, "tabs:write")
    tab = {"id": new_id("tab_", 4), "restaurant_id": ctx.rid, "name": ctx.body["name"], "status": "open", "items": [],
           "total": {"amount": 0, "currency": ctx.restaurant["currency"]}, "opened_by": employee_ref(emp),
           "opened_at": iso()}
    if "table" in ctx.body:
        tab["table"] = ctx.body["table"]
    ctx.sb.store.put("tab", tab["id"], tab, ctx.rid)
    ctx.sb.emit("tab.updated", ctx.rid, {"tab_id": tab["id"], "status": "open"})
    return json_response(tab, 201)


@operation("getTab")
async def get_tab(ctx: Ctx) -> web.Response:
    return json_response(owned(ctx, "tab", "tab_id"))


@operation("addTabItems", body="TabItemsAdd", staff="required", idempotent=True)
async def add_tab_items(ctx: Ctx) -> web.Response:
    _need_staff_scope(ctx, "tabs:write")
    tab = owned(ctx, "tab", "tab_id")
    if tab["status"] != "open":
        raise ApiError("tab_closed", "The tab is closed; open a new one.")
    lines = price_items(ctx.sb, ctx.restaurant, "waiter", ctx.body["items"])
    tab["items"].extend(lines)
    tab["total"]["amount"] = sum(i["total"]["amount"] for i in tab["items"])
    ctx.sb.store.put("tab", tab["id"], tab, ctx.rid)
    ctx.sb.emit("tab.updated", ctx.rid, {"tab_id": tab["id"], "status": "open"})
    return json_response(tab)


# -- receipts -----------------------------------------------------------------------------------------
def verify_offline_approval(sb: Sandbox, restaurant_id: str, receipt: dict) -> dict:
    a = receipt["offline_approval"]
    emp = sb.employee(a["employee_id"])
    if not emp or emp["restaurant_id"] != restaurant_id or emp["role"] != "manager" or not emp.get("offline_approval"):
        raise ApiError("offline_approval_invalid", "The approver is no manager of this restaurant.")
    oa = emp["offline_approval"]
    key = offline.derive_key(emp["pin"], oa["salt"], oa["iterations"])
    msg = offline.message(receipt["id"], a["employee_id"], a["approved_at"], a["reason"], receipt["total"]["amount"],
                          receipt["total"]["currency"])
    if not offline.verify(key, msg, a["approval_signature"]):
        raise ApiError("offline_approval_invalid", "approval_signature does not match the manager's key.")
    return emp


@operation("createReceipt", body="ReceiptCreate", staff="required", idempotent=True)
async def create_receipt(ctx: Ctx) -> web.Response:
    sb, b = ctx.sb, ctx.body
    emp = _need_staff_scope(ctx, "receipts:write")
    existing = sb.store.get("receipt", b["id"])
    if existing:  # a receipt id is issued once; a repeat answers the receipt issued before
        return json_response(existing, 201)
    approver = verify_offline_approval(sb, ctx.rid, b) if b.get("offline_approval") else None
    tab = None
    if b.get("tab_id"):
        tab = sb.store.get("tab", b["tab_id"])
        if not tab or tab["restaurant_id"] != ctx.rid:
            raise ApiError("validation_failed", "Unknown tab.",
                           errors=[{"pointer": "/tab_id", "code": "enum", "message": "no such tab"}])
        if tab["status"] != "open":
            raise ApiError("tab_closed", "The tab is closed already.")
    year = iso()[:4]
    n = sb.store.meta(f"receipt_number:{ctx.rid}:{year}", 0) + 1
    sb.store.set_meta(f"receipt_number:{ctx.rid}:{year}", n)
    receipt = {"id": b["id"], "number": f"{ctx.rid}-{year}-{n:06d}", "restaurant_id": ctx.rid,
               "tab_id": b.get("tab_id"), "items": b["items"], "total": b["total"],
               "payment_method": b["payment_method"], "issued_by": employee_ref(emp),
               "approved_by": employee_ref(approver) if approver else None, "issued_at": b.get("issued_at") or iso()}
    sb.store.put("receipt", receipt["id"], receipt, ctx.rid)
    if tab:
        tab["status"] = "closed"
        sb.store.put("tab", tab["id"], tab, ctx.rid)
        sb.emit("tab.updated", ctx.rid, {"tab_id": tab["id"], "status": "closed"})
    sb.emit("receipt.issued", ctx.rid, {"receipt_id": receipt["id"], "number": receipt["number"]})
    return json_response(receipt, 201)


@operation("getReceipt")
async def get_receipt(ctx: Ctx) -> web.Response:
    return json_response(owned(ctx, "receipt", "receipt_id"))
