#!/usr/bin/env bash
# verify_not_clean.sh [N…]: what verify costs, run again and again, in a
# clone whose ledger was never found clean. On a copy of a bench/genrepo.sh
# ledger of N records (default 1000 10000 100000), one record is edited by
# plain git (a breach) and the state under evolve/ removed; then the first
# verify runs, and RUNS more (default 5), each on what the one before left.
# Prints, tab-separated, the wall milliseconds of the first and the median
# of the others, and the commits of the history the last one read.
# BENCH_REPOS=DIR reuses DIR/rN as firstwarm.sh does.
#
#   BENCH_REPOS=/tmp/bench RUNS=5 bash bench/verify_not_clean.sh 10000 100000
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
runs=${RUNS:-5}
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1000 10000 100000)
# breached_ms: wall ms of one verify, which must find the breach (exit 2)
breached_ms() {
  local t0 t1 rc=0
  t0=$(date +%s%N)
  git evolve verify >"$work/out" 2>&1 || rc=$?
  t1=$(date +%s%N)
  [ "$rc" = 2 ] || { echo "verify exited $rc, not 2:" >&2; cat "$work/out" >&2; return 1; }
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f\n", (b - a) / 1e6 }'
}
printf 'records\tfirst ms\tafter ms (median of %d)\thistory read after\n' "$runs"
for n in "${sizes[@]}"; do
  copy_ledger "$n" "$work/copy"
  (
    cd "$work/copy"
    obj=$(git notes --ref=evolve list | awk 'NR == 1 { print $2 }')
    git notes --ref=evolve show "$obj" | sed 's/"goals_passing":[0-9]*/"goals_passing":99/' >"$work/edited"
    git notes --ref=evolve add -f -F "$work/edited" "$obj" 2>/dev/null
    rm -rf "$(git rev-parse --git-common-dir)/evolve"
    first=$(breached_ms)
    after=$(for ((i = 0; i < runs; i++)); do breached_ms; done | median)
    read=$(sed -n 's/.*; \([0-9]*\) commit(s) of its history read$/\1/p' "$work/out")
    printf '%s\t%s\t%s\t%s\n' "$n" "$first" "$after" "$read"
  )
done
