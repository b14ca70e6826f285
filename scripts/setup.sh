#!/usr/bin/env bash
# Installs what cortexd needs on Debian (system packages, npm packages, native modules), builds it, proves the native modules load, checks the configurations and starts the default agent.
#
# Usage: bash scripts/setup.sh [--no-run] [--no-opencv] [--no-dds] [--tests] [--no-link]   (as root, or with sudo for apt-get)
#
#   --no-run     stop after the checks instead of starting the default agent.
#   --no-link    leave the `cortexd` command on PATH as it is (or CORTEX_SETUP_NO_LINK=1): nothing outside
#                this checkout but Debian packages changes. scripts/test.sh passes it, so testing a clone
#                never re-points the installed `cortexd` at that clone (which CI then deletes).
#   --no-opencv  skip OpenCV (or CORTEX_NO_OPENCV=1): no libopencv-dev, no compiling of the
#                @u4/opencv4nodejs bindings (about 4.5 of the 7.5 minutes on 2 cores). Cameras and
#                local vision then do not work; `cortexd check` and `cortexd doctor` name the
#                configuration entries that need them. Running set-up again without it builds OpenCV.
#   --no-dds     skip DDS (or CORTEX_NO_DDS=1): no cyclonedds-dev, no compiling of the DDS addon
#                (devices/dds/native). Robots over DDS (unitree_dds and ros2 bodies, ROS 2 topics) then
#                do not work; check, run and doctor name the entries that need it.
#   --tests      also install the Debian packages that only the tests use (or CORTEX_SETUP_TESTS=1):
#                Chromium, shellcheck, gpsd-clients, socat, graphviz, mosquitto, cyclonedds-tools. scripts/test.sh passes it.
#
# The Debian package sets (build, robot, opencv, dds, tests) are listed in package.json's "debianPackages".
# `cortexd` is put on PATH: a link to scripts/cortexd in /usr/local/bin as root (or with sudo), else in
# ~/.local/bin; CORTEX_BIN_DIR names another directory.
# JOBS (parallel compile jobs of the native builds) defaults to what memory allows: one job per
# 1.1 GB available (compiling one file of the OpenCV bindings peaks at about 1.05 GB), at most one
# per core, at least one; a number in JOBS is used as given.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { echo "setup: $*"; }
die() {
  echo "setup: FAIL: $*" >&2
  exit 1
}

run_main=1
skip_opencv=0
skip_dds=0
tests=0
link=1
case "${CORTEX_NO_OPENCV:-}" in 1 | true | yes) skip_opencv=1 ;; esac
case "${CORTEX_NO_DDS:-}" in 1 | true | yes) skip_dds=1 ;; esac
case "${CORTEX_SETUP_TESTS:-}" in 1 | true | yes) tests=1 ;; esac
case "${CORTEX_SETUP_NO_LINK:-}" in 1 | true | yes) link=0 ;; esac
for arg in "$@"; do
  case "$arg" in
    --no-run) run_main=0 ;;
    --no-opencv) skip_opencv=1 ;;
    --no-dds) skip_dds=1 ;;
    --tests) tests=1 ;;
    --no-link) link=0 ;;
    -h | --help)
      sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    *) die "unknown argument: $arg (see --help)" ;;
  esac
done

# Node: the versions package.json's "engines" names (require(esm) is needed from 20.19 / 22.12 on).
# The database binding follows Node-API (src/service/sqlite.ts): better-sqlite3 13 from Node-API 10
# (Node 22.14+, 24: its binary comes in the npm package), better-sqlite3 12 below (Node 20, 22.12-22.13:
# compiled here, installed as the alias better-sqlite3-node20).
command -v node >/dev/null 2>&1 || die "node not found: install Node.js 22 LTS (or 20.19+), e.g. from https://nodejs.org or NodeSource"
node_version=$(node -p 'process.versions.node')
IFS=. read -r node_major node_minor _ <<<"$node_version"
if ((node_major < 20 || node_major == 21 || (node_major == 20 && node_minor < 19) || (node_major == 22 && node_minor < 12))); then
  die "Node.js $node_version is not supported: cortexd needs 20.19+, 22.12+ or 23 to 26 (package.json engines); install Node.js 22 LTS"
