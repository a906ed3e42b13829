#!/bin/sh
# Before the package's files go (deb prerm "remove", rpm preun 0): stop every Switchboard that
# runs from this binary — hubs, tray apps and `switchboard connect` relays of every user — so no
# hub, and none of the servers and browsers it started, keeps running from a deleted binary; then
# tell each of those users, and every user with a home, which of their MCP clients still name
# /usr/bin/switchboard, since those entries stop working now. An upgrade keeps everything
# running.
set -u
case "${1:-}" in
  remove | 0) ;;
  *) exit 0 ;;
esac
bin=/usr/bin/switchboard

pids=""
homes=""
for d in /proc/[0-9]*; do
  exe=$(readlink "$d/exe" 2>/dev/null) || continue
  case "$exe" in
    "$bin" | "$bin (deleted)") ;;
    *) continue ;;
  esac
  pid=${d#/proc/}
  pids="$pids $pid"
  # The user's own configuration: HOME and XDG_CONFIG_HOME of the process, to list their clients.
  h=$(tr '\0' '\n' <"$d/environ" 2>/dev/null | sed -n 's/^HOME=//p' | head -n 1)
  x=$(tr '\0' '\n' <"$d/environ" 2>/dev/null | sed -n 's/^XDG_CONFIG_HOME=//p' | head -n 1)
  [ -n "$h" ] && homes="$homes
$h|$x"
done

if [ -n "$pids" ]; then
  echo "switchboard: stopping the running Switchboard processes:$pids"
  kill -TERM $pids 2>/dev/null
  # A hub stops its servers, processes and browser on SIGTERM: give it the time it takes.
  i=0
  while [ $i -lt 75 ]; do
    alive=""
    for p in $pids; do kill -0 "$p" 2>/dev/null && alive="$alive $p"; done
    [ -z "$alive" ] && break
    sleep 0.2
    i=$((i + 1))
  done
  if [ -n "${alive:-}" ]; then
    echo "switchboard: still running after 15 s, killed:$alive"
    kill -KILL $alive 2>/dev/null
  fi
fi

for h in /root /home/*; do
  [ -d "$h" ] && homes="$homes
$h|"
done
seen=""
printf '%s\n' "$homes" | while IFS='|' read -r h x; do
  [ -n "$h" ] && [ -d "$h" ] || continue
  case " $seen " in *" $h "*) continue ;; esac
  seen="$seen $h"
  [ -n "$x" ] || x="$h/.config"
  # Read-only: `clients list` reads the clients' files and writes nothing.
  HOME="$h" XDG_CONFIG_HOME="$x" "$bin" clients list 2>/dev/null | awk -v home="$h" '
    / connected to this hub / || / set up differently / {
      if (!said) { print "switchboard: MCP clients under " home " still name " "'"$bin"'" ", which is being removed:"; said = 1 }
      print "  " $1 " (" $NF ")"
    }
    END { if (said) print "  Remove the switchboard entry from each file above (or reinstall and run `switchboard clients disconnect --all`)." }'
done
exit 0
