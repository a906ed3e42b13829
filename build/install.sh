#!/usr/bin/env bash
# Installs (or uninstalls) the Switchboard desktop binary, its desktop entry and its icons.
#   build/install.sh install     PREFIX=~/.local by default; DESTDIR for staging (packagers)
#   build/install.sh uninstall   removes exactly what the manifest of that PREFIX lists
# Environment:
#   PREFIX   where to install (default $HOME/.local; /usr/local as root is the usual system-wide one)
#   DESTDIR  staging root prepended to every path written (the entry and manifest still name PREFIX)
#   BIN      the binary to install (default build/bin/switchboard, the desktop build)
#   MANIFEST=0  do not write a manifest (package staging: the package manager tracks the files)
# The manifest, PREFIX/share/switchboard/install-manifest.txt, lists every file installed and every
# directory the install created (ending in /), paths without DESTDIR; uninstall removes those files,
# the manifest, then those directories if they are empty. It never removes anything else.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
action=${1:-install}
PREFIX=${PREFIX:-$HOME/.local}
DESTDIR=${DESTDIR:-}
BIN=${BIN:-$here/bin/switchboard}
MANIFEST=${MANIFEST:-1}

# PREFIX must be absolute (it ends up in the desktop entry) and have no trailing slash.
case $PREFIX in
  /*) ;;
  *) echo "install.sh: PREFIX must be an absolute path, got '$PREFIX'" >&2; exit 2 ;;
esac
PREFIX=${PREFIX%/}
[[ -n $PREFIX ]] || { echo "install.sh: PREFIX=/ is not supported; use /usr" >&2; exit 2; }
DESTDIR=${DESTDIR%/}

manifest_rel=$PREFIX/share/switchboard/install-manifest.txt
manifest=$DESTDIR$manifest_rel

# The desktop entry's Exec value for an absolute path: bare when it has only plain characters,
# else double-quoted with the spec's escapes (", `, $, \ inside quotes; then \ doubled again as
# the entry's string escape); % is always doubled (field codes).
exec_value() {
  local p=$1
  p=${p//%/%%}
  if [[ $p =~ ^[A-Za-z0-9/._+%-]+$ ]]; then
    printf '%s' "$p"
    return
  fi
  p=${p//\\/\\\\}
  p=${p//\"/\\\"}
  p=${p//\`/\\\`}
  p=${p//\$/\\\$}
  p=${p//\\/\\\\}
  printf '"%s"' "$p"
}

# PNG width and height from the IHDR chunk (bytes 16..23, big endian).
png_size() {
  local w h
  read -r w h < <(od -An -tu1 -j16 -N8 "$1" | awk '{print $1*16777216+$2*65536+$3*256+$4, $5*16777216+$6*65536+$7*256+$8}')
  echo "$w $h"
}

installed=()
# mkdirs DIR: create DIR (absolute, without DESTDIR) and record each directory this creates.
mkdirs() {
  local d=$1 missing=()
  # Only directories under PREFIX are recorded: PREFIX itself and its parents are not ours.
  while [[ $d == "$PREFIX"/* && ! -d $DESTDIR$d ]]; do
    missing+=("$d")
    d=$(dirname "$d")
  done
  if ((${#missing[@]})); then
    mkdir -p -- "$DESTDIR$1"
    for d in "${missing[@]}"; do installed+=("$d/"); done
  fi
}
# put MODE SRC DST: install SRC at DST (absolute, without DESTDIR) and record it.
put() {
  mkdirs "$(dirname "$3")"
  install -m "$1" "$2" "$DESTDIR$3"
  installed+=("$3")
  echo "  $3"
}
# refresh_caches: update the desktop and icon caches of PREFIX when the tools exist; a cache file
# that did not exist before is recorded (uninstall removes it with the rest).
refresh_caches() {
  local apps=$PREFIX/share/applications hicolor=$PREFIX/share/icons/hicolor
  if command -v update-desktop-database >/dev/null && [[ -d $apps ]]; then
    [[ -e $apps/mimeinfo.cache ]] || new_cache+=("$apps/mimeinfo.cache")
    update-desktop-database -q "$apps" || true
  fi
  if command -v gtk-update-icon-cache >/dev/null && [[ -f $hicolor/index.theme ]]; then
    [[ -e $hicolor/icon-theme.cache ]] || new_cache+=("$hicolor/icon-theme.cache")
    gtk-update-icon-cache -q -t -f "$hicolor" || true
  fi
}
new_cache=()

do_install() {
  if [[ ! -x $BIN ]]; then
    echo "install.sh: no binary at $BIN (run 'make build' or pass BIN=path)" >&2
    exit 1
  fi
  echo "install.sh: installing into ${DESTDIR}${PREFIX}"
  put 0755 "$BIN" "$PREFIX/bin/switchboard"

  # The entry names the installed binary by its absolute path: a ~/.local install then starts
  # from the menu even when ~/.local/bin is not on the desktop session's PATH.
  local tmp line try=$PREFIX/bin/switchboard
  try=${try//\\/\\\\}
  tmp=$(mktemp)
  while IFS= read -r line || [[ -n $line ]]; do
    case $line in
      Exec=*) line="Exec=$(exec_value "$PREFIX/bin/switchboard")" ;;
      TryExec=*) line="TryExec=$try" ;;
    esac
    printf '%s\n' "$line"
  done <"$here/linux/switchboard.desktop" >"$tmp"
  put 0644 "$tmp" "$PREFIX/share/applications/switchboard.desktop"
  rm -f -- "$tmp"

  local icon n w h
  for icon in "$here"/icons/switchboard-*.png; do
    n=${icon##*/switchboard-}
    n=${n%.png}
    read -r w h < <(png_size "$icon")
    if [[ $w != "$n" || $h != "$n" ]]; then
      echo "install.sh: $icon is ${w}x${h}, its name says ${n}x${n}" >&2
      exit 1
    fi
    put 0644 "$icon" "$PREFIX/share/icons/hicolor/${n}x${n}/apps/switchboard.png"
  done

  # Caches: only for a real install (no DESTDIR), before the manifest so new cache files are in it.
  [[ -z $DESTDIR ]] && refresh_caches
  local c
  for c in "${new_cache[@]}"; do [[ -e $c ]] && installed+=("$c"); done

  if [[ $MANIFEST == 1 ]]; then
    # A reinstall keeps what an earlier install recorded and is still there, so uninstall
    # removes it too (e.g. an icon size dropped since).
    local old=()
    if [[ -f $manifest ]]; then
      local f
      while IFS= read -r f; do
        [[ -n $f && -e $DESTDIR$f ]] && old+=("$f")
      done <"$manifest"
    fi
    mkdirs "$(dirname "$manifest_rel")"
    printf '%s\n' "${old[@]}" "${installed[@]}" | sed '/^$/d' | sort -u >"$manifest.tmp"
    mv "$manifest.tmp" "$manifest"
    echo "install.sh: manifest $manifest_rel"
  fi

  case ":$PATH:" in
    *":$PREFIX/bin:"*) ;;
    *) [[ -z $DESTDIR ]] && echo "install.sh: note: $PREFIX/bin is not on PATH; the menu entry uses the full path, add it to PATH for the command line and client configs" ;;
  esac
  echo "install.sh: done"
}

