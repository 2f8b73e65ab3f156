#!/usr/bin/env bash
# sync.sh [N]: time git evolve sync of a ledger of N records (default 10000)
# against a remote that has 100 records this clone has not seen, while this
# clone has one the remote has not (so the sync merges, and pushes).
#
# Each run: clone B records 100 cycles and syncs; clone A records one and
# runs the timed sync. GIT_EVOLVE_TRACE gives the time of the git fetch and
# the git push inside it; the rest is git-evolve's own: reading both
# ledgers, the union merge, writing it.
#
# Needs git and go. RUNS sets the runs (default 5).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
n=${1:-10000}
runs=${RUNS:-5}
source "$here/lib.sh"

bash "$here/genrepo.sh" "$n" "$work/origin" >/dev/null
git clone -q --bare "$work/origin" "$work/remote.git"
git -C "$work/origin" push -q "$work/remote.git" refs/notes/evolve:refs/notes/evolve fresh
git -C "$work/remote.git" symbolic-ref HEAD refs/heads/main
for c in a b; do
  git clone -q "$work/remote.git" "$work/$c"
  git -C "$work/$c" fetch -q origin fresh:fresh
  git -C "$work/$c" evolve init --no-hooks >/dev/null
  git -C "$work/$c" evolve sync >/dev/null
done
fresh=($(git -C "$work/b" rev-list fresh~50..fresh))

: >"$work/total"; : >"$work/git"; : >"$work/own"
for ((r = 0; r < runs; r++)); do
  for ((i = 0; i < 100; i++)); do
    git -C "$work/b" evolve record --target "b$r" --result harvested --goals-passing 1 --goals-total 1 \
      --canonical-sha "${fresh[$(((r * 100 + i) % 50))]}" >/dev/null
  done
  git -C "$work/b" evolve sync >/dev/null
  git -C "$work/a" evolve record --target "a$r" --result harvested --goals-passing 1 --goals-total 1 \
    --canonical-sha "${fresh[$((r % 50))]}" >/dev/null
  t0=$(date +%s%N)
  GIT_EVOLVE_TRACE=1 git -C "$work/a" evolve sync >/dev/null 2>"$work/trace"
  t1=$(date +%s%N)
  total=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", (b - a) / 1e6 }')
  gitms=$(sed -n 's/.* git \(fetch\|push\) .*(\([0-9.]*\)ms)$/\2/p' "$work/trace" | awk '{ s += $1 } END { printf "%.1f", s }')
  echo "$total" >>"$work/total"; echo "$gitms" >>"$work/git"
  awk -v a="$total" -v b="$gitms" 'BEGIN { printf "%.1f\n", a - b }' >>"$work/own"
  grep -q 'merge evolve' <(git -C "$work/a" log -1 --format=%s refs/notes/evolve) || { echo "run $r did not merge" >&2; exit 1; }
done
records=$(git -C "$work/a" evolve export | wc -l)
printf '%-9s %-10s %12s %14s %14s\n' records new "sync" "fetch+push" "git-evolve"
printf '%-9s %-10s %10sms %12sms %12sms\n' "$records" 100 "$(median <"$work/total")" "$(median <"$work/git")" "$(median <"$work/own")"
