#!/usr/bin/env bash
# scripts/run-steps.sh NAME STEP…: runs `$MAKE STEP` for every step in order, each to its end even when an earlier
# one failed, so that one run shows every failure; then lists the failed steps and ends with the line
# `NAME: N passed, N failed`, exiting 1 when any step failed (`make test` runs its steps this way).
# Ctrl-C stops the whole run at once. MAKE is the make to call (the Makefile passes its own, flags and all).
set -uo pipefail
name=$1
shift
make_cmd=${MAKE:-make}
trap 'echo; echo "$name: interrupted" >&2; exit 130' INT TERM
passed=0
failed=()
started=$SECONDS
for step in "$@"; do
  echo "==> $name: $step"
  step_started=$SECONDS
  $make_cmd "$step"
  status=$?
  if [ "$status" -eq 0 ]; then
    passed=$((passed + 1))
    echo "==> $name: $step passed ($((SECONDS - step_started)) s)"
  else
    failed+=("$step")
    echo "==> $name: $step FAILED (exit $status, $((SECONDS - step_started)) s)"
  fi
done
echo
if [ "${#failed[@]}" -gt 0 ]; then
  echo "$name: failed steps: ${failed[*]} (each alone: make <step>)"
fi
echo "$name: took $((SECONDS - started)) s"
echo "$name: $passed passed, ${#failed[@]} failed"
[ "${#failed[@]}" -eq 0 ]