elif ((node_major >= 27)); then
  say "warning: Node.js $node_version is newer than the versions cortexd is known to work with (up to 26)"
fi

# Debian packages, by set (package.json "debianPackages").
opencv_dir=node_modules/@u4/opencv4nodejs
opencv_binary=$opencv_dir/build/Release/opencv4nodejs.node
sets=(build robot)
if [ "$skip_opencv" = 0 ]; then
  sets+=(opencv)
else
  say "skipping OpenCV (--no-opencv): no libopencv-dev, and @u4/opencv4nodejs is installed without compiling its bindings; cameras and local vision will not work (cortexd check and doctor name the entries that need them)"
fi
# The DDS addon (robots over DDS: Unitree, ROS 2) compiles in seconds against cyclonedds-dev; --no-dds skips both.
dds_binary=devices/dds/native/build/cortexd_dds.node
if [ "$skip_dds" = 0 ]; then
  sets+=(dds)
else
  export CORTEX_NO_DDS=1
  say "skipping DDS (--no-dds): no cyclonedds-dev, and the DDS addon is not compiled; robots over DDS (unitree_dds, ros2 bodies) will not work (cortexd check and doctor name the entries that need them)"
fi
[ "$tests" = 1 ] && sets+=(tests)
mapfile -t PACKAGES < <(node -e '
  const sets = require("./package.json").debianPackages;
  for (const s of process.argv.slice(1)) for (const p of sets[s]) console.log(p);' "${sets[@]}")

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  say "installing Debian packages (${sets[*]}): ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# Parallel compile jobs, capped by memory so a 2 GB Raspberry Pi does not run out while OpenCV compiles.
per_job_kb=1100000
avail_kb=$(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo 2>/dev/null || echo 0)
cores=$(nproc 2>/dev/null || echo 1)
by_memory=$((${avail_kb:-0} / per_job_kb))
((by_memory < 1)) && by_memory=1
if [[ "${JOBS:-}" =~ ^[1-9][0-9]*$ ]]; then
  say "compiling with JOBS=$JOBS as given (memory would allow $by_memory)"
else
  JOBS=$((by_memory < cores ? by_memory : cores))
  say "compiling with JOBS=$JOBS ($cores cores, $((avail_kb / 1024)) MB available, about 1.1 GB per job)"
fi
export JOBS
if [ "$skip_opencv" = 0 ] && ((avail_kb < per_job_kb)); then
  say "warning: only $((avail_kb / 1024)) MB of memory available; compiling the OpenCV bindings needs about 1.1 GB: add swap, or skip OpenCV with --no-opencv"
fi

# ccache keeps what the native builds compile: a second install of the same packages (a clean
# npm ci, a --no-opencv tree beside this one) reuses the objects instead of compiling them again.
# Paths under the checkout are hashed relative to it, so another checkout of the same sources hits.
if [ -z "${CC:-}${CXX:-}" ] && command -v ccache >/dev/null 2>&1; then
  export CC="ccache gcc" CXX="ccache g++" CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
  say "compiling through ccache (cache: $(ccache -k cache_dir 2>/dev/null || echo default))"
fi

# @u4/opencv4nodejs builds only against the system OpenCV with these set; see src/vision/opencv.ts.
export OPENCV4NODEJS_DISABLE_AUTOBUILD=1
export OPENCV_INCLUDE_DIR=/usr/include/opencv4
OPENCV_LIB_DIR="/usr/lib/$(uname -m)-linux-gnu"
export OPENCV_LIB_DIR
export OPENCV_BIN_DIR=/usr/bin

# The native packages npm may build (package.json "allowScripts"), OpenCV left out.
mapfile -t NATIVE < <(node -e '
  const allowed = require("./package.json").allowScripts;
  for (const [name, ok] of Object.entries(allowed)) if (ok && name !== "@u4/opencv4nodejs") console.log(name);')

need_ci=0
if [ ! -d node_modules ] || [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  need_ci=1
fi
# npm removes an optional package whose build failed; the build still needs its files (types).
[ -d "$opencv_dir" ] || need_ci=1
if [ "$need_ci" = 1 ]; then
  if [ "$skip_opencv" = 1 ]; then
    say "installing npm packages without OpenCV's build"
    npm ci --ignore-scripts --no-audit --no-fund
    # better-sqlite3 12 for Node-API 9 is an alias, which npm rebuilds by that name only.
    if (($(node -p 'process.versions.napi') < 10)); then NATIVE+=(better-sqlite3-node20); fi
    say "building the native modules: ${NATIVE[*]}"
    npm rebuild "${NATIVE[@]}"
  else
    say "installing npm packages (compiling the OpenCV bindings takes about 5 minutes on 2 cores)"
    npm ci --no-audit --no-fund
  fi
elif [ "$skip_opencv" = 0 ] && [ ! -f "$opencv_binary" ]; then
  say "compiling the OpenCV bindings, skipped by an earlier --no-opencv (about 5 minutes on 2 cores)"
  npm rebuild @u4/opencv4nodejs
fi
if [ "$skip_opencv" = 1 ] && [ -f "$opencv_binary" ]; then
  say "--no-opencv: the OpenCV bindings an earlier set-up compiled are still in node_modules and stay usable"
fi
if [ "$skip_opencv" = 0 ] && [ ! -f "$opencv_binary" ]; then
  die "the OpenCV bindings (@u4/opencv4nodejs) did not build; npm drops a failed optional package without an error.
  Fix: check that libopencv-dev is installed (dpkg -s libopencv-dev), see the compiler's error with
  'npm ci --foreground-scripts', or skip OpenCV: bash scripts/setup.sh --no-opencv"
fi

if [ "$skip_dds" = 0 ] && [ ! -f "$dds_binary" ]; then
  say "compiling the DDS addon"
  node devices/dds/native/build.mjs --strict || die "the DDS addon (@cortexd/dds-addon) did not build.
  Fix: check that cyclonedds-dev is installed (dpkg -s cyclonedds-dev), or skip DDS: bash scripts/setup.sh --no-dds"
fi

say "building"
npm run --silent build

# The `cortexd` command on PATH, as the README's commands use it (not with --no-link: tests leave the machine alone).
cli="$PWD/scripts/cortexd"
if [ "$link" = 0 ]; then
  say "--no-link: the cortexd command on PATH is left as it is ($(command -v cortexd || echo none)); this checkout's is $cli"
else
  if [ -n "${CORTEX_BIN_DIR:-}" ]; then
    bin_dir=$CORTEX_BIN_DIR
  elif [ "$(id -u)" -eq 0 ] || { command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; }; then
    bin_dir=/usr/local/bin
  else
    bin_dir=$HOME/.local/bin
  fi
  if [ -w "$bin_dir" ] || { [ ! -e "$bin_dir" ] && mkdir -p "$bin_dir" 2>/dev/null; }; then
    ln -sfn "$cli" "$bin_dir/cortexd"
  else
    sudo ln -sfn "$cli" "$bin_dir/cortexd"
  fi
  case ":$PATH:" in
    *":$bin_dir:"*) say "cortexd is on PATH: $bin_dir/cortexd -> $cli" ;;
    *) say "cortexd is in $bin_dir, which is not on PATH: add it (export PATH=\"$bin_dir:\$PATH\", e.g. in ~/.profile) or run $cli" ;;
  esac
fi

# Each native module must load now, not when the robot first needs it.
say "loading the native modules"
node dist/cli/main.js doctor --native || die "a native module does not load (the line above names it and the fix)"

if [ "$run_main" = 1 ]; then
  node dist/cli/main.js check --all
  # The main job: the default companion agent, offline (embedded local service, no keys, no hardware).
  # Type to it; Ctrl-C stops it (on_shutdown hooks run). Another configuration: CONFIG=NAME.
  # With the runtime's environment defaults (systemd/runtime.env), as every launcher starts it.
  . systemd/runtime-env.sh && cortexd_runtime_env systemd/runtime.env
  exec node dist/cli/main.js run "${CONFIG:-default}"
fi
