#!/usr/bin/env bash
# GPU checks in one go: build linkwise (or reuse a build), probe the machine, measure host-device and
# device-local copies, NCCL and a sustained transfer, then hold the figures against the model.
#
#   scripts/gpu-check.sh [OUT_DIR]        # default ./gpu-check-out
#
# Environment:
#   CHASSIS       chassis to calibrate against (preset or YAML; default hgx-h200: GPU0 of an HGX H200 board,
#                 PCIe Gen5 x16 host link through a switch, as the target machine)
#   BUILD_DIR     build folder (default build-gpucheck); LINKWISE=path/to/linkwise skips the build
#   JOBS          build parallelism (default: all cores)
#   SUSTAINED     length of the held transfer (default 45s)
# On a machine without the build dependencies (compilers, CMake, the libraries), build linkwise
# elsewhere and pass it as LINKWISE=, with LD_LIBRARY_PATH naming a folder that holds the shared
# libraries it was linked with (libfmt, libyaml-cpp) and the machine's libnccl.so.2, e.g.
#   LD_LIBRARY_PATH=$PWD/libs:/usr/lib/x86_64-linux-gnu LINKWISE=$PWD/build/linkwise SUSTAINED=30s \
#     scripts/gpu-check.sh out/
# (`ldd build/linkwise` lists what it needs; the CUDA runtime is static, the driver and NVML are the
# machine's own). That is how data/measured/h200-gpu-check-2026-11-30.json was taken.
# nvidia-smi's summary, `topo -m` and `-q` are saved each on its own; one that fails is noted in the
# log (with its message in the file) and does not fail the run.
# With `linkwise probe` in the build, the machine's own chassis is discovered too (probed-chassis.yaml),
# checked (probe --check; a finding there fails the step but not the run) and calibrated against.
# Budget on a 16-core machine with one GPU: build 1-3 min, measurements about 1.5 min; every step has
# its own time limit, and a step that fails is reported and the rest still run.
set -euo pipefail

OUT=${1:-./gpu-check-out}
CHASSIS=${CHASSIS:-hgx-h200}
BUILD_DIR=${BUILD_DIR:-build-gpucheck}
JOBS=${JOBS:-$(nproc)}
SUSTAINED=${SUSTAINED:-45s}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
LOG="$OUT/gpu-check.log"
: >"$LOG"
FAILED=()
START=$(date +%s)

say() { printf '\n== %s (%ss)\n' "$*" "$(($(date +%s) - START))" | tee -a "$LOG"; }
# step NAME LIMIT_S COMMAND...: runs with a time limit, output to the log; a failure is recorded, not fatal.
step() {
  local name=$1 limit=$2
  shift 2
  say "$name"
  local rc=0
  timeout --kill-after=10 "$limit" "$@" >>"$LOG" 2>&1 || rc=$?
  if [ "$rc" -ne 0 ]; then
    echo "   FAILED ($name): exit $rc$([ "$rc" -eq 124 ] && echo ', time limit')" | tee -a "$LOG"
    FAILED+=("$name")
  fi
  return 0
}

