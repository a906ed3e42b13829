#!/usr/bin/env bash
# The one place that installs system packages Switchboard needs to build and test.
# Idempotent: packages already present are skipped; uses sudo when not root.
#   build/setup-deps.sh                  everything (desktop build + tests): make test
#   build/setup-deps.sh --build          only what building and running need: make build, make run
#   build/setup-deps.sh [--build] --check  only report what is missing (exit 1 if anything is)
# No service is left enabled at boot: a package that would start one (influxdb) is installed
# with service starts refused, and its unit is disabled; tests start their own instance.
set -euo pipefail

BUILD_PACKAGES=(
  build-essential pkg-config            # cgo for the desktop build
  libgtk-3-dev libwebkit2gtk-4.1-dev    # Wails v2 on Debian 12 (tags desktop,production,webkit2_41)
)
TEST_PACKAGES=(
  chromium                              # browser tools (webview_*) and their tests; dashboard end-to-end tests (playwright-core)
  xvfb xauth dbus dbus-x11 at-spi2-core # desktop smoke test: virtual display and a session bus
  imagemagick x11-apps x11-utils xdotool # screenshots under Xvfb, window lookup (xprop, xwininfo)
  influxdb                              # ml_status tests start a real InfluxDB 1.x (influxd)
  ripgrep git                           # file_grep is compared and benchmarked against rg; git_* tools run git
  desktop-file-utils                    # desktop-file-validate checks the installed and packaged menu entry (build/install_test.go)
  clangd                                # internal/code's C tests run the real clangd (gopls, typescript-language-server and pyright: make lsp-deps)
  gnome-keyring libsecret-tools         # internal/secrets tests run a real Secret Service (gnome-keyring-daemon) on a private bus; secret-tool is the independent client
)

profile=all check=false
for a in "$@"; do
  case $a in
    --build) profile=build ;;
    --check) check=true ;;
    *) echo "setup-deps: unknown option $a (use --build and/or --check)" >&2; exit 2 ;;
  esac
done
PACKAGES=("${BUILD_PACKAGES[@]}")
if [[ $profile == all ]]; then PACKAGES+=("${TEST_PACKAGES[@]}"); fi

missing=()
for p in "${PACKAGES[@]}"; do
  [[ $p == \#* ]] && continue
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if $check; then
  if ((${#missing[@]})); then echo "missing: ${missing[*]}"; exit 1; fi
  echo "all system dependencies present"; exit 0
fi

if ((${#missing[@]} == 0)); then
  echo "setup-deps: all system dependencies present"
  exit 0
fi

SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
echo "setup-deps: installing ${#missing[@]} Debian packages: ${missing[*]}"
echo "setup-deps: this downloads and unpacks them with apt-get and can take a few minutes"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# Refuse service starts while installing (policy-rc.d, as Debian's own images do), so no package
# starts a daemon now; ours are disabled at boot below.
policy_rc=/usr/sbin/policy-rc.d
own_policy=false
if [[ ! -e $policy_rc ]]; then
  printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$policy_rc" >/dev/null
  $SUDO chmod 755 "$policy_rc"
  own_policy=true
fi
status=0
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null || status=$?
if $own_policy; then $SUDO rm -f "$policy_rc"; fi
if ((status != 0)); then echo "setup-deps: apt-get install failed ($status)" >&2; exit "$status"; fi
boot_services=(influxdb.service) # packages of ours that enable a daemon at boot
for unit in "${boot_services[@]}"; do
  if [[ -e /lib/systemd/system/$unit ]] && command -v deb-systemd-helper >/dev/null; then
    $SUDO deb-systemd-helper disable "$unit" >/dev/null 2>&1 || true
  fi
done
echo "setup-deps: done"
