#!/usr/bin/env bash
# Installs what cortexd needs on Debian (system packages, npm packages with OpenCV built against the system), builds it, checks the configurations and starts the default agent.
# Usage: bash scripts/setup.sh [--no-run]   (as root, or with sudo available for apt-get)
set -euo pipefail
cd "$(dirname "$0")/.."

run_main=1
[ "${1:-}" = "--no-run" ] && run_main=0

# Debian packages: OpenCV for the camera and offline vision, sox/alsa for the microphone and speaker,
# socat and gpsd-clients for hardware-in-the-loop tests, espeak-ng/pocketsphinx for offline speech,
# ffmpeg for test media and mp3, chromium for the WebSim browser tests, graphviz for `cortexd graph --format svg`, shellcheck for the install script's test.
PACKAGES=(libopencv-dev opencv-data sox alsa-utils socat espeak-ng ffmpeg pocketsphinx pocketsphinx-en-us gpsd-clients chromium graphviz shellcheck)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing Debian packages: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# @u4/opencv4nodejs builds only against the system OpenCV with these set; without them the install rolls back.
arch_dir="/usr/lib/$(uname -m)-linux-gnu"
export OPENCV4NODEJS_DISABLE_AUTOBUILD=1
export OPENCV_INCLUDE_DIR=/usr/include/opencv4
export OPENCV_LIB_DIR="$arch_dir"
export OPENCV_BIN_DIR=/usr/bin
export JOBS=max

if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "setup: installing npm packages (OpenCV bindings take about 5 minutes on 2 cores)"
  npm ci --no-audit --no-fund
fi

echo "setup: building"
npm run --silent build

if [ "$run_main" = 1 ]; then
  node dist/src/cli/main.js check --all
  # The main job: the default companion agent, offline (embedded local service, no keys, no hardware).
  # Type to it; Ctrl-C stops it (on_shutdown hooks run). Another configuration: CONFIG=NAME.
  exec node dist/src/cli/main.js run "${CONFIG:-default}"
fi
