// The sandbox admin page: plain JS over the JSON admin API (/_sandbox/…), no build step.
"use strict";

const $ = (id) => document.getElementById(id);
const STATES = { working: "v práci / working", on_break: "na pauze / on a break", off: "odešel / off" };

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

function cell(text) {
  const td = document.createElement("td");
  td.textContent = text == null ? "–" : String(text);
  return td;
}

function say(text, ok) {
  const el = $("result");
  el.textContent = text;
  el.className = ok ? "ok" : "err";
}

async function decide(approve) {
  const code = $("code").value.trim().toUpperCase();
  if (!code) { say("Zadejte kód / enter the code", false); return; }
  try {
    const out = await call("POST", `/pairings/${encodeURIComponent(code)}/${approve ? "approve" : "deny"}`,
      approve ? { restaurant_id: $("restaurant").value } : {});
    say(approve ? `Zařízení ${out.user_code} připojeno k provozovně ${out.restaurant_id} / approved`
                : `Kód ${out.user_code} zamítnut / denied`, true);
    $("code").value = "";
    refresh();
  } catch (e) {
    say(e.message, false);
  }
}

async function loadRestaurants() {
  const { data } = await call("GET", "/restaurants");
  for (const sel of [$("restaurant"), $("presence-restaurant")]) {
    sel.replaceChildren(...data.map((r) => {
      const o = document.createElement("option");
      o.value = r.id;
      o.textContent = `${r.id} – ${r.name} (${r.city})`;
      return o;
    }));
  }
}

async function refresh() {
  try {
    const pairings = (await call("GET", "/pairings")).data;
    $("pairings").replaceChildren(...pairings.map((p) => {
      const tr = document.createElement("tr");
      tr.dataset.code = p.user_code;
      const code = cell(p.user_code);
      code.style.fontFamily = "monospace";
      code.style.cursor = "pointer";
      code.title = "vyplnit / fill in";
      code.onclick = () => { $("code").value = p.user_code; };
      tr.append(code, cell(p.client_id), cell(p.device_name), cell(`${p.expires_in} s`));
      return tr;
    }));
    const devices = (await call("GET", "/devices")).data;
    $("devices").replaceChildren(...devices.map((d) => {
      const tr = document.createElement("tr");
      tr.dataset.device = d.id;
      const btn = document.createElement("button");
      btn.textContent = "Odpárovat / Unpair";
      btn.className = "unpair";
      btn.onclick = async () => {
        if (!confirm(`Odpárovat ${d.name}?`)) return;
        await call("DELETE", `/devices/${encodeURIComponent(d.id)}`);
        refresh();
      };
      const td = document.createElement("td");
      td.append(btn);
      tr.append(cell(d.id), cell(d.client_id), cell(d.name), cell(d.restaurant_id), cell(d.last_seen_at), td);
      return tr;
    }));
    const rid = $("presence-restaurant").value || "11";
    const presence = (await call("GET", `/presence?restaurant_id=${encodeURIComponent(rid)}`)).data;
    $("presence").replaceChildren(...presence.map((p) => {
      const tr = document.createElement("tr");
      tr.append(cell(p.employee.name), cell(STATES[p.state] || p.state), cell(p.since));
      return tr;
    }));
  } catch (e) {
    console.error(e);
  }
}

$("connect-form").addEventListener("submit", (ev) => { ev.preventDefault(); decide(true); });
$("deny").addEventListener("click", () => decide(false));
$("presence-restaurant").addEventListener("change", refresh);

const preset = new URLSearchParams(location.search).get("code");
if (preset) $("code").value = preset;
loadRestaurants().then(refresh);
setInterval(refresh, 2000);
window.sandboxReady = true;
