#!/usr/bin/env bash
# view_ab.sh REV [N...]: the commands that read the saved view of the
# ledger, with git-evolve as built from REV (a) beside the working tree's
# (b), on two copies of each ledger of N records (default sizes: 10000
# 100000) made by bench/genrepo.sh, one for each binary, so that each reads
# the view it wrote. Runs alternate between the two; each row gives the
# medians of the CPU (user + system, the git processes a command starts
# included) and of the wall clock, the ratios b/a and both peak RSS.
#
#   log -n 20, show cycle, status, log, export    warm (run just before)
#   export +1   export after one more record, the view of the ledger before
#               it put back first: the view read whole, brought forward by
#               that note and saved
#
# It prints the size of each binary's view first. BENCH_REPOS=DIR reuses
# DIR/rN when it is there (a copy is timed). RUNS sets the runs (default
# 5). Needs git, go and GNU time.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
rev=${1:?usage: view_ab.sh REV [N...]}
shift
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(10000 100000)
runs=${RUNS:-5}
source "$here/lib.sh"
build_ab "$rev"

# row NAME PREP CMD: RUNS alternating runs of CMD in each copy, PREP (a
# shell command, may be :) run before each, untimed
row() {
  local name=$1 prep=$2 cmd=$3 s
  for s in a b; do : >"$work/t.$s"; done
  for ((i = 0; i < runs; i++)); do
    for s in a b; do
      cd "$work/$s/repo$n"
      PATH="$work/$s/bin:$base_path" eval "$prep"
      eval "set -- $cmd"
      timed_ab "$s" "$@"
    done
  done
  local ca cb wa wb
  ca=$(col 1 "$work/t.a"); cb=$(col 1 "$work/t.b")
  wa=$(col 2 "$work/t.a"); wb=$(col 2 "$work/t.b")
  printf '%-8s %-12s %8sms %8sms %6.2f %8sms %8sms %6.2f %6sM %6sM\n' "$n" "$name" "$ca" "$cb" \
    "$(awk -v a="$ca" -v b="$cb" 'BEGIN{ if (a < 1) a = 1; print b/a }')" "$wa" "$wb" \
    "$(awk -v a="$wa" -v b="$wb" 'BEGIN{ if (a < 1) a = 1; print b/a }')" \
    "$(($(colmax 3 "$work/t.a") / 1024))" "$(($(colmax 3 "$work/t.b") / 1024))"
}

printf '%-8s %-12s %10s %10s %6s %10s %10s %6s %7s %7s\n' records command "cpu a" "cpu b" "b/a" "wall a" "wall b" "b/a" "rss a" "rss b"
for n in "${sizes[@]}"; do
  one=$(cd "$(ledger "$n")" && git rev-parse fresh)
  for s in a b; do
    copy_ledger "$n" "$work/$s/repo$n"
    (cd "$work/$s/repo$n" && export PATH="$work/$s/bin:$base_path" && rm -rf .git/evolve &&
      git update-ref refs/bench/base refs/notes/evolve &&
      git evolve record --result harvested --target bench --goals-passing 1 --goals-total 2 --canonical-sha "$one" >/dev/null &&
      git update-ref refs/bench/one refs/notes/evolve && git update-ref refs/notes/evolve refs/bench/base &&
      git evolve export >/dev/null && cp .git/evolve/ledger.view "$work/$s/view$n")
  done
  echo "# $n records: the view is $(stat -c %s "$work/a/view$n") bytes (a), $(stat -c %s "$work/b/view$n") bytes (b)"
  mid=$((n / 2))
  for cmd in "log -n 20|git evolve log -n 20" "show cycle|git evolve show $mid" "status|git evolve status" \
    "log|git evolve log" "export|git evolve export"; do
    IFS='|' read -r name ev <<<"$cmd"
    row "$name" "$ev >/dev/null" "$ev"
  done
  back='git update-ref refs/notes/evolve refs/bench/one && cp "$work/$s/view$n" .git/evolve/ledger.view'
  row "export +1" "$back" "git evolve export"
  rm -rf "$work/a/repo$n" "$work/b/repo$n"
done
