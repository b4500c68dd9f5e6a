// The sandbox admin page and developer console: plain JS over the JSON admin API (/_sandbox/…), no build step.
// Everything rendered goes through textContent (never innerHTML): names, paths and keys come from clients.
"use strict";

const $ = (id) => document.getElementById(id);
const TZ = "Europe/Prague";
const STATES = { working: "v práci / working", on_break: "na pauze / on a break", off: "odešel / off" };
const KINDS = { device: "zařízení / device", partner: "partner" };
const TABS = ["devices", "requests", "events", "faults", "connections"];
let restaurants = {};
let current = "devices";
const shown = {};  // tab -> signature of what is rendered (re-render only on change)

async function call(method, path, body) {
  const r = await fetch("/_sandbox" + path, {
    method,
    headers: body ? { "Content-Type": "application/json" } : {},
    body: body ? JSON.stringify(body) : undefined,
  });
  let data = {};
  try { data = await r.json(); } catch (e) { /* empty */ }
  if (!r.ok) throw new Error(data.error || r.statusText);
  return data;
}

function el(tag, props, ...children) {
  const e = document.createElement(tag);
  Object.assign(e, props || {});
  for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(c == null ? "–" : String(c)));
  return e;
}

function cell(text, className) {
  const td = el("td", className ? { className } : {});
  td.textContent = text == null || text === "" ? "–" : String(text);
  return td;
}

// A cell whose text may wrap after each of `after`'s characters (a <wbr> there, still no HTML from the text): paths,
// query strings and codes break at their separators instead of widening the table.
function breakableCell(text, className, after = "/?&,_") {
  const td = el("td", className ? { className } : {});
  if (text == null || text === "") {
    td.textContent = "–";
    return td;
  }
  let start = 0;
  const s = String(text);
  for (let i = 0; i < s.length; i++) {
    if (after.includes(s[i])) {
      td.append(document.createTextNode(s.slice(start, i + 1)), el("wbr"));
      start = i + 1;
    }
  }
  td.append(document.createTextNode(s.slice(start)));
  return td;
}

function button(text, className, onclick) {
  const b = el("button", { type: "button", className }, text);
  b.onclick = onclick;
  return b;
}

// "2026-11-30 17:51:39 +01:00" in the restaurant's time zone; ms adds milliseconds, short leaves out the date
const FMT = new Intl.DateTimeFormat("en-GB", {
  timeZone: TZ, year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit",
  second: "2-digit", hourCycle: "h23", timeZoneName: "longOffset",
});
function fmtTime(iso, { ms = false, short = false } = {}) {
  if (!iso) return "–";
  const d = new Date(iso);
  if (isNaN(d)) return String(iso);
  const p = Object.fromEntries(FMT.formatToParts(d).map((x) => [x.type, x.value]));
  const offset = (p.timeZoneName || "").replace("GMT", "") || "+00:00";
  const time = `${p.hour}:${p.minute}:${p.second}` + (ms ? "." + String(d.getUTCMilliseconds()).padStart(3, "0") : "");
  return (short ? "" : `${p.year}-${p.month}-${p.day} `) + `${time} ${offset}`;
}

function restaurantName(id) {
  const r = restaurants[id];
  return r ? `${r.name} (${id})` : String(id);
}

function say(id, text, ok) {
  const e = $(id);
  e.textContent = text;
  e.className = ok ? "ok" : "err";
}

function changed(tab, data) {
  const sig = JSON.stringify(data);
  if (shown[tab] === sig) return false;
  shown[tab] = sig;
  return true;
}

// -- tabs -----------------------------------------------------------------------------------------------
function showTab(tab) {
  if (!TABS.includes(tab)) tab = "devices";
  current = tab;
  for (const t of TABS) {
    $("tab-" + t).hidden = t !== tab;
    document.querySelector(`nav button[data-tab="${t}"]`).setAttribute("aria-selected", String(t === tab));
  }
  refresh();
}
for (const b of document.querySelectorAll("nav button")) {
  b.onclick = () => { location.hash = b.dataset.tab; };
}
window.addEventListener("hashchange", () => showTab(location.hash.slice(1)));

// -- devices (the manager's page) -----------------------------------------------------------------------
async function decide(code, approve, restaurantId) {
  code = code.trim().toUpperCase();
  if (!code) { say("result", "Zadejte kód / Enter the code", false); return; }
  try {
    const out = await call("POST", `/pairings/${encodeURIComponent(code)}/${approve ? "approve" : "deny"}`,
      approve ? { restaurant_id: restaurantId } : {});
    say("result", approve
      ? `Zařízení ${out.user_code} připojeno k provozovně ${restaurantName(out.restaurant_id)} / Device approved`
      : `Kód ${out.user_code} zamítnut / Code denied`, true);
    if ($("code").value.trim().toUpperCase() === code) $("code").value = "";
    refresh();
  } catch (e) {
    say("result", e.message, false);
  }
}

