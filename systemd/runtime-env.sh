# The runtime's environment defaults, sourced by every cortexd launcher (install.sh's
# /opt/cortexd/bin/cortexd, scripts/cortexd, set-up's main job): `cortexd_runtime_env FILE` exports
# each KEY=value line of FILE (systemd/runtime.env) whose KEY is not set yet, so the caller's shell,
# the unit or /etc/cortexd/env keep the last word. A missing FILE sets nothing.
cortexd_runtime_env() {
  [ -r "$1" ] || return 0
  while IFS= read -r line || [ -n "$line" ]; do
    key=${line%%=*}
    case "$key" in '' | '#'* | *[!A-Za-z0-9_]*) continue ;; esac
    eval "[ -n \"\${$key+set}\" ]" || export "$line"
  done <"$1"
}
