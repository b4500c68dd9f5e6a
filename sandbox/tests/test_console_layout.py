"""The developer console at 1280×800 (a laptop's browser window) in headless chromium: every column of the Requests
and Connections tables, the Fault column and the Unpair buttons included, lies inside the viewport without scrolling
sideways, and a fault whose count is used up leaves "Active faults" for "Used up". Screenshots:
.build/console-1280-<tab>.png."""
import asyncio
import json
import urllib.error
import uuid

from .test_admin_page import client, mint, with_page

WIDTH, HEIGHT = 1280, 800
WAIT = 30  # seconds: both cores may be busy with a Swift build


async def outside_viewport(page, selector):
    """The elements matching `selector` (at least one) that stick out of the viewport sideways, and whether the page
    itself scrolls sideways; also the buttons whose own text is cut."""
    sel = json.dumps(selector)
    out = json.loads(await page.js(f"""(() => {{
        const vw = document.documentElement.clientWidth;
        const found = [...document.querySelectorAll({sel})];
        const out = [];
        for (const e of found) {{
          const r = e.getBoundingClientRect();
          if (r.left < -0.5 || r.right > vw + 0.5) out.push([e.tagName, e.textContent.slice(0, 40), r.left, r.right]);
          if (e.tagName === "BUTTON" && e.scrollWidth > e.clientWidth + 1) out.push(["cut", e.textContent]);
        }}
        return JSON.stringify({{found: found.length, outside: out, vw,
                               page: document.documentElement.scrollWidth, scrollX: window.scrollX}});
    }})()"""))
    assert out["found"] > 0, f"nothing matches {selector}"
    assert out["page"] <= out["vw"], f"the page scrolls sideways: {out['page']} px wide in {out['vw']} px"
    assert out["scrollX"] == 0
    return out["outside"]


def hit(api, path, token):
    """A GET whose answer is broken on purpose (a dropped connection, a body that is not JSON)."""
    try:
        client(api, "GET", path, token)
    except (urllib.error.URLError, ConnectionError, ValueError):
        pass


def test_tables_fit_at_1280_and_used_up_faults_leave_the_active_list(api):
    long_name = "Pokladna u zadního vchodu – letní zahrádka, hlavní sál"
    a = mint(api)
    b = api.token(device_name=long_name)  # a second connection, with a long name
    punches = "/v2/restaurants/11/attendance/punches"
    # Requests with long keys and paths, a replay, a problem code and two injected faults (one drops the connection).
    for n in range(3):
        key = f"console-layout-{n}-{uuid.uuid4()}"
        punch = {"id": str(uuid.uuid4()), "type": "clock_in", "credential": {"method": "pin", "secret": "1234"}}
        client(api, "POST", punches, a["access_token"], punch, {"Idempotency-Key": key})
        client(api, "POST", punches, a["access_token"], punch, {"Idempotency-Key": key})
    client(api, "GET", "/v2/restaurants/11/attendance/presence?limit=100&cursor=ev_c_1_000000000000000000000042",
           b["access_token"])
    api.admin("POST", "/faults", {"path": "/v2/restaurants/11/orders*", "action": "status", "status": 503, "count": 1})
    client(api, "GET", "/v2/restaurants/11/orders?status=new,accepted,preparing,ready&limit=100", a["access_token"])
    api.admin("POST", "/faults", {"path": "/v2/connection", "action": "drop_before", "count": 1})
    hit(api, "/v2/connection", b["access_token"])  # dropped on purpose
    # Faults: one used up by the request above, one that never ends, one with a count left.
    used = [f for f in api.admin("GET", "/faults")["data"] if f["path"] == "/v2/connection"][0]
    forever = api.admin("POST", "/faults", {"path": "/v2/elsewhere/*", "action": "delay", "delay_ms": 10, "count": None})
    left = api.admin("POST", "/faults", {"path": "/v2/never/either", "action": "garbage", "count": 2})

    async def scenario(page):
        assert await page.js("window.innerWidth") == WIDTH

        # Devices: the paired devices' Unpair buttons
        await page.wait_for(f"document.querySelector('#devices tr[data-device=\"{b['device_id']}\"]') !== null", WAIT)
        assert await outside_viewport(page, "#tab-devices th, #tab-devices td, #devices button.unpair") == []

        # Requests: every column, the Fault column with both faults' cells
        await page.js("location.hash = 'requests'")
        await page.wait_for("[...document.querySelectorAll('#requests td.fault-cell')]"
                            ".filter(td => td.textContent.includes('flt_')).length === 2", WAIT)
        await page.screenshot("1280-requests")
        fault_column = await page.js("[...document.querySelectorAll('#tab-requests thead th')]"
                                     ".findIndex(th => th.textContent.includes('Fault'))")
        assert fault_column >= 0
        assert await outside_viewport(page, "#tab-requests th, #requests td") == []
        assert await outside_viewport(page, f"#tab-requests thead th:nth-child({fault_column + 1}), "
                                            "#requests td.fault-cell") == []

        # Connections: Expire token and Unpair on every row
        await page.js("location.hash = 'connections'")
        await page.wait_for(f"document.querySelector('#connections tr[data-conn=\"{b['device_id']}\"]') !== null", WAIT)
        await page.screenshot("1280-connections")
        assert await page.js("document.querySelectorAll('#connections button.revoke').length") == 2
        assert await outside_viewport(page, "#tab-connections th, #connections td, #connections button") == []

        # Faults: the used-up one is listed apart, the others stay active
        await page.js("location.hash = 'faults'")
        await page.wait_for(f"document.querySelector('#faults-used tr[data-fault=\"{used['id']}\"]') !== null", WAIT)
        active = await page.js("[...document.querySelectorAll('#faults tr[data-fault]')].map(tr => tr.dataset.fault)")
        assert used["id"] not in active
        assert forever["id"] in active and left["id"] in active
        assert await page.js(f"document.querySelector('#faults-used tr[data-fault=\"{used['id']}\"]')"
                             ".textContent.includes('drop_before')")
        await page.screenshot("1280-faults", full_page=True)
        assert await outside_viewport(page, "#tab-faults th, #tab-faults td, #tab-faults button") == []

        # the fault with a count left is used up by two more requests: it moves too
        for _ in range(2):
            hit(api, "/v2/never/either", a["access_token"])  # not JSON, on purpose
        await page.wait_for(f"document.querySelector('#faults-used tr[data-fault=\"{left['id']}\"]') !== null", WAIT)
        assert await page.js(f"document.querySelector('#faults tr[data-fault=\"{left['id']}\"]')") is None
        # Clear all empties both lists
        await page.click("#faults-clear")
        await page.wait_for("document.querySelectorAll('#faults tr[data-fault], #faults-used tr[data-fault]')"
                            ".length === 0", WAIT)

    asyncio.run(with_page(api.base + "/admin", scenario, width=WIDTH, height=HEIGHT))