function restaurantOptions(select, selected) {
  select.replaceChildren(...Object.values(restaurants).map((r) => {
    const o = el("option", { value: r.id }, `${r.name} – ${r.city} (${r.id})`);
    o.selected = r.id === selected;
    return o;
  }));
}

async function loadRestaurants() {
  const { data } = await call("GET", "/restaurants");
  restaurants = Object.fromEntries(data.map((r) => [r.id, r]));
  restaurantOptions($("restaurant"), "11");
  restaurantOptions($("presence-restaurant"), "11");
}

async function refreshDevices() {
  const pairings = (await call("GET", "/pairings")).data;
  const devices = (await call("GET", "/devices")).data;
  const rid = $("presence-restaurant").value || "11";
  const presence = (await call("GET", `/presence?restaurant_id=${encodeURIComponent(rid)}`)).data;
  // the pending rows hold a select: re-render only when the codes change, not every second
  if (changed("pairings", pairings.map((p) => p.user_code))) {
    $("pairings").replaceChildren(...pairings.map((p) => {
      const tr = el("tr");
      tr.dataset.code = p.user_code;
      const code = cell(p.user_code, "mono");
      code.style.cursor = "pointer";
      code.title = "vyplnit / fill in";
      code.onclick = () => { $("code").value = p.user_code; };
      const sel = el("select", { className: "row-restaurant" });
      restaurantOptions(sel, $("restaurant").value || "11");
      const where = el("td");
      where.append(sel);
      const acts = el("td", { className: "actions" });
      acts.append(button("Povolit / Approve", "approve", () => decide(p.user_code, true, sel.value)),
                  button("Zamítnout / Deny", "deny", () => decide(p.user_code, false)));
      const expires = cell(`za ${p.expires_in} s / in ${p.expires_in} s`, "expires");
      tr.append(code, cell(p.client_id), cell(p.device_name), expires, where, acts);
      return tr;
    }));
  } else {
    for (const p of pairings) {
      const td = document.querySelector(`#pairings tr[data-code="${CSS.escape(p.user_code)}"] td.expires`);
      if (td) td.textContent = `za ${p.expires_in} s / in ${p.expires_in} s`;
    }
  }
  if (changed("devices", devices)) {
    $("devices").replaceChildren(...devices.map((d) => {
      const tr = el("tr");
      tr.dataset.device = d.id;
      const td = el("td");
      td.append(button("Odpárovat / Unpair", "unpair", async () => {
        if (!confirm(`Odpárovat ${d.name}? / Unpair ${d.name}?`)) return;
        await call("DELETE", `/devices/${encodeURIComponent(d.id)}`);
        refresh();
      }));
      tr.append(cell(d.id, "mono"), cell(d.client_id), cell(d.name), cell(restaurantName(d.restaurant_id)),
                cell(fmtTime(d.last_seen_at)), td);
      return tr;
    }));
  }
  if (changed("presence", presence)) {
    $("presence").replaceChildren(...(presence.length ? presence.map((p) => {
      const tr = el("tr");
      tr.append(cell(p.employee.name), cell(STATES[p.state] || p.state), cell(fmtTime(p.since)));
      return tr;
    }) : [el("tr", {}, cell("nikdo / nobody", "muted"), cell(""), cell(""))]));
  }
}

$("connect-form").addEventListener("submit", (ev) => { ev.preventDefault(); decide($("code").value, true, $("restaurant").value); });
$("deny").addEventListener("click", () => decide($("code").value, false));
$("presence-restaurant").addEventListener("change", () => { delete shown.presence; refresh(); });

// -- requests -------------------------------------------------------------------------------------------
let connNames = {};

function connLabel(id) {
  if (!id || id === "-") return "–";
  return connNames[id] ? `${connNames[id]} (${id})` : id;
}

