"""Debian's headless chromium driven over the Chrome DevTools protocol, for the tests that need a real browser (the
admin page, the console, partner consent through a TLS proxy): start it, open its page, evaluate JavaScript, wait for
a condition, click like a mouse, wait for an event, take screenshots. No webdriver: aiohttp's WebSocket client speaks
the protocol."""
from __future__ import annotations

import asyncio
import base64
import collections
import contextlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import time

import aiohttp
import pytest

from .conftest import REPO


def chromium_binary():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class Browser:
    """A headless chromium with a fresh profile; `extra_args` are added to its command line (say, which certificate
    to trust)."""

    def __init__(self, *extra_args: str):
        binary = chromium_binary()
        if not binary:
            if os.environ.get("CI"):
                pytest.fail("chromium is missing (.ci/run installs it)")
            pytest.skip("chromium is not installed (apt-get install chromium)")
        self.profile = tempfile.mkdtemp(prefix="sandbox-chromium-")
        self.proc = subprocess.Popen([binary, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
                                      "--disable-dev-shm-usage", "--remote-debugging-port=0",
                                      f"--user-data-dir={self.profile}", *extra_args, "about:blank"],
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
        self.events: collections.deque = collections.deque(maxlen=1000)  # received while waiting for a reply

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
            if "method" in msg:
                self.events.append(msg)

    async def event(self, method, timeout=30):
        """The params of the next `method` event (say Fetch.requestPaused), one kept from before included."""
        for msg in list(self.events):
            if msg["method"] == method:
                self.events.remove(msg)
                return msg.get("params", {})
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"timed out waiting for the event {method}")
            msg = await asyncio.wait_for(self.ws.receive_json(), left)
            if msg.get("method") == method:
                return msg.get("params", {})
            if "method" in msg:
                self.events.append(msg)

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

    async def click(self, selector):
        """A real mouse click in the middle of the element (scrolled into view first)."""
        sel = json.dumps(selector)
        rect = json.loads(await self.js(f"(() => {{ const e = document.querySelector({sel}); "
                                        "e.scrollIntoView({block: 'center'}); "
                                        "return JSON.stringify(e.getBoundingClientRect()); })()"))
        x, y = rect["x"] + rect["width"] / 2, rect["y"] + rect["height"] / 2
        for kind in ("mousePressed", "mouseReleased"):
            await self.send("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)

    async def screenshot(self, name, full_page=False):
        out = REPO / ".build" / f"console-{name}.png"
        out.parent.mkdir(parents=True, exist_ok=True)
        await self.js("window.scrollTo(0, 0)")
        shot = await self.send("Page.captureScreenshot", format="png", captureBeyondViewport=full_page)
        out.write_bytes(base64.b64decode(shot["data"]))
        return out


@contextlib.asynccontextmanager
async def open_page(browser: Browser):
    """The browser's page, Page domain enabled, for the length of the block."""
    async with aiohttp.ClientSession() as s:
        async with s.get(browser.http + "/json/list") as r:
            targets = await r.json()
        page_ws = next(t["webSocketDebuggerUrl"] for t in targets if t["type"] == "page")
        async with s.ws_connect(page_ws, max_msg_size=0) as ws:
            page = Page(ws)
            await page.send("Page.enable")
            yield page
