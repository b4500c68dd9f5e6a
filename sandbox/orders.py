"""Quotes, orders and what an order sets going: its kitchen tickets (one per station) and, for a delivery, the
delivery a courier takes; the status flows of all three, each change an event."""
from __future__ import annotations

from aiohttp import web

from . import menu
from .auth import employee_ref
from .catalog import modifiers_of, price_items, products_of
from .db import iso, now
from .errors import ApiError, json_response
from .operation import Ctx, operation, owned
from .paging import comma_list, page, schema_enum
from .state import Sandbox, new_id

ORDER_FLOW = {"accepted": ["preparing"], "preparing": ["ready"], "ready": ["out_for_delivery", "completed"],
              "out_for_delivery": ["completed"]}
TICKET_FLOW = {"new": ["cooking", "cancelled"], "cooking": ["ready", "cancelled"], "ready": ["served"]}
DELIVERY_FLOW = {"waiting": ["picked_up"], "picked_up": ["delivered", "failed"]}


def _transition(obj: dict, new: str, allowed) -> None:
    """Moves an order, ticket or delivery to `new` if its flow allows it; otherwise 409 status_conflict."""
    if new not in allowed:
        raise ApiError("status_conflict", f"{obj['status']} → {new} is not allowed.")
    obj["status"], obj["updated_at"] = new, iso()


# -- quotes and orders -------------------------------------------------------------------------------
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


def make_order(sb: Sandbox, restaurant: dict, q: dict, extra: dict) -> dict:
    """The order of quote q with its kitchen tickets and delivery, each with its event (the seed's orders too)."""
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


@operation("getOrder")
async def get_order(ctx: Ctx) -> web.Response:
    return json_response(owned(ctx, "order", "order_id"))


@operation("changeOrderStatus", body="OrderStatusChange", staff="optional", idempotent=True)
async def change_order_status(ctx: Ctx) -> web.Response:
    order = owned(ctx, "order", "order_id")
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
    t = owned(ctx, "ticket", "ticket_id")
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
    d = owned(ctx, "delivery", "delivery_id")
    new = ctx.body["status"]
    _transition(d, new, DELIVERY_FLOW.get(d["status"], []))
    if ctx.body.get("location"):
        d["location"] = ctx.body["location"]
    if ctx.staff and new == "picked_up":
        d["courier"] = employee_ref(ctx.staff_employee)
    ctx.sb.store.put("delivery", d["id"], d, ctx.rid)
    ctx.sb.emit("delivery.updated", ctx.rid, {"delivery_id": d["id"], "order_id": d["order_id"], "status": new})
    return json_response(d)
