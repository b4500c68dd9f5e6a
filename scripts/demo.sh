#!/usr/bin/env bash
# make demo: the sandbox on 127.0.0.1 and the example attendance terminal (Pichacka) against it.
# The terminal pairs on its first run: approve its code on the sandbox's admin page (the URL is printed),
# or from another shell with `.venv/bin/python -m sandbox approve CODE`.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
PORT="${PROFIREST_DEMO_PORT:-8080}"
STATE="${PROFIREST_DEMO_STATE:-sandbox/demo.sqlite3}"

swift build --product Pichacka >/dev/null

log=$(mktemp)
"$PY" -m sandbox serve --port "$PORT" --db "$STATE" --quiet >"$log" 2>/dev/null &
sandbox_pid=$!
trap 'kill "$sandbox_pid" 2>/dev/null || true; rm -f "$log"' EXIT
for _ in $(seq 1 100); do
  if head -n 1 "$log" | grep -q '"ready"'; then break; fi
  if ! kill -0 "$sandbox_pid" 2>/dev/null; then
    echo "demo: the sandbox did not start (is port $PORT taken? set PROFIREST_DEMO_PORT)" >&2
    exit 1
  fi
  sleep 0.1
done
api=$(head -n 1 "$log" | "$PY" -c 'import json, sys; print(json.load(sys.stdin)["api"])')
admin=$(head -n 1 "$log" | "$PY" -c 'import json, sys; print(json.load(sys.stdin)["admin"])')
echo "Sandbox: $api — approve the pairing code on $admin (restaurant 11)."
echo "Demo PINs: 1234 Jana (manager), 2222 Petr and Eva (shared), 3333 Tomáš. Commands: p/o/pz/kz PIN, k, f, odparovat, q; help."
PROFIREST_BASE_URL="$api" PROFIREST_TOKENS="${PROFIREST_TOKENS:-sandbox/demo-pichacka.json}" \
  PROFIREST_OUTBOX="${PROFIREST_OUTBOX:-sandbox/demo-pichacka-outbox.json}" \
  "$(swift build --product Pichacka --show-bin-path)/Pichacka"
