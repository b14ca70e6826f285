#!/usr/bin/env bash
# Runs the whole test suite on a fresh clone: set-up with the test packages (OpenCV included), build, tap, then the built project on Node 24; ends with "N passed, N failed" and tap's exit code.
#
# Usage: bash scripts/test.sh [TEST FILES...]     bash scripts/test.sh --setup-only   (the set-up step alone)
#
# Nothing outside the checkout changes but Debian packages the tests need: set-up runs with --no-link,
# so the `cortexd` on PATH keeps pointing where the person who installed it put it (CI deletes its clone).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

bash scripts/setup.sh --no-run --tests --no-link || { echo "0 passed, 1 failed"; exit 1; }
[ "${1:-}" = --setup-only ] && exit 0

mkdir -p test-output
# Lint and format (Biome, biome.json): a finding is one failed check in the summary below.
lint_failed=0
npx biome ci --colors=off --reporter=summary . || lint_failed=1

log=test-output/tap.log
npx tap --reporter=tap "$@" 2>&1 | tee "$log"
code=${PIPESTATUS[0]}

# tap prints "# { total: N, pass: N, fail: N, ... }"; CI reads "N passed, N failed".
summary=$(grep -E '^# \{ total: [0-9]+' "$log" | tail -n 1)
pass=$(printf '%s' "$summary" | sed -nE 's/.*pass: ([0-9]+).*/\1/p')
fail=$(printf '%s' "$summary" | sed -nE 's/.*fail: ([0-9]+).*/\1/p')
skip=$(printf '%s' "$summary" | sed -nE 's/.*skip: ([0-9]+).*/\1/p')
pass=${pass:-0}
fail=${fail:-0}
if [ -z "$summary" ] && [ "$code" -ne 0 ]; then fail=1; fi

# The whole suite (no test files named) also runs the built project on Node 24 LTS (about 30 s,
# scripts/test-node24.sh); its "node24: N passed, N failed" line counts in the summary below.
if [ $# -eq 0 ]; then
  node24_log=test-output/node24.log
  bash scripts/test-node24.sh 2>&1 | tee "$node24_log"
  node24_line=$(grep -E '^node24: [0-9]+ passed, [0-9]+ failed$' "$node24_log" | tail -n 1)
  node24_pass=$(printf '%s' "$node24_line" | sed -nE 's/^node24: ([0-9]+) passed.*/\1/p')
  node24_fail=$(printf '%s' "$node24_line" | sed -nE 's/.* ([0-9]+) failed$/\1/p')
  [ -n "$node24_line" ] || node24_fail=1
  pass=$((pass + ${node24_pass:-0}))
  fail=$((fail + ${node24_fail:-0}))
  if [ "${node24_fail:-0}" -gt 0 ] && [ "$code" -eq 0 ]; then code=1; fi
fi
if [ "$lint_failed" = 1 ]; then
  echo "biome ci found problems (npm run lint shows them; npm run format fixes the formatting)"
  fail=$((fail + 1))
  [ "$code" -eq 0 ] && code=1
fi
if [ -n "$skip" ]; then
  echo "$pass passed, $fail failed, $skip skipped"
else
  echo "$pass passed, $fail failed"
fi
exit "$code"