async function refreshRequests() {
  const conn = $("req-connection").value;
  const q = conn ? `&connection=${encodeURIComponent(conn)}` : "";
  const rows = (await call("GET", `/requests?limit=300${q}`)).data;
  await refreshConnectionFilter();
  if (!changed("requests", rows)) return;
  $("requests").replaceChildren(...rows.reverse().map((r) => {
    const tr = el("tr");
    tr.dataset.seq = r.seq;
    if (r.idempotency_key) tr.dataset.key = r.idempotency_key;
    const status = r.status == null ? "…" : r.status === 499 ? "499 (spojení zahozeno / dropped)" : r.status;
    const path = r.path + (r.query ? "?" + r.query : "");
    const replay = el("td");
    if (r.replay) replay.append(el("span", { className: "replay" }, "ano / yes"));
    else replay.textContent = r.idempotency_key ? "ne / no" : "–";
    const fault = el("td", { className: "fault-cell" });
    if (r.fault) fault.append(el("span", { className: "fault" }, `${r.fault.action} (${r.fault.id})`));
    else fault.textContent = "–";
    tr.append(cell(fmtTime(r.time, { ms: true, short: true }), "mono"), cell(r.method), breakableCell(path, "mono"),
              cell(status, "s" + String(r.status || 0)[0]),
              cell(r.duration_ms == null ? "…" : `${r.duration_ms} ms`), cell(r.attempt),
              cell(r.idempotency_key, "mono key"), replay, cell(r.staff_session, "mono"), breakableCell(r.problem),
              fault, cell(connLabel(r.connection)), cell(r.token, "mono"));
    return tr;
  }));
}

async function refreshConnectionFilter() {
  const rows = (await call("GET", "/connections?all=1")).data;
  connNames = Object.fromEntries(rows.map((c) => [c.id, c.name]));
  if (!changed("req-connection", rows.map((c) => [c.id, c.name]))) return;
  const sel = $("req-connection");
  const keep = sel.value;
  sel.replaceChildren(el("option", { value: "" }, "všechna / all"),
    ...rows.map((c) => el("option", { value: c.id, selected: c.id === keep }, `${c.name} (${c.id})`)));
}
$("req-connection").addEventListener("change", () => { delete shown.requests; refresh(); });

// -- events ---------------------------------------------------------------------------------------------
async function refreshEvents() {
  const out = await call("GET", "/events/recent?limit=200");
  await refreshConnectionFilter();
  if (!changed("events", out)) return;
  const readers = [
    ...out.streams.map((s) => [s.connection, "proud SSE / SSE stream", fmtTime(s.opened_at)]),
    ...out.polling.map((p) => [p.connection, `dotazování GET /v2/events / polling (${p.polls}×)`, fmtTime(p.last_poll_at)]),
  ];
  $("readers").replaceChildren(...(readers.length ? readers.map(([c, how, when]) => {
    const tr = el("tr");
    tr.append(cell(connLabel(c)), cell(how), cell(when));
    return tr;
  }) : [el("tr", {}, cell("nikdo / nobody"), cell(""), cell(""))]));
  $("events").replaceChildren(...out.data.map((e) => {
    const tr = el("tr");
    tr.dataset.event = e.id;
    tr.append(cell(e.seq), cell(e.id, "mono"), cell(e.type), cell(restaurantName(e.restaurant_id)),
              cell(fmtTime(e.occurred_at)));
    return tr;
  }));
}

// -- faults ---------------------------------------------------------------------------------------------
function faultSpec(kind) {
  const count = $("f-count").value.trim();
  const spec = { path: $("f-path").value.trim() || "*", count: count ? Number(count) : null };
  if ($("f-method").value) spec.method = $("f-method").value;
  const retry = $("f-retry").value.trim();
  if (kind === "status") {
    spec.action = "status";
    spec.status = Number($("f-status").value || 503);
    if (retry) spec.retry_after = retry;
  } else if (kind === "429") {
    spec.action = "status";
    spec.status = 429;
    spec.retry_after = retry || "1";
  } else if (kind === "delay") {
    spec.action = "delay";
    spec.delay_ms = Number($("f-delay").value || 0);
  } else if (kind === "random") {
    spec.action = "random";
    spec.rate = Number($("f-rate").value || 0.3);
    spec.mix = ["drop_before", "drop_after", "status:503", "status:429", "close_after_response", "truncate", "garbage"];
  } else {
    spec.action = kind;
  }
  return spec;
}

for (const b of document.querySelectorAll("#fault-buttons button")) {
  b.onclick = async () => {
    try {
      const f = await call("POST", "/faults", faultSpec(b.dataset.fault));
      say("fault-result", `Porucha nastavena / Fault set: ${f.id} ${f.action} ${f.path}`, true);
    } catch (e) {
      say("fault-result", e.message, false);
    }
    refresh();
  };
}

