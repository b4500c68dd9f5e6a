"""Catalog per channel, quotes, orders, tabs, receipts (offline approvals), kitchen tickets and deliveries."""
from __future__ import annotations

from aiohttp import web

from . import menu, offline
from .auth import STAFF_SCOPES, employee_ref
from .db import iso, now
from .errors import ApiError, json_response
from .operation import Ctx, operation
from .paging import comma_list, page, schema_enum
from .state import Sandbox, new_id

ORDER_FLOW = {"accepted": ["preparing"], "preparing": ["ready"], "ready": ["out_for_delivery", "completed"],
              "out_for_delivery": ["completed"]}
TICKET_FLOW = {"new": ["cooking", "cancelled"], "cooking": ["ready", "cancelled"], "ready": ["served"]}
DELIVERY_FLOW = {"waiting": ["picked_up"], "picked_up": ["delivered", "failed"]}


# -- catalog ------------------------------------------------------------------------------------------
def channel_price(base: int, channel: str) -> int:
    m = menu.CHANNEL_MARKUP.get(channel, 1.0)
    return int(round(base * m / 100.0)) * 100


def products_of(sb: Sandbox, rid: str) -> dict[str, dict]:
    cat = menu.catalog_for(rid)
    out = {}
    sold_out = sb.store.meta("sold_out:" + rid, None)
    for (pid, name, en, cid, price, vat, available, groups, allergens, channels, station) in cat["products"]:
        if sold_out is not None:
            available = pid not in sold_out
        out[pid] = {"id": pid, "name": name, "en": en, "category_id": cid, "price": price, "vat_rate": vat,
                    "available": available, "groups": groups, "allergens": allergens, "channels": channels,
                    "station": station}
    return out


def modifiers_of(rid: str) -> dict[str, tuple[dict, dict]]:
    out = {}
    for g in menu.catalog_for(rid)["groups"]:
        for (mid, name, price) in g["modifiers"]:
            out[mid] = ({"id": mid, "name": name, "price": price}, g)
    return out


def catalog_json(sb: Sandbox, restaurant: dict, channel: str) -> dict:
    rid, cur = restaurant["id"], restaurant["currency"]
    cat = menu.catalog_for(rid)
    products = []
    for p in products_of(sb, rid).values():
        if channel not in p["channels"]:
            continue
        item = {"id": p["id"], "name": p["name"], "category_id": p["category_id"],
                "price": {"amount": channel_price(p["price"], channel), "currency": cur}, "vat_rate": p["vat_rate"],
                "available": p["available"], "modifier_group_ids": p["groups"], "allergens": p["allergens"],
                "names": {"cs": p["name"], "en": p["en"]}}
        if p["id"] == "prod_palacinky":
            item["availability"] = [{"from": "11:00", "to": "22:00"}]
        products.append(item)
    groups = [{"id": g["id"], "name": g["name"], "min": g["min"], "max": g["max"],
               "modifiers": [{"id": m, "name": n, "price": {"amount": channel_price(pr, channel), "currency": cur}}
                             for (m, n, pr) in g["modifiers"]]} for g in cat["groups"]]
    return {"restaurant_id": rid, "channel": channel, "currency": cur,
            "categories": [{"id": c, "name": n, "position": pos, "parent_id": parent}
                           for (c, n, pos, parent) in cat["categories"]],
            "products": products, "modifier_groups": groups,
            "updated_at": sb.store.meta("catalog_updated_at") or iso()}


@operation("getCatalog")
async def get_catalog(ctx: Ctx) -> web.Response:
    channel = ctx.request.query.get("channel", "pos")
    if channel not in schema_enum("SalesChannel"):
        raise ApiError("validation_failed", "Unknown channel.",
                       errors=[{"pointer": "?channel", "code": "enum", "message": "pos, kiosk, eshop, delivery or waiter"}])
    return json_response(catalog_json(ctx.sb, ctx.restaurant, channel))


