#!/usr/bin/env bash
# scripts/approve.sh CODE [--restaurant 11]: approves a pairing code on the running sandbox, from any directory
# (also `make approve CODE=KXCB-TQPW`). The sandbox is the one at PROFIREST_SANDBOX_URL, else the demo's port
# (http://127.0.0.1:${PROFIREST_DEMO_PORT:-8080}).
set -euo pipefail
if [ $# -lt 1 ] || [ -z "$1" ]; then
  echo "usage: $0 CODE [--restaurant 11]   (the code the terminal shows, e.g. KXCB-TQPW)" >&2
  exit 2
fi
cd "$(dirname "$0")/.."
PY=.venv/bin/python
[ -x "$PY" ] || PY=python3   # the admin commands need only the standard library
url="${PROFIREST_SANDBOX_URL:-http://127.0.0.1:${PROFIREST_DEMO_PORT:-8080}}"
code="$(printf %s "$1" | tr -d '[:space:]' | tr '[:lower:]' '[:upper:]')"   # as typed from the screen: kxcb-tqpw
shift
exec "$PY" -m sandbox approve "$code" "$@" --url "$url"
