#!/usr/bin/env bash
# make demo: the sandbox on 127.0.0.1 and the example attendance terminal (Pichacka) against it.
# The terminal pairs on its first run: approve its code on the sandbox's admin page (the URL is printed),
# or from another shell with `scripts/approve.sh CODE` (or `make approve CODE=…`).
# The state is the one `make sandbox` keeps (sandbox/state.sqlite3, or PROFIREST_SANDBOX_DB), so restarting the
# sandbox either way keeps the terminal paired; `make sandbox-reset` starts clean.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
PORT="${PROFIREST_DEMO_PORT:-8080}"
TOKENS="${PROFIREST_TOKENS:-sandbox/demo-pichacka.json}"
OUTBOX="${PROFIREST_OUTBOX:-sandbox/demo-pichacka-outbox.json}"

swift build --product Pichacka >/dev/null

log=$(mktemp)
"$PY" -m sandbox serve --port "$PORT" --quiet >"$log" 2>/dev/null &
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
# Paired already (the token file's state document holds an access token): nothing to approve. Only a yes or no
# comes out of this check, never the token.
paired() {
  "$PY" - "$TOKENS" <<'PY' 2>/dev/null
import json, sys
stored = json.load(open(sys.argv[1]))  # {"profirest-api:<client_id>": "<the state document as JSON text>"}
docs = [json.loads(v) if isinstance(v, str) else v for v in stored.values()]
sys.exit(0 if any(isinstance(d, dict) and d.get("access_token") for d in docs) else 1)
PY
}
if paired; then
  echo "Sandbox: $api (admin page $admin). The terminal is paired (tokens in $TOKENS)."
else
  echo "Sandbox: $api — approve the pairing code on $admin (restaurant 11), or run scripts/approve.sh CODE."
fi
echo "Demo PINs: 1234 Jana (manager), 2222 Petr and Eva (shared), 3333 Tomáš. Commands: p/o/pz/kz PIN, k, f, odparovat, q; help."
PROFIREST_BASE_URL="$api" PROFIREST_TOKENS="$TOKENS" PROFIREST_OUTBOX="$OUTBOX" \
  "$(swift build --product Pichacka --show-bin-path)/Pichacka"
