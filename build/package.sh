#!/usr/bin/env bash
# Builds build/dist/switchboard_<version>_<arch>.deb and switchboard-<version>-1.<arch>.rpm with nfpm.
# `make package` runs it after `make build`. The package's files are staged by build/install.sh
# (PREFIX=/usr, so the menu entry says Exec=/usr/bin/switchboard), plus a man page generated from
# the binary's --help text; build/nfpm.yaml says where each goes and what the package depends on.
# Environment: BIN (default build/bin/switchboard), NFPM (default build/bin/nfpm), VERSION (default
# git describe, as the Makefile), PKG_VERSION (default: VERSION mapped to a package version),
# PKG_ARCH (default: go env GOARCH).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
BIN=${BIN:-build/bin/switchboard}
NFPM=${NFPM:-build/bin/nfpm}
VERSION=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
dist=build/dist
stage=$dist/stage

# pkg_version maps a git describe string to a version deb and rpm both order correctly:
#   v1.2.3 -> 1.2.3   v1.2.0-rc1 -> 1.2.0~rc1   v1.2.3-4-gabc1234 -> 1.2.3+git4.abc1234
#   abc1234 (no tag) -> 0.0.0~gitabc1234   dev -> 0.0.0~dev   ...-dirty -> ...+dirty (or .dirty)
pkg_version() {
  local v=$1 dirty="" post="" base pre=""
  if [[ $v == *-dirty ]]; then dirty=dirty; v=${v%-dirty}; fi
  if [[ $v =~ ^(.+)-([0-9]+)-g([0-9a-f]+)$ ]]; then
    v=${BASH_REMATCH[1]}
    post="git${BASH_REMATCH[2]}.${BASH_REMATCH[3]}"
  fi
  if [[ $v =~ ^v?([0-9]+\.[0-9]+\.[0-9]+)(-(.+))?$ ]]; then
    base=${BASH_REMATCH[1]}
    pre=${BASH_REMATCH[3]}
  elif [[ $v =~ ^[0-9a-f]{4,40}$ ]]; then
    base=0.0.0
    pre=git$v
  else
    base=0.0.0
    pre=$v
  fi
  pre=$(printf '%s' "$pre" | tr -c 'A-Za-z0-9.' '.')
  local out=$base
  [[ -n $pre ]] && out+="~$pre"
  if [[ -n $post ]]; then
    out+="+$post"
    [[ -n $dirty ]] && out+=".dirty"
  elif [[ -n $dirty ]]; then
    if [[ -n $pre ]]; then out+=".dirty"; else out+="+dirty"; fi
  fi
  printf '%s\n' "$out"
}

# roff escapes a line of plain text for troff: backslashes, and a leading . or ' (requests).
roff() {
  sed -e 's/\\/\\e/g' -e "s/^\([.']\)/\\\\\&\1/"
}

# The man page: the top-level --help text, then each command's. HOME is set to a placeholder so
# the help's default paths read ~/... rather than the builder's home.
manpage() {
  local date cmd
  sbhelp() { env -i PATH="$PATH" HOME=/SWITCHBOARD_HOME "$BIN" "$@" --help | sed 's|/SWITCHBOARD_HOME|~|g'; }
  date=$(git log -1 --format=%cs 2>/dev/null || date -u +%F)
  printf '.TH SWITCHBOARD 1 "%s" "switchboard %s" "User Commands"\n' "$date" "$VERSION"
  printf '.SH NAME\nswitchboard \\- desktop MCP hub: one set of tools shared by every AI client\n'
  printf '.SH SYNOPSIS\n.B switchboard\n[\\fIcommand\\fR] [\\fIflags\\fR]\n'
  printf '.SH DESCRIPTION\n.nf\n'
  sbhelp | roff
  printf '.fi\n.SH COMMANDS\n'
  for cmd in $(sbhelp | awk '/^Available Commands:/{on=1; next} on && /^$/{exit} on {print $1}'); do
    case $cmd in help | completion) continue ;; esac
    printf '.SS switchboard %s\n.nf\n' "$cmd"
    sbhelp "$cmd" | roff
    printf '.fi\n'
  done
  printf '.SH FILES\n.TP\n.I ~/.config/switchboard/config.toml\nconfiguration (TOML)\n'
  printf '.TP\n.I ~/.local/share/switchboard\ndata directory: logs, audit log, collections\n'
  printf '.SH SEE ALSO\n/usr/share/doc/switchboard/README.md\n'
}

if [[ ! -x $BIN ]]; then echo "package.sh: no binary at $BIN (make build)" >&2; exit 1; fi
if [[ ! -x $NFPM ]]; then echo "package.sh: no nfpm at $NFPM (make package builds it from build/tools/nfpm)" >&2; exit 1; fi

PKG_VERSION=${PKG_VERSION:-$(pkg_version "$VERSION")}
PKG_ARCH=${PKG_ARCH:-$(go env GOARCH)}
export PKG_VERSION PKG_ARCH

rm -rf "$stage"
rm -f "$dist"/switchboard_*.deb "$dist"/switchboard-*.rpm
mkdir -p "$stage/usr/share/man/man1"
MANIFEST=0 DESTDIR=$stage PREFIX=/usr BIN=$BIN bash build/install.sh install >/dev/null
manpage | gzip -9n >"$stage/usr/share/man/man1/switchboard.1.gz"

# Every staged file must be in the package: nfpm.yaml lists them one by one.
unlisted=()
while IFS= read -r f; do
  grep -qxF "  - src: $f" build/nfpm.yaml || unlisted+=("$f")
done < <(find "$stage" -type f | sort)
if ((${#unlisted[@]})); then
  echo "package.sh: staged but not in build/nfpm.yaml's contents: ${unlisted[*]}" >&2
  exit 1
fi

echo "package.sh: switchboard $VERSION as package version $PKG_VERSION ($PKG_ARCH)"
for packager in deb rpm; do
  "$NFPM" package --config build/nfpm.yaml --packager "$packager" --target "$dist/"
done
ls -l "$dist"/switchboard_*.deb "$dist"/switchboard-*.rpm
