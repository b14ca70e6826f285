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

# tap builds its Test class from the plugins in package.json's tap.plugin (tsx, ...), but a run that
# finds the build out of date rebuilds it only for the next run: its own test files would still start
# with the loaders of the old build. Built here first, so every file of this run loads through tsx.
npx tap build >/dev/null || { echo "0 passed, 1 failed"; exit 1; }

mkdir -p test-output
# Lint and format (Biome, biome.json): a finding is one failed check in the summary below.
lint_failed=0
npx biome ci --colors=off --reporter=summary . || lint_failed=1

log=test-output/tap.log
: >"$log"
code=0
pass=0
fail=0
skip=0
# One tap run over the given files, appended to the log; its "# { total: N, pass: N, fail: N, ... }"
# line adds to the counts that CI reads as "N passed, N failed".
run_tap() {
  local part=test-output/tap-part.log
  npx tap --reporter=tap "$@" 2>&1 | tee "$part"
  local part_code=${PIPESTATUS[0]}
  cat "$part" >>"$log"
  local summary
  summary=$(grep -E '^# \{ total: [0-9]+' "$part" | tail -n 1)
  local p f s
  p=$(printf '%s' "$summary" | sed -nE 's/.*pass: ([0-9]+).*/\1/p')
  f=$(printf '%s' "$summary" | sed -nE 's/.*fail: ([0-9]+).*/\1/p')
  s=$(printf '%s' "$summary" | sed -nE 's/.*skip: ([0-9]+).*/\1/p')
  pass=$((pass + ${p:-0}))
  fail=$((fail + ${f:-0}))
  skip=$((skip + ${s:-0}))
  if [ -z "$summary" ] && [ "$part_code" -ne 0 ]; then fail=$((fail + 1)); fi
  if [ "$part_code" -ne 0 ]; then code=$part_code; fi
  rm -f "$part"
}

if [ $# -eq 0 ]; then
  # tap runs files in name order and drains its pool before each file of package.json's tap.serial,
  # so serial files spread through the list leave a core idle many times. The whole suite runs the
  # other files two at a time first, then the serial ones alone, one after another.
  mapfile -t all < <(npx tap list)
  mapfile -t serial_paths < <(node -p 'require("./package.json").tap.serial.join("\n")')
  # test/unit's files, and most of test/integration's and test/hil's, come as batches, test/batches/integration-N and unit-N
  # (each runs its share of them in one process; tap.exclude leaves the files themselves out of tap's list): they sort
  # first among the "together" files below, longest first.
  # The longest files (one to three minutes each; docs/testing.md lists the timings) run first, two at a
  # time among themselves: tap orders the files it is given by name, so among the others they would
  # start wherever their names fall and leave one core alone with one of them at the end.
  longest=(test/integration/bench-quick.test.ts test/integration/setup-no-opencv.test.ts
    test/integration/templates-simulate.test.ts test/integration/test-command-machine.test.ts)
  first=()
  together=()
  alone=()
  for f in "${all[@]}"; do
    is_serial=0
    for s in "${serial_paths[@]}"; do
      if [ "$f" = "$s" ] || [ "${f#"$s"/}" != "$f" ]; then is_serial=1; fi
    done
    is_long=0
    for l in "${longest[@]}"; do [ "$f" = "$l" ] && is_long=1; done
    if [ "$is_serial" = 1 ]; then alone+=("$f"); elif [ "$is_long" = 1 ]; then first+=("$f"); else together+=("$f"); fi
  done
  [ ${#first[@]} -gt 0 ] && run_tap "${first[@]}"
  run_tap "${together[@]}"
  run_tap --jobs=1 "${alone[@]}"
else
  run_tap "$@"
fi

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
# CI keeps only the end of this output: the failed files and their failed subtests are repeated here.
if grep -qE '^ *not ok ' "$log"; then
  echo "failed (test-output/tap.log has the whole output):"
  grep -E '^ *not ok ' "$log" | head -n 40
fi
[ "$skip" -gt 0 ] && echo "($skip skipped: tap's log says why)"
echo "$pass passed, $fail failed"
exit "$code"