def price_items(sb: Sandbox, restaurant: dict, channel: str, items: list[dict], pointer: str = "/items") -> list[dict]:
    """Priced OrderItems; 422 product_unavailable / validation_failed pointing at the item."""
    rid, cur = restaurant["id"], restaurant["currency"]
    products, mods = products_of(sb, rid), modifiers_of(rid)
    out, unavailable, invalid = [], [], []
    for i, it in enumerate(items):
        p = products.get(it["product_id"])
        if not p or channel not in p["channels"] or not p["available"]:
            why = "unknown product" if not p else ("not sold in " + channel if channel not in p["channels"] else "sold out")
            unavailable.append({"pointer": f"{pointer}/{i}/product_id", "code": "unavailable", "message": why})
            continue
        unit = channel_price(p["price"], channel)
        chosen: dict[str, int] = {}
        for j, mid in enumerate(it.get("modifier_ids", [])):
            m = mods.get(mid)
            if not m or m[1]["id"] not in p["groups"]:
                invalid.append({"pointer": f"{pointer}/{i}/modifier_ids/{j}", "code": "enum",
                                "message": f"{mid} is not a modifier of {p['id']}"})
                continue
            chosen[m[1]["id"]] = chosen.get(m[1]["id"], 0) + 1
            unit += channel_price(m[0]["price"], channel)
        for gid in p["groups"]:
            g = next(g for g in menu.catalog_for(rid)["groups"] if g["id"] == gid)
            n = chosen.get(gid, 0)
            if n < g["min"] or n > g["max"]:
                invalid.append({"pointer": f"{pointer}/{i}/modifier_ids", "code": "too_small" if n < g["min"] else "too_large",
                                "message": f"{g['name']}: choose {g['min']}–{g['max']}"})
        line = {"product_id": p["id"], "name": p["name"], "quantity": it["quantity"],
                "modifier_ids": list(it.get("modifier_ids", [])), "unit_price": {"amount": unit, "currency": cur},
                "total": {"amount": unit * it["quantity"], "currency": cur}, "vat_rate": p["vat_rate"]}
        if it.get("note"):
            line["note"] = it["note"]
        out.append(line)
    if unavailable:
        raise ApiError("product_unavailable", "Some products cannot be sold now.", errors=unavailable + invalid)
    if invalid:
        raise ApiError("validation_failed", "Some modifiers are wrong.", errors=invalid)
    return out


@operation("createQuote", body="QuoteCreate", idempotent=True)
async def create_quote(ctx: Ctx) -> web.Response:
    sb, b = ctx.sb, ctx.body
    if b.get("customer_id") and not sb.store.get("customer", b["customer_id"]):
        raise ApiError("validation_failed", "Unknown customer.",
                       errors=[{"pointer": "/customer_id", "code": "enum", "message": "no such customer"}])
    items = price_items(sb, ctx.restaurant, b["channel"], b["items"])
    cur = ctx.restaurant["currency"]
    subtotal = sum(i["total"]["amount"] for i in items)
    fee = menu.DELIVERY_FEE if b["fulfillment"]["type"] == "delivery" else 0
    q = {"id": new_id("quo_", 6), "restaurant_id": ctx.rid, "channel": b["channel"], "items": items,
         "fulfillment": b["fulfillment"], "subtotal": {"amount": subtotal, "currency": cur},
         "delivery_fee": {"amount": fee, "currency": cur}, "total": {"amount": subtotal + fee, "currency": cur},
         "expires_at": iso(now() + sb.config["quote_ttl"]), "used_by_order_id": None}
    sb.store.put("quote", q["id"], {**q, "_expires": now() + sb.config["quote_ttl"],
                                    "_customer_id": b.get("customer_id")}, ctx.rid)
    return json_response(q, 201)


def public(obj: dict) -> dict:
    return {k: v for k, v in obj.items() if not k.startswith("_")}


