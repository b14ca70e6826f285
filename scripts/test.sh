#!/usr/bin/env bash
# Runs the whole test suite on a fresh clone: set-up with the test packages (OpenCV included), build, tap; ends with "N passed, N failed" and tap's exit code.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

bash scripts/setup.sh --no-run --tests || { echo "0 passed, 1 failed"; exit 1; }

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
