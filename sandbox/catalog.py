"""The catalog a channel sells (GET …/catalog: prices per channel, what is sold out) and pricing order lines
against it (price_items: modifiers checked against their groups, 422 product_unavailable for what cannot be sold),
from the fixed menus of menu.py."""
from __future__ import annotations

from aiohttp import web

from . import menu
from .db import iso
from .errors import ApiError, json_response
from .operation import Ctx, operation
from .paging import schema_enum
from .state import Sandbox


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
