#!/usr/bin/env bash
# Installs (or with --uninstall removes) cortexd as a systemd service: a production package tree, user, env file, configs, units. Idempotent.
#
# Usage: systemd/install.sh [--prefix DIR] [--source DIR] [--node PATH] [--uninstall [--purge]]
#
#   --prefix DIR   install into DIR as a filesystem root (DIR/opt/cortexd, DIR/etc/cortexd,
#                  DIR/etc/systemd/system, users in DIR/etc/passwd). Installed files point at the
#                  prefixed paths, so the tree is self-consistent and `systemd-analyze verify` can
#                  check it. Never creates real users and never calls systemctl.
#   --source DIR   the built package to install (default: the checkout holding this script). It
#                  needs dist/ and node_modules/: run `bash scripts/setup.sh --no-run` first.
#   --node PATH    node binary for ExecStart (default: `command -v node`; Node 20.19+, 22.12+ or 23-26).
#   --uninstall    stop and remove the units and /opt/cortexd; keeps /etc/cortexd (secrets,
#                  configs), /var/lib/cortexd (state) and the cortexd user unless --purge.
#
# /opt/cortexd gets the production tree only: the source's node_modules without dev dependencies
# (npm prune --omit=dev; OpenCV left out too when set-up skipped it), without build intermediates,
# C/C++ and TypeScript sources or source maps; every native module is loaded from it before it
# replaces the old tree. The installed size is printed at the end.
# Running it twice changes nothing; an edited /etc/cortexd/env or config is never overwritten.
set -euo pipefail

PREFIX=""
SOURCE=""
NODE_BIN=""
UNINSTALL=0
PURGE=0
SERVICE_USER=cortexd
GROUPS_WANTED=(audio video dialout)

die() { echo "install.sh: $*" >&2; exit 1; }
say() { echo "cortexd: $*"; }

while [[ $# -gt 0 ]]; do
  case "$1" in
    --prefix) PREFIX="${2:?--prefix needs a directory}"; shift 2 ;;
    --source) SOURCE="${2:?--source needs a directory}"; shift 2 ;;
    --node) NODE_BIN="${2:?--node needs a path}"; shift 2 ;;
    --uninstall) UNINSTALL=1; shift ;;
    --purge) PURGE=1; shift ;;
    -h|--help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument: $1 (see --help)" ;;
  esac
done

if [[ -n "$PREFIX" ]]; then
  mkdir -p "$PREFIX"
  PREFIX="$(cd "$PREFIX" && pwd)"
fi
SOURCE="${SOURCE:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"

OPT="$PREFIX/opt/cortexd"
ETC="$PREFIX/etc/cortexd"
UNIT_DIR="$PREFIX/etc/systemd/system"
ETC_ROOT="$PREFIX/etc"
STATE="$PREFIX/var/lib/cortexd"
UNITS=(cortexd@.service cortexd-cloud.service)

# Real systemctl only on the real root.
systemctl_real() {
  if [[ -z "$PREFIX" ]] && command -v systemctl >/dev/null 2>&1; then
    systemctl "$@" || true
  fi
}

# Writes stdin to $1 with mode $2 only when the content or mode differs; prints what it did.
put_file() {
  local dest="$1" mode="$2" tmp
  tmp="$(mktemp)"
  cat >"$tmp"
  if [[ -f "$dest" ]] && cmp -s "$tmp" "$dest" && [[ "$(stat -c %a "$dest")" == "${mode#0}" ]]; then
    rm -f "$tmp"
    return 1
  fi
  install -D -m "$mode" "$tmp" "$dest"
  rm -f "$tmp"
  say "wrote $dest"
}

gid_of() { awk -F: -v g="$1" '$1 == g { print $3 }' "$ETC_ROOT/group" 2>/dev/null; }
user_exists() { awk -F: -v u="$1" '$1 == u { found = 1 } END { exit !found }' "$ETC_ROOT/passwd" 2>/dev/null; }
in_group() {
  awk -F: -v g="$2" -v u="$1" '$1 == g { n = split($4, m, ","); for (i = 1; i <= n; i++) if (m[i] == u) found = 1 } END { exit !found }' \
    "$ETC_ROOT/group" 2>/dev/null
}

# useradd/usermod act on the prefix's /etc with --prefix; seed the files they need there.
prefix_args=()
seed_prefix_accounts() {
  [[ -n "$PREFIX" ]] || return 0
  prefix_args=(--prefix "$PREFIX")
  mkdir -p "$ETC_ROOT"
  local f g
  for f in passwd group shadow gshadow; do [[ -f "$ETC_ROOT/$f" ]] || : >"$ETC_ROOT/$f"; done
  chmod 0640 "$ETC_ROOT/shadow" "$ETC_ROOT/gshadow"
  for g in "${GROUPS_WANTED[@]}"; do
    if [[ -z "$(gid_of "$g")" ]]; then
      getent group "$g" | cut -d: -f1-3 | sed 's/$/:/' >>"$ETC_ROOT/group"
    fi
  done
}

