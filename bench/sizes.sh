#!/usr/bin/env bash
# sizes.sh [N…]: what the derived files under the git directory's evolve/
# weigh beside the ledger's note text, for ledgers of N records made by
# bench/genrepo.sh (default 1000 10000 100000). On a copy of each, every
# read that keeps a file runs once (verify, log, status, show), then one
# record and a verify again (so that the files kept after an addition
# exist too); then each file's size, their sum, and the sum of the notes'
# blob sizes (what `git notes --ref=evolve list` names, as git stores them
# inflated) are printed, one line each, tab-separated, in bytes.
# BENCH_REPOS=DIR reuses DIR/rN as firstwarm.sh does.
#
#   BENCH_REPOS=/tmp/bench bash bench/sizes.sh 1000 100000
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1000 10000 100000)
printf 'records\tfile\tbytes\n'
for n in "${sizes[@]}"; do
  copy_ledger "$n" "$work/copy"
  (
    cd "$work/copy"
    state=$(git rev-parse --git-common-dir)/evolve
    rm -rf "$state"
    git evolve verify >/dev/null 2>&1 || true
    git evolve log >/dev/null
    git evolve status >/dev/null 2>&1 || true
    cyc=$(git evolve log -n 1 --json | grep -o "\"cycle\":[0-9]*" | head -n 1 | cut -d: -f2)
    git evolve show "${cyc:-1}" >/dev/null 2>&1 || true
    sha=$(git rev-list -n 1 main..fresh)
    git evolve record --result harvested --target t --goals-passing 1 --goals-total 2 --canonical-sha "$sha" >/dev/null
    git evolve verify >/dev/null 2>&1 || true
    total=0
    for f in "$state"/*; do
      [ -f "$f" ] || continue
      b=$(wc -c <"$f")
      total=$((total + b))
      printf '%s\t%s\t%s\n' "$n" "${f##*/}" "$b"
    done
    text=$(git notes --ref=evolve list | cut -d' ' -f1 |
      git cat-file --batch-check='%(objectsize)' | awk '{ s += $1 } END { print s + 0 }')
    printf '%s\t%s\t%s\n' "$n" "(all derived files)" "$total"
    printf '%s\t%s\t%s\n' "$n" "(note text)" "$text"
    awk -v a="$total" -v b="$text" -v n="$n" 'BEGIN { printf "%s\t(derived / note text)\t%.2f\n", n, a / b }'
  )
done
