#!/bin/sh
# Opens a linkwise report in headless Chromium: it must render with no console error, and the DOM
# Chromium built must hold one drawn element per GPU and per link (as many as the drawing says it
# has: data-gpus / data-links, which the unit tests hold against the chassis). Saves a screenshot.
# Usage: report_in_chromium.sh LINKWISE OUTDIR.  Exit 77 (skipped) when Chromium cannot run here.
set -u
LW=$1
OUT=$2
command -v chromium >/dev/null 2>&1 || { echo "skipped: chromium is not installed"; exit 77; }
mkdir -p "$OUT" || exit 1
OUT=$(cd "$OUT" && pwd)
html="$OUT/report.html"
"$LW" report training-appliance --job "--model llama3-70b --mode lora" -o "$html" || exit 1
# Headless Chromium as root needs --no-sandbox.
run() { timeout 90 chromium --headless --no-sandbox --disable-gpu --no-first-run \
  --user-data-dir="$OUT/chromium-profile" --enable-logging=stderr --v=0 "$@" "file://$html"; }
run --dump-dom >"$OUT/report-dom.html" 2>"$OUT/report-chromium.log"
if [ ! -s "$OUT/report-dom.html" ]; then
  echo "skipped: chromium could not run:"; tail -5 "$OUT/report-chromium.log"; exit 77
fi
status=0
if grep -i "CONSOLE" "$OUT/report-chromium.log" | grep -qi "error"; then
  echo "console errors:"; grep -i "CONSOLE" "$OUT/report-chromium.log"; status=1
fi
gpus=$(sed -n 's/.*class="linkwise-drawing"[^>]*data-gpus="\([0-9]*\)".*/\1/p' "$html" | head -1)
links=$(sed -n 's/.*class="linkwise-drawing"[^>]*data-links="\([0-9]*\)".*/\1/p' "$html" | head -1)
dom_gpus=$(grep -o 'data-kind="gpu"' "$OUT/report-dom.html" | wc -l)
dom_links=$(grep -o 'class="link"' "$OUT/report-dom.html" | wc -l)
echo "drawing: $gpus GPUs, $links links; rendered DOM: $dom_gpus GPU boxes, $dom_links link elements"
[ "$gpus" = 8 ] || { echo "the training appliance has 8 GPUs, the drawing says '$gpus'"; status=1; }
[ "$dom_gpus" = "$gpus" ] || status=1
[ "$dom_links" = "$links" ] && [ "$links" -gt 0 ] || status=1
run --screenshot="$OUT/report-screenshot.png" --window-size=1400,2600 --hide-scrollbars \
  >/dev/null 2>>"$OUT/report-chromium.log"
[ -s "$OUT/report-screenshot.png" ] || { echo "no screenshot"; status=1; }
echo "screenshot: $OUT/report-screenshot.png"
exit $status
