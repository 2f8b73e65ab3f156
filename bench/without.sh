#!/usr/bin/env bash
# without.sh N FILE ARGS...: what the derived file FILE (under the git
# directory's evolve/) saves `git evolve ARGS`: the mean CPU (user +
# system, the git processes it starts included) of a run as the previous
# run left every file, and of a run with FILE removed first, alternating
# in blocks of 5 runs, on a copy of a ledger of N records made by
# bench/genrepo.sh. In ARGS, $SHA is a commit with no note, a new one
# each run (for record). BENCH_REPOS=DIR reuses DIR/rN as firstwarm.sh
# does; RUNS sets the runs of each (default 20). A remote-tracking copy
# of the ledger (refs/notes/remotes/origin/evolve) is made with BEHIND=K
# (the copy K notes commits behind the local ledger: pushed, then K
# records made here) or AHEAD=K (the local ledger moved K notes commits
# back, the copy at its tip: fetched and not merged).
#
#   bash bench/without.sh 10000 ledger.view record --result harvested --target t --goals-passing 1 --goals-total 2 --canonical-sha '$SHA'
#   bash bench/without.sh 10000 ledger.view 'record --result harvested --target t --goals-passing 1 --goals-total 2 --canonical-sha "$SHA" && git evolve verify'
#   BEHIND=1000 bash bench/without.sh 10000 ledger.view log -n 20
#   AHEAD=100 bash bench/without.sh 10000 verified verify
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
n=${1:?usage: without.sh N FILE ARGS...}
file=${2:?usage: without.sh N FILE ARGS...}
shift 2
runs=${RUNS:-20}
source "$here/lib.sh"
copy_ledger "$n" "$work/copy"
cd "$work/copy"
state=$(git rev-parse --git-common-dir)/evolve
fresh=($(git rev-list main..fresh))
if [ -n "${BEHIND:-}" ]; then
  git update-ref refs/notes/remotes/origin/evolve "$(git rev-parse "refs/notes/evolve~$BEHIND")"
elif [ -n "${AHEAD:-}" ]; then
  git update-ref refs/notes/remotes/origin/evolve "$(git rev-parse refs/notes/evolve)"
  git update-ref refs/notes/evolve "$(git rev-parse "refs/notes/evolve~$AHEAD")"
fi
j=0
# one run first, with SHA set, so that every file is there
export SHA=${fresh[0]}
eval "git evolve $*" >/dev/null 2>&1 || true
git evolve log -n 1 >/dev/null
eval "git evolve $*" >/dev/null 2>&1 || true
with=0 without=0
for ((r = 0; r < runs; r += 5)); do
  for w in with without; do
    prep=:
    [ "$w" = with ] || prep="rm -rf '$state/$file'"
    shas=""
    for k in 1 2 3 4 5; do j=$((j + 1)); shas="$shas ${fresh[$((j % ${#fresh[@]}))]}"; done
    /usr/bin/time -f '%U %S' -o "$work/time" bash -c "for SHA in $shas; do export SHA; $prep; eval \"git evolve \$*\" >/dev/null 2>&1 || true; done" x "$@"
    read -r u s <"$work/time"
    if [ "$w" = with ]; then with=$(awk -v a="$with" -v u="$u" -v s="$s" 'BEGIN { print a + u + s }')
    else without=$(awk -v a="$without" -v u="$u" -v s="$s" 'BEGIN { print a + u + s }'); fi
  done
done
awk -v a="$with" -v b="$without" -v n="$runs" -v f="$file" 'BEGIN { printf "with %s: %.1f ms of CPU a run; without: %.1f ms\n", f, a * 1000 / n, b * 1000 / n }'