def make_order(sb: Sandbox, restaurant: dict, q: dict, extra: dict) -> dict:
    rid = restaurant["id"]
    day = iso()[:10]
    counter = sb.store.meta(f"order_number:{rid}:{day}", 0) + 1
    sb.store.set_meta(f"order_number:{rid}:{day}", counter)
    t = iso()
    order = {"id": new_id("ord_", 4), "number": counter, "restaurant_id": rid, "external_id": extra.get("external_id"),
             "quote_id": q["id"], "channel": q["channel"], "status": "accepted", "items": q["items"],
             "fulfillment": q["fulfillment"], "total": q["total"], "created_at": t, "updated_at": t}
    if extra.get("customer"):
        order["customer"] = extra["customer"]
    if extra.get("note"):
        order["note"] = extra["note"]
    sb.store.put("order", order["id"], order, rid)
    q["used_by_order_id"] = order["id"]
    sb.store.put("quote", q["id"], q, rid)
    if order["external_id"]:
        sb.store.put("external_id", f"{rid}:{order['external_id']}", {"order_id": order["id"]})
    sb.emit("order.created", rid, {"order_id": order["id"], "status": "accepted"})
    products = products_of(sb, rid)
    mods = modifiers_of(rid)
    by_station: dict[str, list] = {}
    for it in order["items"]:
        st = products.get(it["product_id"], {}).get("station", "kuchyně")
        line = {"name": it["name"], "quantity": it["quantity"],
                "modifiers": [mods[m][0]["name"] for m in it["modifier_ids"] if m in mods]}
        if it.get("note"):
            line["note"] = it["note"]
        by_station.setdefault(st, []).append(line)
    for station, lines in by_station.items():
        ticket = {"id": new_id("kt_", 4), "restaurant_id": rid, "order_id": order["id"], "station": station,
                  "status": "new", "items": lines, "created_at": t, "updated_at": t}
        sb.store.put("ticket", ticket["id"], ticket, rid)
        sb.emit("kitchen.ticket_created", rid, {"ticket_id": ticket["id"], "order_id": order["id"], "status": "new",
                                                "station": station})
    f = order["fulfillment"]
    if f["type"] == "delivery":
        d = {"id": new_id("del_", 4), "restaurant_id": rid, "order_id": order["id"], "status": "waiting",
             "address": f["address"], "phone": f["phone"], "courier": None, "location": None, "updated_at": t}
        sb.store.put("delivery", d["id"], d, rid)
        sb.emit("delivery.updated", rid, {"delivery_id": d["id"], "order_id": order["id"], "status": "waiting"})
    return order


@operation("createOrder", body="OrderCreate", idempotent=True)
async def create_order(ctx: Ctx) -> web.Response:
    sb, b = ctx.sb, ctx.body
    q = sb.store.get("quote", b["quote_id"])
    if not q or q["restaurant_id"] != ctx.rid:
        raise ApiError("validation_failed", "Unknown quote.",
                       errors=[{"pointer": "/quote_id", "code": "enum", "message": "no such quote"}])
    if q.get("used_by_order_id"):
        raise ApiError("quote_already_used", "The quote made an order already.", existing_id=q["used_by_order_id"])
    if b.get("external_id"):
        ext = sb.store.get("external_id", f"{ctx.rid}:{b['external_id']}")
        if ext:
            raise ApiError("external_id_conflict", "An order with this external_id exists.", existing_id=ext["order_id"])
    if q["_expires"] <= now():
        raise ApiError("quote_expired", "The quote expired; create a new one.")
    order = make_order(sb, ctx.restaurant, q, b)
    return json_response(order, 201, {"Location": f"/v2/restaurants/{ctx.rid}/orders/{order['id']}"})


@operation("listOrders")
async def list_orders(ctx: Ctx) -> web.Response:
    statuses = comma_list(ctx.request, "status", schema_enum("OrderStatus"))
    orders = [o for o in ctx.sb.store.list("order", ctx.rid, newest_first=True) if not statuses or o["status"] in statuses]
    return page(ctx.request, orders, f"orders:{ctx.rid}:{statuses}")


def _get(ctx: Ctx, kind: str, key: str) -> dict:
    obj = ctx.sb.store.get(kind, ctx.request.match_info[key])
    if not obj or obj["restaurant_id"] != ctx.rid:
        raise ApiError("not_found", f"No such {kind}.")
    return obj


@operation("getOrder")
async def get_order(ctx: Ctx) -> web.Response:
    return json_response(_get(ctx, "order", "order_id"))


def _transition(obj: dict, new: str, allowed) -> None:
    """Moves an order, ticket or delivery to `new` if its flow allows it; otherwise 409 status_conflict."""
    if new not in allowed:
        raise ApiError("status_conflict", f"{obj['status']} → {new} is not allowed.")
    obj["status"], obj["updated_at"] = new, iso()


