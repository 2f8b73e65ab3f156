#!/usr/bin/env bash
# sequence_ab.sh REV [N...]: what a user's loop runs, one command after
# the other, as built from REV (a) beside the working tree's (b), on a
# copy of a ledger of N records made by bench/genrepo.sh for each (default
# sizes: 1000 10000 100000): a record on a commit of its own, the whole
# listing (log --json), log -n 20, status, verify, log -n 20 again. Each
# command runs on what the one before left under evolve/ (after one warm
# run of the reads), the two builds alternating sequence by sequence; each
# row gives the median wall clock and CPU (user + system, the git
# processes it starts included) of each build and the ratio of CPU b/a.
#
# BENCH_REPOS=DIR reuses DIR/rN as firstwarm.sh does. RUNS sets the runs
# (default 9; the ledger has 50 commits without a note, two a run). Needs
# git and go.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
rev=${1:?usage: sequence_ab.sh REV [N...]}
shift
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1000 10000 100000)
runs=${RUNS:-9}
source "$here/lib.sh"
build_ab "$rev"
rows=(record "log --json" "log -n 20" status verify "log -n 20, again")
args=("record --result harvested --target t --goals-passing 1 --goals-total 2 --canonical-sha" "log --json" "log -n 20" status verify "log -n 20")
printf '%-8s %-18s %10s %10s %10s %10s %6s\n' records command "a wall" "b wall" "a cpu" "b cpu" "b/a"
for n in "${sizes[@]}"; do
  for s in a b; do
    copy_ledger "$n" "$work/$s/repo"
    (cd "$work/$s/repo" && export PATH="$work/$s/bin:$base_path" &&
      git evolve log -n 20 >/dev/null && git evolve verify >/dev/null && git evolve status >/dev/null || true)
  done
  fresh=($(cd "$work/a/repo" && git rev-list main..fresh))
  for ((r = 0; r < ${#rows[@]}; r++)); do : >"$work/t.$r.a"; : >"$work/t.$r.b"; done
  for ((i = 0; i < runs; i++)); do
    for s in a b; do
      k=0
      [ "$s" = a ] || k=1
      for ((r = 0; r < ${#rows[@]}; r++)); do
        cmd="git evolve ${args[$r]}"
        [ "$r" != 0 ] || cmd="$cmd ${fresh[$((2 * i + k))]}"
        (cd "$work/$s/repo" && timed_ab "$s" sh -c "$cmd" || true)
        tail -1 "$work/t.$s" >>"$work/t.$r.$s"
      done
    done
  done
  for ((r = 0; r < ${#rows[@]}; r++)); do
    ca=$(col 1 "$work/t.$r.a"); cb=$(col 1 "$work/t.$r.b")
    printf '%-8s %-18s %8.1fms %8.1fms %8.1fms %8.1fms %6.2f\n' "$n" "${rows[$r]}" "$(col 2 "$work/t.$r.a")" "$(col 2 "$work/t.$r.b")" "$ca" "$cb" "$(awk -v a="$ca" -v b="$cb" 'BEGIN { print b / a }')"
  done
done
