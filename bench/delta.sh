#!/usr/bin/env bash
# delta.sh [FILES]: time the substantive delta of an open cycle on a working
# tree of FILES files (default 20000) beside the git CLI on the same tree.
#
#   delta:  git evolve cycle status --json  vs  git diff --name-only <start>
#   status: the same                        vs  git status --porcelain -uall
#
# The cycle has changed 20 tracked files, committed 10 more, and added 5
# untracked ones. git-evolve's figure includes its own start-up, reading the
# open cycle, the line counts and the untracked listing that git diff does not
# do; git status lists the untracked files too (against HEAD, not the start).
#
# Needs git and go. RUNS sets the runs per figure.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
files=${1:-20000}
runs=${RUNS:-11}
source "$here/lib.sh"

repo="$work/repo"
bash "$here/gentree.sh" "$files" "$repo"
cd "$repo"
git evolve init --no-hooks >/dev/null
git evolve cycle start --target ok >/dev/null
start=$(git rev-parse HEAD)
for i in $(seq 0 9); do echo more >>"src/d$(printf %03d "$i")/f$(printf %05d "$i").txt"; done
git commit -q -am 'cycle work'
for i in $(seq 10 29); do echo more >>"src/d$(printf %03d "$i")/f$(printf %05d "$i").txt"; done
for i in $(seq 1 5); do echo new >"src/new$i.txt"; done

: >"$work/a"; : >"$work/b"; : >"$work/c"
git status >/dev/null    # refresh the index stat data, as any earlier git command would
for ((i = 0; i < runs; i++)); do
  wall_ms git evolve cycle status --json >>"$work/a"
  wall_ms git diff --name-only "$start" >>"$work/b"
  wall_ms git status --porcelain -uall >>"$work/c"
done
ma=$(median <"$work/a"); mb=$(median <"$work/b"); mc=$(median <"$work/c")
printf '%-8s %-8s %12s %12s %7s\n' files op "git-evolve" "git" ratio
printf '%-8s %-8s %10sms %10sms %7.2f\n' "$files" delta "$ma" "$mb" "$(awk -v a="$ma" -v b="$mb" 'BEGIN{print a/b}')"
printf '%-8s %-8s %10sms %10sms %7.2f\n' "$files" status "$ma" "$mc" "$(awk -v a="$ma" -v c="$mc" 'BEGIN{print a/c}')"