@operation("changeOrderStatus", body="OrderStatusChange", staff="optional", idempotent=True)
async def change_order_status(ctx: Ctx) -> web.Response:
    order = _get(ctx, "order", "order_id")
    new = ctx.body["status"]
    allowed = list(ORDER_FLOW.get(order["status"], []))
    if order["status"] not in ("completed", "cancelled"):
        allowed.append("cancelled")
    if order["fulfillment"]["type"] != "delivery" and "out_for_delivery" in allowed:
        allowed.remove("out_for_delivery")
    _transition(order, new, allowed)
    ctx.sb.store.put("order", order["id"], order, ctx.rid)
    ctx.sb.emit("order.status_changed", ctx.rid, {"order_id": order["id"], "status": new})
    return json_response(order)


# -- tabs ---------------------------------------------------------------------------------------------
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
    return json_response(_get(ctx, "tab", "tab_id"))


@operation("addTabItems", body="TabItemsAdd", staff="required", idempotent=True)
async def add_tab_items(ctx: Ctx) -> web.Response:
    _need_staff_scope(ctx, "tabs:write")
    tab = _get(ctx, "tab", "tab_id")
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
    return json_response(_get(ctx, "receipt", "receipt_id"))


# -- kitchen and deliveries ---------------------------------------------------------------------------
@operation("listKitchenTickets")
async def list_tickets(ctx: Ctx) -> web.Response:
    statuses = comma_list(ctx.request, "status", schema_enum("KitchenTicketStatus"))
    station = ctx.request.query.get("station")
    items = [t for t in ctx.sb.store.list("ticket", ctx.rid)
             if (not statuses or t["status"] in statuses) and (not station or t["station"] == station)]
    return page(ctx.request, items, f"tickets:{ctx.rid}:{statuses}:{station}")


@operation("changeKitchenTicketStatus", body="KitchenTicketStatusChange", staff="optional", idempotent=True)
async def change_ticket(ctx: Ctx) -> web.Response:
    t = _get(ctx, "ticket", "ticket_id")
    new = ctx.body["status"]
    _transition(t, new, TICKET_FLOW.get(t["status"], []))
    ctx.sb.store.put("ticket", t["id"], t, ctx.rid)
    ctx.sb.emit("kitchen.ticket_updated", ctx.rid, {"ticket_id": t["id"], "order_id": t["order_id"], "status": new})
    return json_response(t)


@operation("listDeliveries")
async def list_deliveries(ctx: Ctx) -> web.Response:
    statuses = comma_list(ctx.request, "status", schema_enum("DeliveryStatus"))
    items = [d for d in ctx.sb.store.list("delivery", ctx.rid) if not statuses or d["status"] in statuses]
    return page(ctx.request, items, f"deliveries:{ctx.rid}:{statuses}")


@operation("changeDeliveryStatus", body="DeliveryStatusChange", staff="optional", idempotent=True)
async def change_delivery(ctx: Ctx) -> web.Response:
    d = _get(ctx, "delivery", "delivery_id")
    new = ctx.body["status"]
    _transition(d, new, DELIVERY_FLOW.get(d["status"], []))
    if ctx.body.get("location"):
        d["location"] = ctx.body["location"]
    if ctx.staff and new == "picked_up":
        d["courier"] = employee_ref(ctx.staff_employee)
    ctx.sb.store.put("delivery", d["id"], d, ctx.rid)
    ctx.sb.emit("delivery.updated", ctx.rid, {"delivery_id": d["id"], "order_id": d["order_id"], "status": new})
    return json_response(d)


def routes(app: web.Application) -> None:
    r = app.router
    base = "/v2/restaurants/{restaurant_id}"
    r.add_get(base + "/catalog", get_catalog)
    r.add_post(base + "/quotes", create_quote)
    r.add_post(base + "/orders", create_order)
    r.add_get(base + "/orders", list_orders)
    r.add_get(base + "/orders/{order_id}", get_order)
    r.add_post(base + "/orders/{order_id}/status", change_order_status)
    r.add_get(base + "/tabs", list_tabs)
    r.add_post(base + "/tabs", create_tab)
    r.add_get(base + "/tabs/{tab_id}", get_tab)
    r.add_post(base + "/tabs/{tab_id}/items", add_tab_items)
    r.add_post(base + "/receipts", create_receipt)
    r.add_get(base + "/receipts/{receipt_id}", get_receipt)
    r.add_get(base + "/kitchen/tickets", list_tickets)
    r.add_post(base + "/kitchen/tickets/{ticket_id}/status", change_ticket)
    r.add_get(base + "/deliveries", list_deliveries)
    r.add_post(base + "/deliveries/{delivery_id}/status", change_delivery)
