"""The admin page in a real headless browser (Debian's chromium, driven over the Chrome DevTools protocol):
a manager types the pairing code, approves it, and the device gets its tokens and shows up as paired."""
import asyncio
import json
import os
import re
import shutil
import subprocess
import tempfile
import time

import aiohttp
import pytest

DEVICE = "urn:ietf:params:oauth:grant-type:device_code"


def chromium_binary():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class Browser:
    def __init__(self):
        binary = chromium_binary()
        if not binary:
            if os.environ.get("CI"):
                pytest.fail("chromium is missing (.ci/run installs it)")
            pytest.skip("chromium is not installed (apt-get install chromium)")
        self.profile = tempfile.mkdtemp(prefix="sandbox-chromium-")
        self.proc = subprocess.Popen([binary, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
                                      "--disable-dev-shm-usage", "--remote-debugging-port=0",
                                      f"--user-data-dir={self.profile}", "about:blank"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 30
        self.ws_url = None
        while time.monotonic() < deadline:
            line = self.proc.stderr.readline()
            m = re.search(r"DevTools listening on (ws://\S+)", line)
            if m:
                self.ws_url = m.group(1)
                break
            if not line and self.proc.poll() is not None:
                break
        if not self.ws_url:
            self.close()
            pytest.fail("chromium did not start its DevTools endpoint")
        self.http = self.ws_url.split("/devtools/")[0].replace("ws://", "http://")

    def close(self):
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        shutil.rmtree(self.profile, ignore_errors=True)


class Page:
    def __init__(self, ws):
        self.ws, self.n = ws, 0

    async def send(self, method, **params):
        self.n += 1
        my = self.n
        await self.ws.send_json({"id": my, "method": method, "params": params})
        while True:
            msg = await asyncio.wait_for(self.ws.receive_json(), 20)
            if msg.get("id") == my:
                if "error" in msg:
                    raise AssertionError(msg["error"])
                return msg.get("result", {})

    async def js(self, expression):
        r = await self.send("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in r:
            raise AssertionError(r["exceptionDetails"])
        return r["result"].get("value")

    async def wait_for(self, expression, timeout=15):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = await self.js(expression)
            if value:
                return value
            await asyncio.sleep(0.1)
        raise AssertionError(f"timed out waiting for {expression}")


def test_approve_a_pairing_code_through_the_page(api):
    d = api.form("/oauth/device_authorization", {"client_id": "profirest-dochazka", "scope": "attendance:punch",
                                                 "device_name": "Píchačka u vchodu"}).json()

    async def scenario():
        browser = Browser()
        try:
            async with aiohttp.ClientSession() as s:
                async with s.get(browser.http + "/json/list") as r:
                    targets = await r.json()
                page_ws = next(t["webSocketDebuggerUrl"] for t in targets if t["type"] == "page")
                async with s.ws_connect(page_ws, max_msg_size=0) as ws:
                    page = Page(ws)
                    await page.send("Page.enable")
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
