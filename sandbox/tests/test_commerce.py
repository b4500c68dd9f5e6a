"""Catalog, quotes, orders, tabs, receipts, kitchen tickets, deliveries, customers and backups."""
import hashlib
import io
import time
import uuid
import zipfile

R = "/v2/restaurants/11"


def test_catalog_prices_per_channel(api, pos):
    pos_cat = api.call("GET", R + "/catalog", pos).json()
    eshop = api.call("GET", R + "/catalog", pos, params={"channel": "eshop"}).json()
    price = {p["id"]: p["price"]["amount"] for p in pos_cat["products"]}
    eprice = {p["id"]: p["price"]["amount"] for p in eshop["products"]}
    assert price["prod_svickova"] == 24900 and eprice["prod_svickova"] == 27400
    assert "prod_pivo" in price and "prod_pivo" not in eprice  # no beer for delivery
    assert {g["id"] for g in pos_cat["modifier_groups"]} == {"grp_priloha", "grp_extra", "grp_prichut"}
    assert api.call("GET", R + "/catalog", pos, params={"channel": "tv"}).status_code == 422


def quote(api, pos, items=None, fulfillment=None, channel="eshop"):
    return api.call("POST", R + "/quotes", pos, json_body={
        "channel": channel, "items": items or [{"product_id": "prod_svickova", "quantity": 2,
                                                "modifier_ids": ["mod_hranolky"], "note": "bez brusinek"}],
        "fulfillment": fulfillment or {"type": "pickup"}})


def test_quote_order_and_guards(api, pos):
    q = quote(api, pos).json()
    assert q["total"]["amount"] == 2 * (27400 + 2200) and q["used_by_order_id"] is None
    r = api.call("POST", R + "/orders", pos, json_body={"quote_id": q["id"], "external_id": "eshop-1"})
    order = r.json()
    assert r.status_code == 201 and r.headers["Location"].endswith(order["id"]) and order["status"] == "accepted"
    r = api.call("POST", R + "/orders", pos, json_body={"quote_id": q["id"]})
    assert r.status_code == 409 and r.json()["code"] == "quote_already_used" and r.json()["existing_id"] == order["id"]
    q2 = quote(api, pos).json()
    r = api.call("POST", R + "/orders", pos, json_body={"quote_id": q2["id"], "external_id": "eshop-1"})
    assert r.json()["code"] == "external_id_conflict" and r.json()["existing_id"] == order["id"]
    api.admin("POST", "/config", {"quote_ttl": 0.2})
    q3 = quote(api, pos).json()
    time.sleep(0.3)
    assert api.call("POST", R + "/orders", pos, json_body={"quote_id": q3["id"]}).json()["code"] == "quote_expired"


def test_unavailable_products(api, pos):
    r = quote(api, pos, [{"product_id": "prod_pivo", "quantity": 1}, {"product_id": "prod_smazak", "quantity": 1}])
    assert r.status_code == 422 and r.json()["code"] == "product_unavailable"
    assert [e["pointer"] for e in r.json()["errors"]] == ["/items/0/product_id", "/items/1/product_id"]
    r = quote(api, pos, [{"product_id": "prod_limonada", "quantity": 1}])  # a flavour must be chosen
    assert r.status_code == 422 and r.json()["code"] == "validation_failed"


def test_order_status_kitchen_and_delivery(api, pos):
    q = quote(api, pos, fulfillment={"type": "delivery", "address": "Údolní 5, Brno", "phone": "+420601234567"},
              channel="delivery").json()
    assert q["delivery_fee"]["amount"] == 4900
    order = api.call("POST", R + "/orders", pos, json_body={"quote_id": q["id"]}).json()
    path = f"{R}/orders/{order['id']}/status"
    assert api.call("POST", path, pos, json_body={"status": "ready"}).json()["code"] == "status_conflict"
    for s in ("preparing", "ready", "out_for_delivery", "completed"):
        assert api.call("POST", path, pos, json_body={"status": s}).json()["status"] == s
    assert api.call("POST", path, pos, json_body={"status": "cancelled"}).status_code == 409
    assert api.call("GET", f"{R}/orders", pos, params={"status": "completed"}).json()["data"][0]["id"] == order["id"]
    tickets = api.call("GET", f"{R}/kitchen/tickets", pos, params={"status": "new", "station": "kuchyně"}).json()["data"]
    t = next(t for t in tickets if t["order_id"] == order["id"])
    tp = f"{R}/kitchen/tickets/{t['id']}/status"
    assert api.call("POST", tp, pos, json_body={"status": "served"}).json()["code"] == "status_conflict"
    assert api.call("POST", tp, pos, json_body={"status": "cooking"}).json()["status"] == "cooking"
    d = next(d for d in api.call("GET", f"{R}/deliveries", pos).json()["data"] if d["order_id"] == order["id"])
    courier = api.call("POST", f"{R}/staff/sessions", pos, json_body={"method": "pin", "secret": "3333"}).json()["token"]
    dp = f"{R}/deliveries/{d['id']}/status"
    r = api.call("POST", dp, pos, json_body={"status": "picked_up", "location": {"lat": 49.1951, "lon": 16.6068}},
                 headers={"Profirest-Staff-Token": courier}).json()
    assert r["courier"]["name"] == "Tomáš Král" and r["location"]["lat"] == 49.1951
    assert api.call("POST", dp, pos, json_body={"status": "waiting"}).json()["code"] == "status_conflict"
    assert api.call("POST", dp, pos, json_body={"status": "delivered"}).json()["status"] == "delivered"


