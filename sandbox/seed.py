"""The demo data a sandbox starts with — restaurant 11 "Bistro U Lípy" (Brno) with its staff, a customer and two
orders; restaurant 12 for scope tests — and the places that write it: open_sandbox (seeded on first use, a state file
keeps what it had) and reset (back to the seed data). The menus and OAuth clients are menu.py and clients.py."""
from __future__ import annotations

from . import offline
from .catalog import price_items
from .db import iso
from .menu import DELIVERY_FEE
from .orders import make_order
from .state import Sandbox, new_id

JANA_SALT = offline.b64url(b"profirest-jana-1")  # 16 bytes, fixed so client tests can derive the same key
JANA_ITERATIONS = 20000

RESTAURANTS = [
    {"id": "11", "name": "Bistro U Lípy", "city": "Brno", "address": "Lipová 12, 602 00 Brno",
     "timezone": "Europe/Prague", "currency": "CZK",
     "opening_hours": [{"weekday": d, "intervals": [{"from": "11:00", "to": "22:00"}]} for d in (1, 2, 3, 4)]
     + [{"weekday": d, "intervals": [{"from": "11:00", "to": "23:30"}]} for d in (5, 6)]
     + [{"weekday": 7, "intervals": [{"from": "11:00", "to": "21:00"}]}]},
    {"id": "12", "name": "Pizzerie Na Rohu", "city": "Olomouc", "address": "Horní náměstí 3, 779 00 Olomouc",
     "timezone": "Europe/Prague", "currency": "CZK",
     "opening_hours": [{"weekday": d, "intervals": [{"from": "10:30", "to": "22:00"}]} for d in range(1, 8)]},
]

# PINs and cards are the sandbox's secret; they never leave it in an answer.
EMPLOYEES = [
    {"id": "emp_1", "restaurant_id": "11", "name": "Jana Nováková", "role": "manager", "active": True,
     "pin": "1234", "card": "04A1B2C3"},
    {"id": "emp_2", "restaurant_id": "11", "name": "Petr Svoboda", "role": "waiter", "active": True,
     "pin": "2222", "card": "04B2C3D4"},
    {"id": "emp_3", "restaurant_id": "11", "name": "Eva Dvořáková", "role": "cook", "active": True,
     "pin": "2222", "card": None},
    {"id": "emp_4", "restaurant_id": "11", "name": "Tomáš Král", "role": "courier", "active": True,
     "pin": "3333", "card": "04C3D4E5"},
    {"id": "emp_5", "restaurant_id": "11", "name": "Martin Beneš", "role": "cashier", "active": False,
     "pin": "9999", "card": None},
    {"id": "emp_21", "restaurant_id": "12", "name": "Lucie Horáková", "role": "manager", "active": True,
     "pin": "5555", "card": None},
]


def open_sandbox(db_path: str = ":memory:", config: dict | None = None, validate: bool = False) -> Sandbox:
    """A sandbox on this state file (":memory:" for none), seeded unless the file was seeded before."""
    sb = Sandbox(db_path, config, validate)
    if not sb.store.meta("seeded"):
        seed(sb)
    return sb


def reset(sb: Sandbox) -> None:
    """Back to the seed data: everything forgotten, cursors issued so far expire."""
    sb.wipe()
    seed(sb)


def seed(sb: Sandbox) -> None:
    """Writes the demo data into an empty sandbox."""
    st = sb.store
    for r in RESTAURANTS:
        st.put("restaurant", r["id"], r, r["id"])
    for e in EMPLOYEES:
        e = dict(e)
        if e["role"] == "manager" and e["id"] == "emp_1":
            key = offline.derive_key(e["pin"], JANA_SALT, JANA_ITERATIONS)
            e["offline_approval"] = {"salt": JANA_SALT, "iterations": JANA_ITERATIONS, "check": offline.check_byte(key)}
        elif e["role"] == "manager":
            salt = offline.b64url(("profirest-" + e["id"]).encode().ljust(16, b"-")[:16])
            key = offline.derive_key(e["pin"], salt, JANA_ITERATIONS)
            e["offline_approval"] = {"salt": salt, "iterations": JANA_ITERATIONS, "check": offline.check_byte(key)}
        st.put("employee", e["id"], e, e["restaurant_id"])
    st.put("customer", "cus_8D2k", {"id": "cus_8D2k", "name": "Jana Nováková", "email": "jana@example.cz",
                                    "phone": "+420601234567", "note": None, "loyalty_points": 120, "version": 1,
                                    "updated_at": iso()})
    st.set_meta("catalog_updated_at", iso())
    st.set_meta("cursor_epoch", st.meta("cursor_epoch", 1))
    st.set_meta("seeded", True)
    seed_orders(sb)


def seed_orders(sb: Sandbox) -> None:
    """Two demo orders of restaurant 11 so kitchen displays and courier phones show something at once."""
    r = sb.restaurant("11")
    for channel, fulfillment, items in (
            ("eshop", {"type": "delivery", "address": "Údolní 5, 602 00 Brno", "phone": "+420601234567"},
             [{"product_id": "prod_svickova", "quantity": 2, "modifier_ids": ["mod_knedlik"]},
              {"product_id": "prod_kofola", "quantity": 2}]),
            ("kiosk", {"type": "pickup"}, [{"product_id": "prod_gulasovka", "quantity": 1},
                                          {"product_id": "prod_limonada", "quantity": 1, "modifier_ids": ["mod_malina"]}])):
        lines = price_items(sb, r, channel, items)
        total = sum(i["total"]["amount"] for i in lines) + (DELIVERY_FEE if fulfillment["type"] == "delivery" else 0)
        q = {"id": new_id("quo_", 6), "restaurant_id": "11", "channel": channel, "items": lines,
             "fulfillment": fulfillment, "total": {"amount": total, "currency": "CZK"}, "used_by_order_id": None}
        extra = {"customer": {"name": "Jana Nováková", "phone": "+420601234567"}} if channel == "eshop" else {}
        make_order(sb, r, q, extra)


def demo_text(api: str, admin: str) -> str:
    return f"""Profirest sandbox — API {api}  admin page {admin}
Restaurants: 11 "Bistro U Lípy" (Brno, CZK, Europe/Prague) · 12 "Pizzerie Na Rohu" (Olomouc, for scope tests)
Staff of 11: Jana Nováková manager PIN 1234 card 04A1B2C3 (offline approval: salt {JANA_SALT}, {JANA_ITERATIONS} iterations)
             Petr Svoboda waiter PIN 2222 card 04B2C3D4 · Eva Dvořáková cook PIN 2222 (shared PIN → staff_ambiguous)
             Tomáš Král courier PIN 3333 card 04C3D4E5 · Martin Beneš cashier PIN 9999 (inactive)
Staff of 12: Lucie Horáková manager PIN 5555
Customer: cus_8D2k Jana Nováková jana@example.cz
Device clients: profirest-pos, profirest-kds, profirest-dochazka, profirest-kuryr (pair: python -m sandbox approve CODE)
Partner clients: moje-aplikace (public), sandbox-eshop (secret sandbox-secret); redirect URIs mojeaplikace://… or http://127.0.0.1:*/…"""
