#!/usr/bin/env bash
# The one place that installs system packages Switchboard needs to build and test.
# Idempotent: packages already present are skipped; uses sudo when not root.
#   build/setup-deps.sh          everything (desktop build + tests)
#   build/setup-deps.sh --check  only report what is missing (exit 1 if anything is)
set -euo pipefail

PACKAGES=(
  build-essential pkg-config            # cgo for the desktop build
  libgtk-3-dev libwebkit2gtk-4.1-dev    # Wails v2 on Debian 12 (tags desktop,production,webkit2_41)
  chromium                              # browser tools (webview_*) and their tests; dashboard end-to-end tests (playwright-core)
  xvfb xauth dbus dbus-x11 at-spi2-core # desktop smoke test: virtual display and a session bus
  imagemagick x11-apps x11-utils xdotool # screenshots under Xvfb, window lookup (xprop, xwininfo)
  influxdb                              # ml_status tests start a real InfluxDB 1.x (influxd)
  ripgrep git                           # file_grep is compared and benchmarked against rg; git_* tools run git
  desktop-file-utils                    # desktop-file-validate checks the installed and packaged menu entry (build/install_test.go)
)

missing=()
for p in "${PACKAGES[@]}"; do
  [[ $p == \#* ]] && continue
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [[ ${1:-} == --check ]]; then
  if ((${#missing[@]})); then echo "missing: ${missing[*]}"; exit 1; fi
  echo "all system dependencies present"; exit 0
fi

if ((${#missing[@]} == 0)); then
  echo "setup-deps: all system dependencies present"
  exit 0
fi

SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
echo "setup-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup-deps: done"
