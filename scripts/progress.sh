#!/usr/bin/env bash
# scripts/progress.sh MESSAGE COMMAND [ARG…]: runs a long, quiet step (pip, swift build) with its output kept in a
# log and shows on standard error MESSAGE, then progress while it runs, then how long it took:
#
#   Building the example terminal (first build ~2 min)… [212/486]      on a terminal: swift build's own step counter
#   Installing the Python packages (first run only, ~1 min)… ......     otherwise a dot every PROGRESS_DOT_SECONDS (5)
#   … done (48 s)
#
# When the command fails, the end of its log (PROGRESS_TAIL_LINES, 60) follows, and its exit status is returned.
# Standard output stays free for what the caller prints.
set -uo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 MESSAGE COMMAND [ARG…]" >&2
  exit 2
fi
message=$1
shift
dot_seconds=${PROGRESS_DOT_SECONDS:-5}
tail_lines=${PROGRESS_TAIL_LINES:-60}
log=$(mktemp "${TMPDIR:-/tmp}/progress.XXXXXX")
tty=false
[ -t 2 ] && [ "${TERM:-dumb}" != dumb ] && tty=true

"$@" </dev/null >"$log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rm -f "$log"; echo >&2; exit 130' INT TERM

printf '%s' "$message" >&2
started=$SECONDS
last_dot=$SECONDS
shown=""
while kill -0 "$pid" 2>/dev/null; do
  sleep 0.25
  if $tty; then
    # swift build prints "[12/345] Compiling …": show the newest counter in place
    step=$(grep -o '^\[[0-9]*/[0-9]*\]' "$log" 2>/dev/null | tail -n 1)
    if [ -n "$step" ] && [ "$step" != "$shown" ]; then
      printf '\r\033[K%s %s' "$message" "$step" >&2
      shown=$step
      continue
    fi
  fi
  if [ -z "$shown" ] && [ $((SECONDS - last_dot)) -ge "$dot_seconds" ]; then
    printf '.' >&2
    last_dot=$SECONDS
  fi
done
wait "$pid"
status=$?
trap - INT TERM
if [ "$status" -eq 0 ]; then
  printf ' done (%d s)\n' $((SECONDS - started)) >&2
else
  printf ' failed (exit %d, %d s); the end of its output:\n' "$status" $((SECONDS - started)) >&2
  tail -n "$tail_lines" "$log" >&2
fi
rm -f "$log"
exit "$status"
