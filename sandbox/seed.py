"""The demo data: restaurant 11 "Bistro U Lípy" (Brno) with a Czech menu and staff, restaurant 12 for scope tests."""
from __future__ import annotations

from typing import TYPE_CHECKING

from . import offline
from .db import iso

if TYPE_CHECKING:
    from .core import Sandbox

# OAuth clients. Device clients are public; partner redirect URIs: mojeaplikace://… or http loopback with any port.
# A partner's name is what the consent page shows (its id when it has none).
CLIENTS = {
    "profirest-pos": {"kind": "device", "public": True},
    "profirest-kds": {"kind": "device", "public": True},
    "profirest-dochazka": {"kind": "device", "public": True},
    "profirest-kuryr": {"kind": "device", "public": True},
    "moje-aplikace": {"kind": "partner", "public": True, "name": "Moje aplikace"},
    "sandbox-eshop": {"kind": "partner", "public": False, "secret": "sandbox-secret", "name": "Sandbox e-shop"},
}

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

CATEGORIES = [
    ("cat_polevky", "Polévky", 1, None), ("cat_hlavni", "Hlavní jídla", 2, None),
    ("cat_dezerty", "Dezerty", 3, None), ("cat_napoje", "Nápoje", 4, None), ("cat_pivo", "Pivo", 5, "cat_napoje"),
]

MODIFIER_GROUPS = [
    {"id": "grp_priloha", "name": "Příloha", "min": 0, "max": 1, "modifiers": [
        ("mod_knedlik", "Houskový knedlík", 0), ("mod_hranolky", "Hranolky", 2000),
        ("mod_brambory", "Vařené brambory", 0), ("mod_kase", "Bramborová kaše", 1000)]},
    {"id": "grp_extra", "name": "Navíc", "min": 0, "max": 3, "modifiers": [
        ("mod_slanina", "Slanina", 2500), ("mod_cibule", "Cibulka", 1000), ("mod_vejce", "Volské oko", 1500)]},
    {"id": "grp_prichut", "name": "Příchuť", "min": 1, "max": 1, "modifiers": [
        ("mod_citron", "Citron", 0), ("mod_malina", "Malina", 0), ("mod_okurka", "Okurka s mátou", 0)]},
]

ALL_CHANNELS = ["pos", "kiosk", "eshop", "delivery", "waiter"]
# (id, name, english name, category, price in haléře, vat, available, modifier groups, allergens, channels, station)
PRODUCTS = [
    ("prod_gulasovka", "Gulášová polévka", "Goulash soup", "cat_polevky", 8900, 12, True, [], [1], ALL_CHANNELS, "kuchyně"),
    ("prod_cesnecka", "Česnečka se sýrem a krutony", "Garlic soup", "cat_polevky", 7900, 12, True, [], [1, 7],
     ALL_CHANNELS, "kuchyně"),
    ("prod_svickova", "Svíčková na smetaně", "Beef sirloin in cream sauce", "cat_hlavni", 24900, 12, True,
     ["grp_priloha", "grp_extra"], [1, 3, 7, 9, 10], ALL_CHANNELS, "kuchyně"),
    ("prod_gulas", "Hovězí guláš", "Beef goulash", "cat_hlavni", 21900, 12, True, ["grp_priloha", "grp_extra"], [1],
     ALL_CHANNELS, "kuchyně"),
    ("prod_rizek", "Vepřový řízek", "Pork schnitzel", "cat_hlavni", 22900, 12, True, ["grp_priloha", "grp_extra"],
     [1, 3, 7], ALL_CHANNELS, "kuchyně"),
    ("prod_smazak", "Smažený sýr", "Fried cheese", "cat_hlavni", 19900, 12, False, ["grp_priloha"], [1, 3, 7],
     ALL_CHANNELS, "kuchyně"),
    ("prod_palacinky", "Palačinky s meruňkovou marmeládou", "Pancakes with apricot jam", "cat_dezerty", 11900, 12, True,
     [], [1, 3, 7], ALL_CHANNELS, "kuchyně"),
    ("prod_pivo", "Plzeňský Prazdroj 0,5 l", "Pilsner Urquell 0.5 l", "cat_pivo", 6900, 21, True, [], [1],
     ["pos", "kiosk", "waiter"], "bar"),
    ("prod_kofola", "Kofola 0,5 l", "Kofola 0.5 l", "cat_napoje", 4900, 12, True, [], [], ALL_CHANNELS, "bar"),
    ("prod_limonada", "Domácí limonáda 0,4 l", "Homemade lemonade 0.4 l", "cat_napoje", 5900, 12, True,
     ["grp_prichut"], [], ALL_CHANNELS, "bar"),
]
# e-shop and delivery prices are 10 % higher (rounded to whole crowns)
CHANNEL_MARKUP = {"eshop": 1.10, "delivery": 1.10}
DELIVERY_FEE = 4900

PRODUCTS_12 = [
    ("prod_margherita", "Pizza Margherita", "Pizza Margherita", "cat_hlavni", 17900, 12, True, [], [1, 7], ALL_CHANNELS,
     "pec"),
    ("prod_kofola", "Kofola 0,5 l", "Kofola 0.5 l", "cat_napoje", 4500, 12, True, [], [], ALL_CHANNELS, "bar"),
]


def catalog_for(restaurant_id: str) -> dict:
    products = PRODUCTS if restaurant_id == "11" else PRODUCTS_12
    return {"categories": [c for c in CATEGORIES if restaurant_id == "11" or c[0] in ("cat_hlavni", "cat_napoje")],
            "products": products, "groups": MODIFIER_GROUPS if restaurant_id == "11" else []}


def seed(sb: "Sandbox") -> None:
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
    from . import commerce
    commerce.seed_orders(sb)


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
