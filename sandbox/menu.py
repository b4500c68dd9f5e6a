"""The menus the sandbox sells from: categories, modifier groups and products of restaurant 11 (a Czech bistro) and
a short one of restaurant 12, with the channel markup and the delivery fee. Fixed data, read while serving (never
kept in the state file); a sold-out list the admin API sets is kept there (meta sold_out:<restaurant>)."""
from __future__ import annotations

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
