#!/usr/bin/env bash
# switch.sh [FILES]: ways git can bring a checkout of a tree of FILES files
# (bench/gentree.sh, default 20000) from a cycle's start to its work (10
# files changed), as the judging checkout is brought to each judged
# commit; timed in turn, run by run, each from a checkout at the start
# (put there untimed by git reset --hard and git clean -ffdx, then left a
# second, so that its index is not racy). RUNS sets the runs (default 11).
#
#   judge        git reset --hard + git clean -ffdx (what the judge runs)
#   checkout     git checkout --detach -f + git clean -ffdx
#   read-tree    git read-tree -m -u <start> <work> + git update-ref HEAD +
#                git clean -ffdx (a two-tree switch)
#   reset        git reset --hard alone
#   clean        git clean -ffdx alone (the checkout already at the work)
#   refresh      git update-index --refresh (a walk of the tracked files'
#                stat data, nothing written; the least any check of them costs)
#   v4           the judge's two, in a worktree whose index is version 4
#   paths        git checkout <work> -- <the paths that differ> + git
#                update-ref HEAD (no walk: trusts that nothing else changed)
#   rev-parse    git rev-parse HEAD (what one git process costs here)
#
# Then a checkout made anew, each after the removal of the last and a sync
# (RUNS_NEW runs, default 5):
#
#   add          git worktree add --detach (which runs git reset --hard)
#   add+reset    git worktree add --detach --no-checkout + git reset --hard +
#                git clean -ffdx (what the judge runs)
#   workers      the same with checkout.workers=2 (git's parallel checkout)
#
# Needs git.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
files=${1:-20000}
runs=${RUNS:-11}
runs_new=${RUNS_NEW:-5}
source "$here/lib.sh"

repo="$work/repo"
bash "$here/gentree.sh" "$files" "$repo"
cd "$repo"
start=$(git rev-parse HEAD)
for i in 0 1 2 3 4 5 6 7 8 9; do echo "work" >>"src/d00$i/f0000$i.txt"; done
git commit -q -am work
work_c=$(git rev-parse HEAD)
git worktree add -q --detach "$work/wt" "$start"
git worktree add -q --detach "$work/wt4" "$start"
git -C "$work/wt4" update-index --index-version 4
paths=$(git diff-tree -r --name-only "$start" "$work_c")

keep=(-e /node_modules -e /.venv -e /venv)
m_judge() { git -C "$work/wt" reset -q --hard --no-recurse-submodules "$work_c" && git -C "$work/wt" clean -ffdxq "${keep[@]}"; }
m_checkout() { git -C "$work/wt" checkout -q --detach -f --no-recurse-submodules "$work_c" && git -C "$work/wt" clean -ffdxq "${keep[@]}"; }
m_read-tree() { git -C "$work/wt" read-tree -m -u "$start" "$work_c" && git -C "$work/wt" update-ref --no-deref HEAD "$work_c" && git -C "$work/wt" clean -ffdxq "${keep[@]}"; }
m_reset() { git -C "$work/wt" reset -q --hard --no-recurse-submodules "$work_c"; }
m_clean() { git -C "$work/wt" clean -ffdxq "${keep[@]}"; }
m_refresh() { git -C "$work/wt" update-index -q --refresh; }
m_v4() { git -C "$work/wt4" reset -q --hard --no-recurse-submodules "$work_c" && git -C "$work/wt4" clean -ffdxq "${keep[@]}"; }
# shellcheck disable=SC2086
m_paths() { git -C "$work/wt" checkout -q "$work_c" -- $paths && git -C "$work/wt" update-ref --no-deref HEAD "$work_c"; }
m_rev-parse() { git -C "$work/wt" rev-parse HEAD; }
methods=(judge checkout read-tree reset clean refresh v4 paths rev-parse)

# at DIR COMMIT: the checkout DIR put at COMMIT, untimed
at() { git -C "$1" reset -q --hard "$2" && git -C "$1" clean -ffdxq "${keep[@]}"; }

for ((i = 0; i < runs; i++)); do
  n=${#methods[@]}
  for ((k = 0; k < n; k++)); do
    m=${methods[$(((k + i) % n))]}
    case $m in
    clean) at "$work/wt" "$work_c" ;;
    v4) at "$work/wt4" "$start" ;;
    *) at "$work/wt" "$start" ;;
    esac
    sleep 1
    wall_ms "m_$m" >>"$work/$m"
  done
done

n_add() { git worktree add -q --detach "$work/new" "$work_c"; }
n_add+reset() { git worktree add -q --detach --no-checkout "$work/new" "$work_c" && git -C "$work/new" reset -q --hard --no-recurse-submodules "$work_c" && git -C "$work/new" clean -ffdxq "${keep[@]}"; }
n_workers() { git worktree add -q --detach --no-checkout "$work/new" "$work_c" && git -C "$work/new" -c checkout.workers=2 reset -q --hard --no-recurse-submodules "$work_c" && git -C "$work/new" clean -ffdxq "${keep[@]}"; }
news=(add add+reset workers)
for ((i = 0; i < runs_new; i++)); do
  n=${#news[@]}
  for ((k = 0; k < n; k++)); do
    m=${news[$(((k + i) % n))]}
    [ ! -e "$work/new" ] || git worktree remove --force "$work/new"
    sync
    sleep 1
    wall_ms "n_$m" >>"$work/$m"
  done
done

printf '%-10s %10s %10s %10s\n' way median min max
for m in "${methods[@]}" "${news[@]}"; do
  printf '%-10s %8sms %8sms %8sms\n' "$m" "$(median <"$work/$m")" "$(sort -n "$work/$m" | head -1)" "$(sort -n "$work/$m" | tail -1)"
done
