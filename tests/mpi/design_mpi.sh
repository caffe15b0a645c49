#!/bin/sh
# `linkwise design` under `mpirun -np 2` prints what one process prints: the JSON of the example
# training space, less the wall time and the process count. Exits 77 (skipped) without MPI.
# Usage: design_mpi.sh LINKWISE MPIEXEC SPACE WORKDIR
set -eu
linkwise=$1 mpiexec=$2 space=$3 dir=$4
if [ -z "$mpiexec" ] || [ ! -x "$mpiexec" ]; then
  echo "skipped: linkwise was built without MPI"
  exit 77
fi
mkdir -p "$dir"
# A container runs both ranks on this box: no ssh, shared memory and loopback only.
export OMPI_MCA_plm_rsh_agent= OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
root=""
[ "$(id -u)" = 0 ] && root=--allow-run-as-root
strip() { grep -v -e '"seconds"' -e '"processes"' "$1"; }
"$linkwise" design "$space" --threads 1 --json >"$dir/one.json"
"$mpiexec" -np 2 $root --oversubscribe "$linkwise" design "$space" --threads 1 --json >"$dir/two.json"
grep -q '"processes": 2' "$dir/two.json" || { echo "mpirun run did not use 2 processes"; exit 1; }
strip "$dir/one.json" >"$dir/one.cmp"
strip "$dir/two.json" >"$dir/two.cmp"
if ! cmp -s "$dir/one.cmp" "$dir/two.cmp"; then
  echo "2 processes differ from 1:"
  diff "$dir/one.cmp" "$dir/two.cmp" | head -40
  exit 1
fi
echo "design_mpi: 2 processes print what 1 prints ($(wc -l <"$dir/one.cmp") lines)"
