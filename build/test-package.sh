#!/usr/bin/env bash
# Installs the .deb `make package` built with apt-get, checks the installed app, removes it.
# `make test-package` (part of `make test`) runs it. Needs root and apt-get: without them it says
# so and fails under CI=true, else skips. Idempotent: an earlier install of switchboard is
# replaced by this one (and removed at the end).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

need() {
  if [[ ${CI:-} == true ]]; then echo "test-package: $1 (required under CI=true)" >&2; exit 1; fi
  echo "test-package: skipped: $1"
  exit 0
}
command -v apt-get >/dev/null || need "apt-get not found: the .deb test needs Debian or Ubuntu"
[[ $(id -u) -eq 0 ]] || need "not root: installing the .deb needs root (run as root, or sudo make test-package)"

shopt -s nullglob
debs=(build/dist/switchboard_*.deb)
((${#debs[@]} == 1)) || { echo "test-package: want one build/dist/switchboard_*.deb (make package), found ${#debs[@]}" >&2; exit 1; }
deb=${debs[0]}
fail() { echo "test-package: FAIL: $*" >&2; exit 1; }

export DEBIAN_FRONTEND=noninteractive
echo "test-package: apt-get install ./$deb"
# --reinstall: the same version may already be installed from an earlier run of this commit.
apt-get install -y -qq --reinstall --allow-downgrades "./$deb" >/dev/null
dpkg-query -W -f='${Status} ${Version}\n' switchboard

[[ $(command -v switchboard) == /usr/bin/switchboard ]] || fail "switchboard on PATH is $(command -v switchboard), want /usr/bin/switchboard"
entry=/usr/share/applications/switchboard.desktop
[[ -f $entry ]] || fail "$entry not installed"
grep -qx 'Exec=/usr/bin/switchboard' "$entry" || fail "$entry: want Exec=/usr/bin/switchboard, got $(grep '^Exec=' "$entry")"
if command -v desktop-file-validate >/dev/null; then
  desktop-file-validate "$entry" || fail "desktop-file-validate $entry"
fi
for icon in build/icons/switchboard-*.png; do
  n=${icon##*/switchboard-}; n=${n%.png}
  cmp -s "$icon" "/usr/share/icons/hicolor/${n}x${n}/apps/switchboard.png" || fail "icon ${n}x${n} not installed"
done
[[ -s /usr/share/man/man1/switchboard.1.gz ]] || fail "man page not installed"

# Run the installed binary as a user would, in a scratch home so nothing of ours is touched.
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
run() { (cd "$scratch" && env -u DISPLAY -u WAYLAND_DISPLAY HOME="$scratch" XDG_CONFIG_HOME="$scratch/.config" \
  XDG_DATA_HOME="$scratch/.local/share" XDG_RUNTIME_DIR="$scratch/run" /usr/bin/switchboard "$@"); }
mkdir -m 700 "$scratch/run"

out=$(run version) || fail "switchboard version exited $?"
echo "test-package: switchboard version -> $out"
[[ $out == "switchboard "* ]] || fail "switchboard version printed '$out'"

# doctor exits 0 when every check passes and 1 when a required one fails (optional backends only
# warn); it must run and print its checks either way. Any other status (a crash) is a failure.
set +e
doctor=$(run doctor 2>&1)
rc=$?
set -e
printf '%s\n' "$doctor" | sed 's/^/  | /'
((rc == 0 || rc == 1)) || fail "switchboard doctor exited $rc"
grep -q '^\[ok  \] config' <<<"$doctor" || fail "switchboard doctor printed no config check"
grep -q '^\[ok  \] desktop build' <<<"$doctor" || fail "the packaged binary is not the desktop build"
grep -qE '^switchboard .*: [0-9]+ checks, [0-9]+ failed$' <<<"$doctor" || fail "switchboard doctor printed no summary"

echo "test-package: apt-get remove switchboard"
apt-get remove -y -qq switchboard >/dev/null
for f in /usr/bin/switchboard "$entry" /usr/share/man/man1/switchboard.1.gz /usr/share/icons/hicolor/48x48/apps/switchboard.png; do
  [[ ! -e $f ]] || fail "$f still there after apt-get remove"
done
if dpkg-query -W -f='${Status}\n' switchboard 2>/dev/null | grep -q ' installed$'; then
  fail "dpkg still lists switchboard as installed"
fi
echo "test-package: ok ($deb: installed, version and doctor ran, removed cleanly)"