ensure_user() {
  if [[ "$(id -u)" != 0 ]]; then
    say "not root: skipping creation of user $SERVICE_USER"
    return 0
  fi
  seed_prefix_accounts
  local g missing=()
  for g in "${GROUPS_WANTED[@]}"; do
    [[ -n "$(gid_of "$g")" ]] || groupadd "${prefix_args[@]}" --system "$g"
  done
  if ! user_exists "$SERVICE_USER"; then
    useradd "${prefix_args[@]}" --system --user-group --home-dir /var/lib/cortexd --no-create-home \
      --shell /usr/sbin/nologin --comment "cortexd robot agent" "$SERVICE_USER"
    say "created user $SERVICE_USER"
  fi
  for g in "${GROUPS_WANTED[@]}"; do in_group "$SERVICE_USER" "$g" || missing+=("$g"); done
  if [[ ${#missing[@]} -gt 0 ]]; then
    usermod "${prefix_args[@]}" -a -G "$(IFS=,; echo "${missing[*]}")" "$SERVICE_USER"
    say "added $SERVICE_USER to ${missing[*]}"
  fi
}

# The Node versions of package.json's "engines" (require(esm) from 20.19 / 22.12; src/service/sqlite.ts picks the database binding).
check_node() {
  NODE_BIN="${NODE_BIN:-$(command -v node || true)}"
  [[ -n "$NODE_BIN" && -x "$NODE_BIN" ]] || die "node not found: install Node.js 22 LTS (or 20.19+), or pass --node PATH"
  local version major minor
  version="$("$NODE_BIN" -p 'process.versions.node')"
  IFS=. read -r major minor _ <<<"$version"
  if (( major < 20 || major == 21 || (major == 20 && minor < 19) || (major == 22 && minor < 12) || major >= 27 )); then
    die "$NODE_BIN is Node $version; cortexd needs Node 20.19+, 22.12+ or 23 to 26"
  fi
}

# Copied as they are; node_modules is laid down separately as a production tree.
PACKAGE_ITEMS=(dist config systemd package.json package-lock.json README.md QUICKSTART.md docs)
FINGERPRINT=.source-node-modules

# Names every file of the source's node_modules with its size and time: equal means the same tree.
node_modules_fingerprint() {
  (cd "$SOURCE/node_modules" && find . -printf '%P %s %T@\n' | LC_ALL=C sort | sha256sum | cut -d' ' -f1)
}

# True when /opt/cortexd already holds exactly the source's package items and a tree made from its node_modules.
package_current() {
  local item
  [[ -d "$OPT" ]] || return 1
  for item in "${PACKAGE_ITEMS[@]}"; do
    if [[ -e "$SOURCE/$item" ]]; then
      diff -rq --no-dereference "$SOURCE/$item" "$OPT/$item" >/dev/null 2>&1 || return 1
    elif [[ -e "$OPT/$item" ]]; then
      return 1
    fi
  done
  [[ -f "$OPT/$FINGERPRINT" && "$(cat "$OPT/$FINGERPRINT")" == "$(node_modules_fingerprint)" ]]
}

npm_bin() {
  local beside
  beside="$(dirname "$NODE_BIN")/npm"
  if [[ -x "$beside" ]]; then echo "$beside"; else command -v npm || true; fi
}

# Turns a copy of the source's node_modules (in $1, beside its package.json and lockfile) into the
# production tree: no dev dependencies, and nothing Node never loads at run time.
production_tree() {
  local dir="$1" npm pkg omit=(--omit=dev)
  npm="$(npm_bin)"
  [[ -n "$npm" ]] || die "npm not found beside $NODE_BIN or on PATH: it leaves the dev dependencies out"
  if [[ ! -f "$dir/node_modules/@u4/opencv4nodejs/build/Release/opencv4nodejs.node" ]]; then
    omit+=(--omit=optional)
    say "the source has no compiled OpenCV bindings (set-up --no-opencv): OpenCV is left out"
  fi
  (cd "$dir" && "$npm" prune "${omit[@]}" --offline --ignore-scripts --no-audit --no-fund --loglevel=error) \
    || die "npm prune ${omit[*]} failed in $dir"
  # Native packages: their build/ keeps only the compiled build/Release/*.node that they load.
  while IFS= read -r -d '' pkg; do
    [[ -d "$pkg/build" ]] || continue
    find "$pkg/build" -mindepth 1 -maxdepth 1 ! -name Release -exec rm -rf {} +
    if [[ -d "$pkg/build/Release" ]]; then
      find "$pkg/build/Release" -mindepth 1 -maxdepth 1 \( -type d -o ! -name '*.node' \) -exec rm -rf {} +
    fi
  done < <(find "$dir/node_modules" -name binding.gyp -printf '%h\0')
  # C/C++ sources, headers, objects and static libraries are build inputs; TypeScript sources,
  # declarations and source maps are for editors and debuggers (Node loads no .ts from node_modules).
  find "$dir/node_modules" -type f \( -name '*.c' -o -name '*.cc' -o -name '*.cpp' -o -name '*.cxx' -o -name '*.h' \
    -o -name '*.hh' -o -name '*.hpp' -o -name '*.o' -o -name '*.a' -o -name '*.ts' -o -name '*.cts' -o -name '*.mts' \
    -o -name '*.map' \) -delete
}

size_mb() { du -sm "$1" | cut -f1; }

# Copies the package beside the old one and swaps it in, so a running service never sees a half-copied tree.
install_package() {
  [[ -f "$SOURCE/dist/cli/main.js" ]] || die "$SOURCE/dist/cli/main.js is missing: run 'bash scripts/setup.sh --no-run' (or npm run build) first"
  [[ -d "$SOURCE/node_modules" ]] || die "$SOURCE/node_modules is missing: run 'bash scripts/setup.sh --no-run' first"
  if package_current; then
    say "package in $OPT is up to date"
  else
    local staging="$OPT.new" item
    rm -rf "$staging"
    mkdir -p "$staging/bin"
    for item in "${PACKAGE_ITEMS[@]}"; do
      [[ -e "$SOURCE/$item" ]] && cp -a "$SOURCE/$item" "$staging/$item"
    done
    cp -a "$SOURCE/node_modules" "$staging/node_modules"
    production_tree "$staging"
    node_modules_fingerprint >"$staging/$FINGERPRINT"
    # Every native module must load from the new tree before it replaces the old one.
    if ! (cd "$staging" && "$NODE_BIN" dist/cli/main.js doctor --native); then
      rm -rf "$staging"
      die "a native module does not load from the production tree (see above); $OPT is unchanged"
    fi
    [[ -f "$OPT/bin/cortexd" ]] && cp -a "$OPT/bin/cortexd" "$staging/bin/cortexd"
    if [[ -d "$OPT" ]]; then
      mv "$OPT" "$OPT.old"
      mv "$staging" "$OPT"
      rm -rf "$OPT.old"
    else
      mkdir -p "$(dirname "$OPT")"
      mv "$staging" "$OPT"
    fi
    say "installed package from $SOURCE into $OPT"
  fi
  # exec keeps node as the unit's main PID, which NotifyAccess=main requires.
  put_file "$OPT/bin/cortexd" 0755 <<EOF || true
#!/bin/sh
# cortexd launcher written by install.sh: runs the compiled CLI with the Node.js chosen at install,
# with the runtime's environment defaults (systemd/runtime.env) for each variable not already set.
. "$OPT/systemd/runtime-env.sh" && cortexd_runtime_env "$OPT/systemd/runtime.env"
exec "$NODE_BIN" "$OPT/dist/cli/main.js" "\$@"
EOF
}

install_env_file() {
  mkdir -p "$ETC"
  chmod 0755 "$ETC"
  if [[ -e "$ETC/env" ]]; then
    chmod 0600 "$ETC/env"
    say "kept existing $ETC/env"
    return 0
  fi
  put_file "$ETC/env" 0600 <<'EOF' || true
# cortexd service environment, read by systemd for cortexd@*.service and cortexd-cloud.service.
# Mode 0600, owner root: it holds the API key. Lines are KEY=value; a line starting with # is ignored.
# `cortexd doctor NAME` checks these values the way the service will see them.

# API key of the hosted service (key_live_... or key_test_...). Not needed with `embedded` or a local model.
OM_API_KEY=

# Addresses of the hosted service. Leave commented for the configuration's own `service` block;
# `embedded` runs the local implementation in-process.
#CORTEX_BASE_URL=embedded
#CORTEX_WS_BASE_URL=
#CORTEX_ASR_WS_URL=
#CORTEX_VLM_WS_URL=

# Universal robot id (two letters + 12 alphanumerics), when the configuration has none.
#URID=

# Prometheus metrics on 127.0.0.1:PORT; off when unset.
#CORTEX_METRICS_PORT=9464

# The fleet broker (MQTT); the robot joins a fleet when the URL is set. See systemd/README.md.
#CORTEX_MQTT_URL=mqtts://broker.lan:8883
#CORTEX_MQTT_USERNAME=
#CORTEX_MQTT_PASSWORD=
#CORTEX_MQTT_CA_FILE=/etc/cortexd/mqtt-ca.crt
# A pushed configuration (fleet reload) starts no program unless listed here (a JSON5 file of
# { program, args, env } / { function, args } entries; docs/fleet.md, "A pushed configuration cannot run code").
#CORTEX_ALLOWED_PROGRAMS=/etc/cortexd/allowed-programs.json5
# off: refuse every fleet reload.
#CORTEX_FLEET_RELOAD=off

# Log level: trace, debug, info, warn, error.
CORTEX_LOG_LEVEL=info

# Extra arguments of `cortexd cloud` in cortexd-cloud.service, e.g. --port 8787.
#CORTEX_CLOUD_ARGS=
EOF
}

install_configs() {
  local gid src rel dest
  mkdir -p "$ETC/config"
  if [[ -d "$SOURCE/config" ]]; then
    while IFS= read -r -d '' src; do
      rel="${src#"$SOURCE/config/"}"
      dest="$ETC/config/$rel"
      if [[ ! -e "$dest" ]]; then
        install -D -m 0640 "$src" "$dest"
        say "added config $dest"
      fi
    done < <(find "$SOURCE/config" -type f -print0)
  fi
  # Configurations may hold keys: readable by the service's group, not by everyone.
  gid="$(gid_of "$SERVICE_USER")"
  if [[ -n "$gid" && "$(id -u)" == 0 ]]; then
    chown -R "0:$gid" "$ETC/config"
  fi
  find "$ETC/config" -type d -exec chmod 0750 {} +
}

# The shipped units name /opt/cortexd and /etc/cortexd; under --prefix they name the prefixed paths.
render_unit() {
  if [[ -n "$PREFIX" ]]; then
    sed -e "s#/opt/cortexd#$OPT#g" -e "s#/etc/cortexd#$ETC#g" "$1"
  else
    cat "$1"
  fi
}

install_units() {
  local unit changed=0
  mkdir -p "$UNIT_DIR"
  for unit in "${UNITS[@]}"; do
    if render_unit "$SOURCE/systemd/$unit" | put_file "$UNIT_DIR/$unit" 0644; then changed=1; fi
  done
  if [[ $changed == 1 ]]; then systemctl_real daemon-reload; fi
}

uninstall() {
  local unit
  systemctl_real disable --now cortexd-cloud.service
  if [[ -z "$PREFIX" ]] && command -v systemctl >/dev/null 2>&1; then
    for unit in $(systemctl list-units --all --plain --no-legend 'cortexd@*' | awk '{ print $1 }'); do
      systemctl disable --now "$unit" || true
    done
  fi
  for unit in "${UNITS[@]}"; do
    if [[ -e "$UNIT_DIR/$unit" ]]; then rm -f "$UNIT_DIR/$unit"; say "removed $UNIT_DIR/$unit"; fi
  done
  systemctl_real daemon-reload
  if [[ -e "$OPT" ]]; then rm -rf "$OPT"; say "removed $OPT"; fi
  if [[ $PURGE == 1 ]]; then
    rm -rf "$ETC" "$STATE"
    say "removed $ETC and $STATE"
    if [[ "$(id -u)" == 0 ]] && user_exists "$SERVICE_USER"; then
      [[ -n "$PREFIX" ]] && prefix_args=(--prefix "$PREFIX")
      userdel "${prefix_args[@]}" "$SERVICE_USER"
      say "removed user $SERVICE_USER"
    fi
  else
    say "kept $ETC, $STATE and user $SERVICE_USER (use --purge to remove them)"
  fi
}

if [[ $UNINSTALL == 1 ]]; then
  uninstall
  exit 0
fi

[[ -d "$SOURCE/systemd" ]] || die "$SOURCE is not a cortexd package (no systemd/)"
check_node
ensure_user
install_package
install_env_file
install_configs
install_units

say "installed size: $(size_mb "$OPT") MB in $OPT (node_modules $(size_mb "$OPT/node_modules") MB; the source's node_modules: $(size_mb "$SOURCE/node_modules") MB)"
say "installed. Put your API key in $ETC/env, your configuration in $ETC/config/NAME.json5, then:"
echo "  sudo $OPT/bin/cortexd doctor NAME"
echo "  systemctl enable --now cortexd@NAME"
