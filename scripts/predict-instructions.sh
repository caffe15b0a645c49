#!/bin/bash
# Instructions per linkwise::comm::predict(chassis, ...) call in one Google Benchmark case, counted
# by callgrind: a figure that does not move with the machine's load or clock, for comparing builds
# (docs/PERFORMANCE.md). Needs valgrind (Debian package `valgrind`).
#   scripts/predict-instructions.sh build/bench/linkwise_bench 'BM_OneSize8GpusHostStaged$'
set -euo pipefail
bench=$(readlink -f "${1:?usage: $0 BENCH_BINARY FILTER}")
filter=${2:?usage: $0 BENCH_BINARY FILTER}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
valgrind --tool=callgrind --callgrind-out-file="$out/cg" \
  "--toggle-collect=linkwise::comm::predict(linkwise::topo::Chassis*" \
  "$bench" --benchmark_filter="$filter" --benchmark_min_time=0.2 > "$out/log" 2>&1
python3 - "$out/cg" "$out/log" <<'PY'
import re, sys
ir = int(re.search(r'Collected : (\d+)', open(sys.argv[2]).read()).group(1))
names, calls, cur = {}, 0, None
for line in open(sys.argv[1]):
    m = re.match(r'(c?)fn=\((\d+)\)(?: (.*))?', line)
    if m:
        if m.group(3):
            names[m.group(2)] = m.group(3)
        cur = names.get(m.group(2), '') if m.group(1) else None
        continue
    m = re.match(r'calls=(\d+)', line)
    if m and cur and cur.startswith('linkwise::comm::predict(linkwise::topo::Chassis'):
        calls += int(m.group(1))
if calls == 0:
    sys.exit('no call of linkwise::comm::predict(chassis, ...) was counted')
print(f'{ir // calls} instructions per call ({calls} calls)')
PY
