#!/bin/sh
# Checks that every tracked C++ source is laid out as .clang-format says (no file is changed).
# Usage: scripts/check-format.sh   (from the repository root; needs clang-format-14)
set -eu
CLANG_FORMAT=${CLANG_FORMAT:-clang-format-14}
git ls-files '*.cc' '*.h' '*.cu' | xargs "$CLANG_FORMAT" --dry-run -Werror
