#!/usr/bin/env bash
# verify_ab.sh REV [N]: git evolve verify as built from REV (a)
# beside the working tree's (b), on two copies of one ledger of N records
# (default 10000) made by bench/genrepo.sh, one copy each, so that each
# binary reads only what it kept itself. Runs alternate between the two so
# that noise hits both alike; each row gives both medians and the ratio b/a.
#
#   warm      nothing changed since the last verify (the summaries kept)
#   +1        one record since the last verify (its files put back)
#   +100      100 records since the last verify
#   first     nothing verified or kept before
#   full      verify --full (b only; a runs a plain verify, warm)
#
# Needs git, go and GNU time (/usr/bin/time). RUNS sets the runs (default 9).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
rev=${1:?usage: verify_ab.sh REV [N]}
n=${2:-10000}
runs=${RUNS:-9}
source "$here/lib.sh"
build_ab "$rev"

bash "$here/genrepo.sh" "$n" "$work/repo" >/dev/null
for s in a b; do
  cp -a "$work/repo" "$work/$s/repo"
  (cd "$work/$s/repo" && PATH="$work/$s/bin:$PATH" &&
    git evolve log -n 1 >/dev/null && git evolve verify >/dev/null &&
    keep=$work/$s/kept && mkdir -p "$keep" &&
    cp .git/evolve/verified .git/evolve/verify-* "$keep/" &&
    git update-ref refs/bench/base refs/notes/evolve &&
    for ((i = 1; i <= 100; i++)); do
      git evolve record --result harvested --target bench --goals-passing 1 --goals-total 2 --canonical-sha "main~$((n / 3 + i))" >/dev/null
      [ "$i" != 1 ] || git update-ref refs/bench/one refs/notes/evolve
    done &&
    git update-ref refs/bench/all refs/notes/evolve &&
    git update-ref refs/notes/evolve refs/bench/base && git reflog expire --expire=now refs/notes/evolve)
done

# run S ROW: one timed run of ROW with binary S (its prep untimed)
run() {
  local s=$1 row=$2 state
  cd "$work/$s/repo"
  export PATH="$work/$s/bin:$base_path"
  state=.git/evolve
  local restore="git reflog expire --expire=now refs/notes/evolve; cp $work/$s/kept/verified $work/$s/kept/verify-* $state/"
  case $row in
  warm) git update-ref refs/notes/evolve refs/bench/base; eval "$restore"; git evolve verify >/dev/null; set -- git evolve verify ;;
  +1) git update-ref refs/notes/evolve refs/bench/one; eval "$restore"; set -- git evolve verify ;;
  +100) git update-ref refs/notes/evolve refs/bench/all; eval "$restore"; set -- git evolve verify ;;
  first) git update-ref refs/notes/evolve refs/bench/base; eval "$restore"; rm -f $state/verified $state/verify-*; set -- git evolve verify ;;
  full) git update-ref refs/notes/evolve refs/bench/base; eval "$restore"; git evolve verify >/dev/null
    if [ "$s" = b ]; then set -- git evolve verify --full; else set -- git evolve verify; fi ;;
  esac
  one "$s" "$@"
}

printf '%-8s %-10s %10s %10s %7s\n' records row a b "b/a"
for row in warm +1 +100 first full; do
  : >"$work/t.a"; : >"$work/t.b"
  for ((i = 0; i < runs; i++)); do
    run a "$row" >>"$work/t.a"
    run b "$row" >>"$work/t.b"
  done
  ma=$(median <"$work/t.a"); mb=$(median <"$work/t.b")
  printf '%-8s %-10s %8.1fms %8.1fms %7.2f\n' "$n" "$row" "$ma" "$mb" "$(awk -v a="$ma" -v b="$mb" 'BEGIN{ print b/a }')"
done
