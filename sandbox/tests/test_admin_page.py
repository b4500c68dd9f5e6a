"""The admin page in a real headless browser (Debian's chromium, driven over the Chrome DevTools protocol: chromium.py):
a manager types the pairing code, approves it, and the device gets its tokens and shows up as paired; the
developer console shows a client's requests and breaks them by button. Screenshots: .build/console-<tab>.png."""
import asyncio
import json
import urllib.error
import urllib.request
import uuid

from .chromium import Browser, open_page

DEVICE = "urn:ietf:params:oauth:grant-type:device_code"


async def with_page(url, scenario, width=1500, height=1000):
    browser = Browser()
    try:
        async with open_page(browser) as page:
            await page.send("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1,
                            mobile=False)
            await page.send("Page.navigate", url=url)
            await page.wait_for("window.sandboxReady === true && "
                                "document.querySelectorAll('#restaurant option').length === 2")
            await scenario(page)
    finally:
        browser.close()


def client(api, method, path, token, body=None, headers=None):
    """A client's request over plain urllib: (status, headers, parsed body or text)."""
    data = json.dumps(body).encode() if body is not None else None
    h = {"Authorization": "Bearer " + token, **(headers or {})}
    if data is not None:
        h["Content-Type"] = "application/json"
    req = urllib.request.Request(api.base + path, data=data, method=method, headers=h)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, dict(r.headers), json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read().decode()


