#!/usr/bin/env bash
# record_ab.sh REV [N...]: git evolve record as built from REV (a) beside
# the working tree's (b) and beside git notes --ref=evolve add, on copies
# of a ledger of N records made by bench/genrepo.sh (default sizes: 1000
# 10000 100000), one copy each. The three alternate run by run, so that
# the load of a shared machine hits them alike; each row gives the median
# CPU of each (user + system, the git processes it starts and waits for
# included, to the microsecond) and wall clock, and the ratios b/a and
# b/git. Each run records on a commit of its own (the branch fresh).
#
#   first     nothing under the git directory's evolve/ (a fresh clone)
#   warm      what the record before left there
#   indexed   after a record whose cycle is given (which reads every
#             note once: the view is saved)
#
# BENCH_REPOS=DIR reuses DIR/rN as firstwarm.sh does. RUNS sets the runs
# (default 9). Needs git and go.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
rev=${1:?usage: record_ab.sh REV [N...]}
shift
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1000 10000 100000)
runs=${RUNS:-9}
source "$here/lib.sh"
build_ab "$rev"

# timed S CMD...: one run of CMD in S's copy (timed_ab)
timed() {
  local s=$1
  shift
  cd "$work/$s/repo"
  timed_ab "$s" "$@"
}

printf '%-8s %-8s %9s %9s %9s %6s %6s %9s %9s %9s\n' records row "a cpu" "b cpu" "git cpu" "b/a" "b/git" "a wall" "b wall" "git wall"
for n in "${sizes[@]}"; do
  for s in a b g; do
    copy_ledger "$n" "$work/$s/repo"
    rm -rf "$work/$s/repo/.git/evolve"
  done
  fresh=($(cd "$work/a/repo" && git rev-list main..fresh))
  k=0
  for row in first warm indexed; do
    : >"$work/t.a"; : >"$work/t.b"; : >"$work/t.g"
    for s in a b; do
      (cd "$work/$s/repo" && PATH="$work/$s/bin:$base_path" && rm -rf .git/evolve &&
        case $row in
        warm) git evolve record --result harvested --target bench --goals-passing 1 --goals-total 2 --canonical-sha "${fresh[$k]}" >/dev/null ;;
        indexed) # a record with its cycle given asks every cycle: the view is saved
          git evolve record --cycle $((n + 1000)) --result harvested --target bench --goals-passing 1 --goals-total 2 --canonical-sha "${fresh[$k]}" >/dev/null ;;
        esac)
    done
    k=$((k + 1))
    for ((i = 0; i < runs; i++)); do
      sha=${fresh[$((k % ${#fresh[@]}))]}
      k=$((k + 1))
      for s in a b; do
        [ "$row" != first ] || rm -rf "$work/$s/repo/.git/evolve"
        timed "$s" git evolve record --result harvested --target bench --goals-passing 1 --goals-total 2 --canonical-sha "$sha"
      done
      timed g git notes --ref=evolve add -f -m '{"cycle":0}' "$sha"
    done
    ca=$(col 1 "$work/t.a"); cb=$(col 1 "$work/t.b"); cg=$(col 1 "$work/t.g")
    printf '%-8s %-8s %7.1fms %7.1fms %7.1fms %6.2f %6.2f %7.1fms %7.1fms %7.1fms\n' "$n" "$row" "$ca" "$cb" "$cg" \
      "$(awk -v a="$ca" -v b="$cb" 'BEGIN { print b / a }')" "$(awk -v a="$cg" -v b="$cb" 'BEGIN { print b / a }')" \
      "$(col 2 "$work/t.a")" "$(col 2 "$work/t.b")" "$(col 2 "$work/t.g")"
  done
done
