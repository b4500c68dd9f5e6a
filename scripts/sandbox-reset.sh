#!/usr/bin/env bash
# make sandbox-reset: start clean. Deletes the sandbox's state (sandbox/state.sqlite3, shared by `make sandbox` and
# `make demo`, or PROFIREST_SANDBOX_DB) and the demo terminal's token and outbox files, and says what it deleted.
# Refuses while a sandbox answers at PROFIREST_SANDBOX_URL (default http://127.0.0.1:${PROFIREST_DEMO_PORT:-8080}):
# stop it first, or it would go on writing to the deleted file.
set -euo pipefail
cd "$(dirname "$0")/.."
url="${PROFIREST_SANDBOX_URL:-http://127.0.0.1:${PROFIREST_DEMO_PORT:-8080}}"
if python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1] + "/_sandbox/stats", timeout=2)' \
    "$url" 2>/dev/null; then
  echo "sandbox-reset: a sandbox is running at $url — stop it first (Ctrl-C in its terminal)" >&2
  exit 1
fi
state="${PROFIREST_SANDBOX_DB:-sandbox/state.sqlite3}"
deleted=0
for f in "$state" "$state-wal" "$state-shm" "$state-journal" \
         sandbox/demo-pichacka.json sandbox/demo-pichacka.json.lock \
         sandbox/demo-pichacka-outbox.json sandbox/demo-pichacka-outbox.json.lock \
         sandbox/demo.sqlite3 sandbox/demo.sqlite3-wal sandbox/demo.sqlite3-shm; do
  if [ -e "$f" ]; then
    rm -f -- "$f"
    echo "deleted $f"
    deleted=$((deleted + 1))
  fi
done
[ "$deleted" -gt 0 ] || echo "sandbox-reset: nothing to delete (no state at $state, no demo token or outbox file)"
