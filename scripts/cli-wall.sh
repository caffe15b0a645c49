#!/bin/sh
# Wall and CPU time of one whole linkwise command, start to exit, as docs/PERFORMANCE.md reports it:
# ROUNDS rounds of `perf stat -r 20`, then the least and the median round (wall, task-clock, page
# faults), with the load average before and after, since other work on the machine moves the wall
# time most.
# Usage: scripts/cli-wall.sh [ROUNDS] [BINARY...]   (defaults: 5 rounds, ./build/linkwise); several
#        binaries are run in turn, round by round, so that each sees the same load.
# Command measured: CMD, by default "collective dgx-h100 --nodes 128 -b 1G -e 1G". Needs perf.
set -eu
ROUNDS=${1:-5}
[ $# -gt 0 ] && shift
[ $# -eq 0 ] && set -- ./build/linkwise
CMD=${CMD:-collective dgx-h100 --nodes 128 -b 1G -e 1G}
case $ROUNDS in
  '' | 0 | *[!0-9]*) echo "cli-wall.sh: ROUNDS must be a whole number from 1, not '$ROUNDS'" >&2; exit 2 ;;
esac
for bin in "$@"; do
  if [ ! -f "$bin" ] || [ ! -x "$bin" ]; then
    echo "cli-wall.sh: '$bin' is not an executable file" >&2
    exit 2
  fi
done
command -v perf >/dev/null || { echo "cli-wall.sh needs perf (apt-get install linux-perf)" >&2; exit 1; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
r=0
while [ "$r" -lt "$ROUNDS" ]; do
  r=$((r + 1))
  i=0
  for bin in "$@"; do
    i=$((i + 1))
    # shellcheck disable=SC2086
    perf stat -r 20 "$bin" $CMD 2>&1 >/dev/null | awk '
      /task-clock/ {t = $1} /page-faults/ {f = $1} /seconds time elapsed/ {e = $1 * 1000}
      END {printf "%.2f %.2f %s\n", e, t, f}' >>"$out/$i"
  done
done
echo "load average after:  $(cut -d' ' -f1-3 /proc/loadavg)"
i=0
for bin in "$@"; do
  i=$((i + 1))
  sort -n "$out/$i" | awk -v b="$bin" -v n="$ROUNDS" '
    {w[NR] = $1; t[NR] = $2; f[NR] = $3}
    END {
      m = int((n + 1) / 2)
      printf "%s: wall min %.2f ms, median %.2f ms (%d rounds of 20); task-clock of those rounds %.2f, %.2f ms; page faults %s\n",
             b, w[1], w[m], n, t[1], t[m], f[1]
    }'
done