def test_tabs_and_receipts_need_a_signed_in_employee(api, pos):
    r = api.call("POST", R + "/tabs", pos, json_body={"name": "Stůl 4", "table": "4"})
    assert r.status_code == 403 and r.json()["code"] == "staff_session_missing"
    cook = api.call("POST", R + "/staff/sessions", pos, json_body={"method": "pin", "secret": "2222",
                                                                    "employee_id": "emp_3"}).json()["token"]
    r = api.call("POST", R + "/tabs", pos, json_body={"name": "Stůl 4"}, headers={"Profirest-Staff-Token": cook})
    assert r.json()["code"] == "insufficient_scope"
    waiter = {"Profirest-Staff-Token": api.call("POST", R + "/staff/sessions", pos, json_body={
        "method": "card", "secret": "04B2C3D4"}).json()["token"]}
    tab = api.call("POST", R + "/tabs", pos, json_body={"name": "Stůl 4", "table": "4"}, headers=waiter).json()
    tab = api.call("POST", f"{R}/tabs/{tab['id']}/items", pos, headers=waiter, json_body={
        "items": [{"product_id": "prod_pivo", "quantity": 2}, {"product_id": "prod_gulas", "quantity": 1}]}).json()
    assert tab["total"]["amount"] == 2 * 6900 + 21900
    rid = str(uuid.uuid4())
    body = {"id": rid, "tab_id": tab["id"], "items": [{"name": "Pivo", "quantity": 2, "unit_price": {
        "amount": 6900, "currency": "CZK"}, "vat_rate": 21}], "total": {"amount": 13800, "currency": "CZK"},
            "payment_method": "cash"}
    r = api.call("POST", R + "/receipts", pos, json_body=body, headers=waiter)
    assert r.status_code == 201 and r.json()["approved_by"] is None and r.json()["tab_id"] == tab["id"]
    assert api.call("GET", f"{R}/receipts/{rid}", pos).json()["number"] == r.json()["number"]
    assert api.call("GET", f"{R}/tabs/{tab['id']}", pos).json()["status"] == "closed"
    r = api.call("POST", f"{R}/tabs/{tab['id']}/items", pos, headers=waiter,
                 json_body={"items": [{"product_id": "prod_pivo", "quantity": 1}]})
    assert r.status_code == 409 and r.json()["code"] == "tab_closed"
    assert api.call("GET", R + "/tabs", pos).json()["data"] == []


def test_customers_etag(api, pos):
    r = api.call("GET", "/v2/customers/cus_8D2k", pos)
    tag = r.headers["ETag"]
    assert tag == '"1"' and r.json()["email"] == "jana@example.cz"
    r = api.call("GET", "/v2/customers/cus_8D2k", pos, headers={"If-None-Match": tag})
    assert r.status_code == 304 and r.content == b""
    r = api.call("PATCH", "/v2/customers/cus_8D2k", pos, json_body={"note": "VIP"})
    assert r.status_code == 428 and r.json()["code"] == "precondition_required"
    r = api.call("PATCH", "/v2/customers/cus_8D2k", pos, data=b'{"note": "VIP", "phone": null}',
                 headers={"If-Match": tag, "Content-Type": "application/merge-patch+json"})
    assert r.status_code == 200 and r.headers["ETag"] == '"2"' and r.json()["phone"] is None
    r = api.call("PATCH", "/v2/customers/cus_8D2k", pos, json_body={"note": "x"}, headers={"If-Match": tag})
    assert r.status_code == 412 and r.json()["code"] == "precondition_failed"
    r = api.call("POST", "/v2/customers", pos, json_body={"name": "Jiná Jana", "email": "JANA@example.cz"})
    assert r.status_code == 409 and r.json()["existing_id"] == "cus_8D2k"
    r = api.call("POST", "/v2/customers", pos, json_body={"name": "Karel Novák", "email": "karel@example.cz"})
    assert r.status_code == 201 and r.headers["ETag"] == '"1"' and r.headers["Location"] == "/v2/customers/" + r.json()["id"]
    found = api.call("GET", "/v2/customers", pos, params={"email": "karel@example.cz"}).json()["data"]
    assert [c["name"] for c in found] == ["Karel Novák"]


def test_backups_zip_in_and_out(api, pos):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("pokladna.json", '{"uctenky": []}')
    data = buf.getvalue()
    r = api.call("POST", R + "/backups", pos, data=data, headers={"Content-Type": "application/zip"})
    b = r.json()
    assert r.status_code == 201 and b["size"] == len(data) and b["sha256"] == hashlib.sha256(data).hexdigest()
    assert api.call("GET", f"{R}/backups/{b['id']}", pos).json() == b
    content = api.call("GET", f"{R}/backups/{b['id']}/content", pos)
    assert content.headers["Content-Type"] == "application/zip" and content.content == data
    assert api.call("GET", R + "/backups", pos).json()["data"] == [b]
    r = api.call("POST", R + "/backups", pos, data=b"not a zip", headers={"Content-Type": "application/zip"})
    assert r.status_code == 422
    r = api.call("POST", R + "/backups", pos, data=data, headers={"Content-Type": "application/json"})
    assert r.status_code == 415
    big = b"PK\x03\x04" + b"\0" * (10 * 1024 * 1024)
    r = api.call("POST", R + "/backups", pos, data=big, headers={"Content-Type": "application/zip"})
    assert r.status_code == 413 and r.json()["code"] == "payload_too_large"