do_uninstall() {
  if [[ ! -f $manifest ]]; then
    echo "install.sh: nothing to uninstall: no manifest at $manifest" >&2
    exit 1
  fi
  echo "install.sh: removing what $manifest_rel lists"
  local f dirs=()
  while IFS= read -r f; do
    [[ -z $f ]] && continue
    case $f in
      "$PREFIX"/*) ;;
      *) echo "install.sh: skipping $f: not under $PREFIX" >&2; continue ;;
    esac
    if [[ $f == */ ]]; then
      dirs+=("${f%/}")
    elif [[ -e $DESTDIR$f || -L $DESTDIR$f ]]; then
      rm -f -- "$DESTDIR$f"
      echo "  removed $f"
    fi
  done <"$manifest"
  rm -f -- "$manifest"
  # The directories the install created, deepest first, if nothing else is in them now.
  local d
  while IFS= read -r d; do
    [[ -z $d ]] && continue
    rmdir -- "$DESTDIR$d" 2>/dev/null && echo "  removed $d/"
  done < <(printf '%s\n' "${dirs[@]}" | sort -u -r)
  # Other entries and icons stay: bring their caches up to date (never creating new ones).
  if [[ -z $DESTDIR ]]; then
    local apps=$PREFIX/share/applications hicolor=$PREFIX/share/icons/hicolor
    if command -v update-desktop-database >/dev/null && [[ -e $apps/mimeinfo.cache ]]; then
      update-desktop-database -q "$apps" || true
    fi
    if command -v gtk-update-icon-cache >/dev/null && [[ -e $hicolor/icon-theme.cache && -f $hicolor/index.theme ]]; then
      gtk-update-icon-cache -q -t -f "$hicolor" || true
    fi
  fi
  echo "install.sh: done"
}

case $action in
  install) do_install ;;
  uninstall) do_uninstall ;;
  *) echo "usage: build/install.sh install|uninstall (PREFIX, DESTDIR, BIN from the environment)" >&2; exit 2 ;;
esac
