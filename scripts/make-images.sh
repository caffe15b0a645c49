#!/bin/sh
# Makes the pictures README.md shows, into docs/img/, with the built linkwise: the training
# appliance drawn (SVG, and PNG coloured by use in a LoRA fine-tune of Llama 3 70B) and a screenshot
# of one HTML report holding every section. Needs rsvg-convert and chromium (make test installs
# both). Usage: scripts/make-images.sh [path/to/linkwise]
set -eu
cd "$(dirname "$0")/.."
LW=${1:-build/linkwise}
JOB="--model llama3-70b --mode lora"
mkdir -p docs/img build
"$LW" draw training-appliance -o docs/img/training-appliance.svg
"$LW" draw training-appliance --job "$JOB" -o docs/img/training-appliance-lora.png
"$LW" report training-appliance --job "$JOB" \
  --design examples/design/training-appliance-space.yaml \
  --measured data/measured/public-reference.json -o build/report.html
# Headless Chromium as root needs --no-sandbox.
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir=build/chromium-profile \
  --window-size=1280,3350 --screenshot="$PWD/docs/img/report.png" "file://$PWD/build/report.html" \
  2>/dev/null
echo "docs/img: training-appliance.svg training-appliance-lora.png report.png"