def mint(api):
    req = urllib.request.Request(api.base + "/_sandbox/tokens", method="POST",
                                 data=json.dumps({"client_id": "profirest-pos", "restaurant_id": "11",
                                                  "device_name": "Pokladna <b>1</b>"}).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.loads(r.read())


def test_approve_a_pairing_code_through_the_page(api):
    d = api.form("/oauth/device_authorization", {"client_id": "profirest-dochazka", "scope": "attendance:punch",
                                                 "device_name": "Píchačka u vchodu"}).json()

    async def scenario():
        browser = Browser()
        try:
            async with open_page(browser) as page:
                await page.send("Page.navigate", url=api.base + "/admin")
                await page.wait_for("document.querySelectorAll('#restaurant option').length === 2")
                await page.wait_for(f"document.querySelector('#pairings tr[data-code=\"{d['user_code']}\"]') !== null")
                await page.js("document.getElementById('code').focus()")
                await page.send("Input.insertText", text=d["user_code"].lower())
                await page.js("document.getElementById('restaurant').value = '11'")
                rect = json.loads(await page.js(
                    "JSON.stringify(document.getElementById('approve').getBoundingClientRect())"))
                x, y = rect["x"] + rect["width"] / 2, rect["y"] + rect["height"] / 2
                for kind in ("mousePressed", "mouseReleased"):
                    await page.send("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)
                text = await page.wait_for("document.getElementById('result').className === 'ok' && "
                                           "document.getElementById('result').textContent")
                assert d["user_code"] in text
                # the device collects its tokens, then the page lists it as paired
                tok = api.form("/oauth/token", {"grant_type": DEVICE, "device_code": d["device_code"],
                                                "client_id": "profirest-dochazka"}).json()
                assert tok["restaurant_id"] == "11", tok
                await page.wait_for(f"document.querySelector('#devices tr[data-device=\"{tok['device_id']}\"]') "
                                    "!== null")
                assert await page.js("document.querySelector('#pairings').children.length") == 0
                # unpair it from the page: its tokens stop working at once
                await page.js("window.confirm = () => true")
                await page.js(f"document.querySelector('#devices tr[data-device=\"{tok['device_id']}\"] "
                              "button.unpair').click()")
                await page.wait_for(f"document.querySelector('#devices tr[data-device=\"{tok['device_id']}\"]') "
                                    "=== null")
                assert api.call("GET", "/v2/connection", tok["access_token"]).status_code == 401
        finally:
            browser.close()

    asyncio.run(scenario())


def test_console_tabs_show_requests_and_break_them(api):
    tok = mint(api)
    at, dev = tok["access_token"], tok["device_id"]
    key = "console-" + str(uuid.uuid4())
    punch = {"id": str(uuid.uuid4()), "type": "clock_in", "credential": {"method": "pin", "secret": "1234"}}
    api.form("/oauth/device_authorization", {"client_id": "profirest-dochazka", "scope": "attendance:punch",
                                             "device_name": "Píchačka <script>alert(1)</script>"})

    async def scenario(page):
        # the manager's tab: the pending code with its own Approve / Deny, the device's restaurant by name
        await page.wait_for("document.querySelector('#pairings tr button.approve') !== null")
        await page.wait_for(f"document.querySelector('#devices tr[data-device=\"{dev}\"]') !== null")
        row = await page.js(f"document.querySelector('#devices tr[data-device=\"{dev}\"]').textContent")
        assert "Bistro U Lípy" in row and "Pokladna <b>1</b>" in row  # escaped: shown as text
        assert await page.js("document.querySelectorAll('#pairings script, #devices b').length") == 0
        await page.screenshot("devices")

        # Requests: the client's keyed request appears with its key, attempt and status; a retry is a replay
        await page.js("location.hash = 'requests'")
        status, _, _ = client(api, "POST", "/v2/restaurants/11/attendance/punches", at, punch, {"Idempotency-Key": key})
        assert status == 201
        client(api, "POST", "/v2/restaurants/11/attendance/punches", at, punch, {"Idempotency-Key": key})
        sel = f"#requests tr[data-key=\"{key}\"]"
        await page.wait_for(f"document.querySelectorAll('{sel}').length === 2")
        cells = await page.js(f"[...document.querySelectorAll('{sel}')].map(tr => [...tr.children].map(td => td.textContent))")
        newest, first = cells
        assert key in first and "201" in first[3] and first[5] == "1" and first[7].startswith("ne")
        assert newest[5] == "2" and newest[7].startswith("ano")
        assert "+0" in first[0]  # the time carries its offset (Europe/Prague: +01:00 or +02:00)
        assert at not in await page.js("document.body.textContent")
        assert await page.js("document.querySelectorAll('#req-connection option').length") >= 2
        await page.screenshot("requests")

        # Faults: a 503 set by the button is what the client's next matching request gets
        await page.js("location.hash = 'faults'")
        await page.wait_for("!document.getElementById('tab-faults').hidden")
        await page.js("document.getElementById('f-path').value = '/v2/connection';"
                      "document.getElementById('f-count').value = '1';"
                      "document.getElementById('f-status').value = '503';"
                      "document.getElementById('f-retry').value = '7'")
        await page.click("#fault-buttons button[data-fault=status]")
        await page.wait_for("document.querySelectorAll('#faults tr').length === 1")
        await page.screenshot("faults")
        status, headers, _ = client(api, "GET", "/v2/connection", at)
        assert status == 503 and headers.get("Retry-After") == "7"
        assert client(api, "GET", "/v2/connection", at)[0] == 200
        await page.click("#faults-clear")
        await page.wait_for("document.querySelectorAll('#faults tr').length === 0")
        await page.click("#op-buttons button[data-op=stream-down]")
        await page.wait_for("document.getElementById('stream-state').textContent.includes('down')")
        status, _, body = client(api, "GET", "/v2/events/stream", at)
        assert status == 503 and "stream_unavailable" in body
        await page.click("#op-buttons button[data-op=stream-up]")
        await page.wait_for("document.getElementById('stream-state').textContent.includes(': dostupný')")

        # Events: the feed as produced, and the connection that polls it
        api.admin("POST", "/catalog/11/sold_out", {"product_ids": ["prod_gulas"]})
        assert client(api, "GET", "/v2/events?restaurant_id=11", at)[0] == 200
        await page.js("location.hash = 'events'")
        await page.wait_for("[...document.querySelectorAll('#events tr')].some(tr => "
                            "tr.textContent.includes('catalog.updated'))")
        await page.wait_for(f"document.getElementById('readers').textContent.includes('{dev}')")
        await page.screenshot("events")

        # Connections and tokens: expire the access token by button, the client gets 401, then unpair
        await page.js("location.hash = 'connections'")
        await page.wait_for(f"document.querySelector('#connections tr[data-conn=\"{dev}\"]') !== null")
        await page.screenshot("connections")
        await page.click(f"#connections tr[data-conn=\"{dev}\"] button.expire")
        await page.wait_for(f"document.querySelector('#connections tr[data-conn=\"{dev}\"]').textContent"
                            ".includes('expired')")
        assert client(api, "GET", "/v2/connection", at)[0] == 401
        await page.js("window.confirm = () => true")
        await page.click(f"#connections tr[data-conn=\"{dev}\"] button.revoke")
        await page.wait_for(f"document.querySelector('#connections tr[data-conn=\"{dev}\"]') === null")
        assert dev not in [d["id"] for d in api.admin("GET", "/devices")["data"]]

    asyncio.run(with_page(api.base + "/admin", scenario))