say "machine"
{
  echo "date: $(date -u +%FT%TZ)"
  echo "host: $(hostname)"
  echo "commit: $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "cores: $(nproc)"
} | tee "$OUT/machine.txt" | tee -a "$LOG"
# info FILE COMMAND...: machine facts for the record; output (and any error) to FILE; a failure is
# noted with its exit status, not counted as a failed step.
info() {
  local file=$1 rc=0
  shift
  timeout --kill-after=5 30 "$@" >"$OUT/$file" 2>&1 || rc=$?
  if [ "$rc" -ne 0 ]; then
    echo "   note: '$*' exited $rc$([ "$rc" -eq 127 ] && echo ' (not found)'): $(head -c 200 "$OUT/$file" | tr '\n' ' ')" |
      tee -a "$LOG"
  fi
  return 0
}
say "nvidia-smi"
info nvidia-smi.txt nvidia-smi
info nvidia-smi-topo.txt nvidia-smi topo -m
# The full query: PCIe link generation and width, clocks, power, temperatures. (`-d` takes only some
# section names and rejects the whole list when one is not among them, so the whole report is kept.)
info nvidia-smi-q.txt nvidia-smi -q
# Field health, the raw sources `probe --check` reads, kept beside its findings: per NVIDIA function the
# PCIe AER counters (sysfs aer_dev_{correctable,nonfatal,fatal}) and Link Status (LnkSta: BWMgmt+ is a
# retrained link); ECC and remapped rows, clock throttle reasons, temperature and power against their
# limits, BAR1; the fabric manager on NVSwitch systems; XID events in the kernel log (probe --check reads
# /dev/kmsg, which needs root; dmesg or journalctl -k here). A few seconds in all.
health_sources() {
  local d
  for d in "${HEALTH_SYS:-/sys}"/bus/pci/devices/*; do
    [ "$(cat "$d/vendor" 2>/dev/null)" = "0x10de" ] || continue
    echo "== ${d##*/}"
    for f in aer_dev_correctable aer_dev_nonfatal aer_dev_fatal current_link_speed current_link_width \
      max_link_speed max_link_width; do
      [ -r "$d/$f" ] && printf '%s: %s\n' "$f" "$(grep -E 'TOTAL|^[0-9]|GT/s' "$d/$f" | tr '\n' ' ')"
    done
    lspci -vv -s "${d##*/}" 2>/dev/null | grep -E 'LnkSta:|Region 1:|BAR 1:' || true
  done
}
export -f health_sources
info health-pcie.txt bash -c health_sources
info health-ecc.txt nvidia-smi -q -d ECC
info health-rows.txt nvidia-smi -q -d ROW_REMAPPER
info health-throttle.txt nvidia-smi -q -d PERFORMANCE
info health-temperature.txt nvidia-smi -q -d TEMPERATURE
info health-power.txt nvidia-smi -q -d POWER
info health-fabric.txt nvidia-smi -q -d FABRIC
info health-bar1.txt nvidia-smi -q -d MEMORY
info health-xid.txt bash -c "{ dmesg 2>/dev/null || journalctl -k --no-pager 2>/dev/null; } | grep -iE 'NVRM: Xid|AER' | tail -n 50"
# Whether there is a GPU at all: nvidia-smi lists one, or sysfs shows an NVIDIA display/3D controller.
# Without one, probe --check still runs (it reports no-gpu) and the measurement steps are skipped.
has_gpu() {
  nvidia-smi -L 2>/dev/null | grep '^GPU ' >/dev/null && return 0
  local d
  for d in /sys/bus/pci/devices/*; do
    [ "$(cat "$d/vendor" 2>/dev/null)" = "0x10de" ] || continue
    case "$(cat "$d/class" 2>/dev/null)" in 0x0300* | 0x0302*) return 0 ;; esac
  done
  return 1
}
GPU=yes
has_gpu || GPU=no
echo "gpu: $GPU" | tee -a "$OUT/machine.txt" | tee -a "$LOG"

if [ -z "${LINKWISE:-}" ]; then
  # Only the executable: no tests or benchmark programs, to keep the build short.
  step "configure" 120 cmake -S "$ROOT" -B "$ROOT/$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DLINKWISE_TESTS=OFF -DLINKWISE_BENCH=OFF
  step "build" 300 cmake --build "$ROOT/$BUILD_DIR" -j"$JOBS" --target linkwise
  LINKWISE="$ROOT/$BUILD_DIR/linkwise"
fi
if [ ! -x "$LINKWISE" ]; then
  echo "no linkwise executable at $LINKWISE; see $LOG" >&2
  exit 1
fi

if "$LINKWISE" --help 2>/dev/null | grep -qE '^ +probe'; then
  step "probe" 60 bash -c "'$LINKWISE' probe --json > '$OUT/probe.json' && \
    '$LINKWISE' probe --name probed -o '$OUT/probed-chassis.yaml' > '$OUT/probe.txt'"
  if [ "$GPU" = yes ]; then
    # Faults found (exit 1) fail this step; the findings are in probe-check.txt.
    step "probe --check" 60 bash -c "'$LINKWISE' probe --check --json > '$OUT/probe-check.json'; \
      '$LINKWISE' probe --check > '$OUT/probe-check.txt'"
  else
    # No GPU: probe --check says so (no-gpu, exit 1); that is the expected answer here, not a failure.
    say "probe --check (no GPU)"
    "$LINKWISE" probe --check >"$OUT/probe-check.txt" 2>&1 || true
  fi
fi
if [ "$GPU" = no ]; then
  say "results"
  tee -a "$LOG" <"$OUT/probe-check.txt" 2>/dev/null || true
  echo "no GPU found: bench, sustained and calibrate skipped; files in $OUT; total $(($(date +%s) - START)) s" |
    tee -a "$LOG"
  if [ ${#FAILED[@]} -gt 0 ]; then
    echo "failed steps: ${FAILED[*]} (see $LOG)" | tee -a "$LOG"
    exit 1
  fi
  exit 0
fi

# Host<->device with the copy engine and a copy kernel at three sizes, device-local copies, NCCL
# (one rank on a one-GPU machine: its sweep shows call latency; busbw is 0 by nccl-tests' definition).
step "bench" 240 bash -c "'$LINKWISE' bench --sizes 4M,64M,256M --engines ce,sm --samples 5 \
  --ops all_reduce -b 8 -e 256M -f 4 --machine \"\$(hostname): gpu-check\" -o '$OUT/measured.json' > '$OUT/bench.txt'"
step "sustained" 150 bash -c "'$LINKWISE' bench --skip host,local,peer,latency,nccl --sustained $SUSTAINED \
  --sustained-kind h2d --sustained-size 256M -o '$OUT/sustained.json' > '$OUT/sustained.txt'"

if [ -s "$OUT/measured.json" ]; then
  step "calibrate" 60 bash -c "'$LINKWISE' calibrate '$CHASSIS' '$OUT/measured.json' > '$OUT/calibrate.txt' && \
    '$LINKWISE' calibrate '$CHASSIS' '$OUT/measured.json' --json > '$OUT/calibrate.json' && \
    '$LINKWISE' calibrate '$CHASSIS' '$OUT/measured.json' --fit -o '$OUT/fitted-chassis.yaml' > '$OUT/fit.txt'"
  if [ -s "$OUT/probed-chassis.yaml" ]; then
    step "calibrate (probed chassis)" 60 bash -c "'$LINKWISE' calibrate '$OUT/probed-chassis.yaml' '$OUT/measured.json' \
      > '$OUT/calibrate-probed.txt'"
  fi
fi

say "results"
for f in probe-check.txt bench.txt sustained.txt calibrate.txt fit.txt calibrate-probed.txt; do
  if [ -s "$OUT/$f" ]; then
    echo "--- $f"
    cat "$OUT/$f"
  fi
done | tee -a "$LOG"
echo "files in $OUT; total $(($(date +%s) - START)) s" | tee -a "$LOG"
if [ ${#FAILED[@]} -gt 0 ]; then
  echo "failed steps: ${FAILED[*]} (see $LOG)" | tee -a "$LOG"
  exit 1
fi