const OPS = {
  "stream-down": () => call("POST", "/stream", { down: true, retry_after: Number($("f-retry").value || 300) }),
  "stream-up": () => call("POST", "/stream", { down: false }),
  "stream-cut": () => call("POST", "/stream/cut"),
  "tokens-expire": () => call("POST", "/tokens/expire", {}),
  "cursors-expire": () => call("POST", "/cursors/expire"),
  "restart": () => call("POST", "/restart", { down_ms: 500 }),
};
for (const b of document.querySelectorAll("#op-buttons button")) {
  b.onclick = async () => {
    try {
      const out = await OPS[b.dataset.op]();
      say("fault-result", `${b.textContent}: ${JSON.stringify(out)}`, true);
    } catch (e) {
      say("fault-result", `${b.textContent}: ${e.message}`, false);
    }
    refresh();
  };
}
$("faults-clear").onclick = async () => { await call("DELETE", "/faults"); refresh(); };

function faultParams(f) {
  const skip = new Set(["id", "action", "method", "path", "count", "remaining", "triggered", "active"]);
  return Object.entries(f).filter(([k]) => !skip.has(k)).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(" ");
}

async function refreshFaults() {
  const list = (await call("GET", "/faults")).data;
  const stream = await call("GET", "/stream");
  $("stream-state").textContent = `Proud událostí / Event stream: ${stream.down ? "nedostupný / down" : "dostupný / up"}` +
    `, otevřené / open: ${stream.open}`;
  if (!changed("faults", list)) return;
  // a fault whose count is used up applies to nothing any more: it leaves "Active faults" for "Used-up faults"
  const row = (f) => {
    const tr = el("tr");
    tr.dataset.fault = f.id;
    const td = el("td");
    td.append(button("Zrušit / Clear", "clear", async () => {
      await call("DELETE", `/faults/${encodeURIComponent(f.id)}`);
      refresh();
    }));
    tr.append(cell(f.id, "mono"), cell(f.action), cell(f.method || "*"), breakableCell(f.path, "mono"),
              cell(f.active ? (f.remaining == null ? "∞" : f.remaining) : f.count), cell(f.triggered),
              breakableCell(faultParams(f), "mono"), td);
    return tr;
  };
  const used = list.filter((f) => !f.active);
  $("faults").replaceChildren(...list.filter((f) => f.active).map(row));
  $("faults-used").replaceChildren(...used.map(row));
  $("faults-used-section").hidden = used.length === 0;
}

// -- connections ----------------------------------------------------------------------------------------
async function refreshConnections() {
  const rows = (await call("GET", "/connections")).data;
  if (!changed("connections", rows)) return;
  $("connections").replaceChildren(...rows.map((c) => {
    const tr = el("tr");
    tr.dataset.conn = c.id;
    const acts = el("td", { className: "actions" });
    acts.append(
      button("Vypršet token / Expire token", "expire", async () => {
        const out = await call("POST", "/tokens/expire", { device_id: c.id });
        say("conn-result", `${c.id}: ${out.expired} token(ů) vypršelo / expired`, true);
        refresh();
      }),
      button(c.kind === "device" ? "Odpárovat / Unpair" : "Odvolat / Revoke", "revoke", async () => {
        if (!confirm(`${c.name} (${c.id}): odpárovat / odvolat? Unpair / revoke?`)) return;
        await call("DELETE", `/connections/${encodeURIComponent(c.id)}`);
        say("conn-result", `${c.id} odpárováno / revoked`, true);
        refresh();
      }));
    const expiry = fmtTime(c.access_token_expires_at) + (c.access_token_expired ? " (vypršel / expired)" : "");
    const reading = [c.streams ? `SSE ×${c.streams}` : "", c.last_poll_at ? `poll ${fmtTime(c.last_poll_at, { short: true })}` : ""]
      .filter(Boolean).join(", ");
    tr.append(cell(c.id, "mono"), cell(KINDS[c.kind] || c.kind), cell(c.client_id), cell(c.name),
              cell(c.restaurant_ids.map(restaurantName).join(", ")), cell(expiry, c.access_token_expired ? "err" : ""),
              cell(c.refreshes), cell(reading), cell(fmtTime(c.last_request_at)), cell(c.requests), acts);
    return tr;
  }));
}

// -- the loop -------------------------------------------------------------------------------------------
const REFRESH = { devices: refreshDevices, requests: refreshRequests, events: refreshEvents, faults: refreshFaults,
                  connections: refreshConnections };
let busy = false;
async function refresh() {
  if (busy) return;
  busy = true;
  try {
    await REFRESH[current]();
  } catch (e) {
    console.error(e);
  } finally {
    busy = false;
  }
}

const preset = new URLSearchParams(location.search).get("code");
if (preset) $("code").value = preset;
loadRestaurants().then(() => showTab(location.hash.slice(1) || "devices"));
setInterval(refresh, 1000);
window.sandboxReady = true;
