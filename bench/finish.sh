#!/usr/bin/env bash
# finish.sh [FILES]: time git evolve cycle finish on a working tree of FILES
# files (default 20000) where the cycle changed 10 (5 committed, 5 not), and
# its substantive delta beside the git CLI on the same tree:
#
#   improved:  a finish whose gate passes (the work is committed, recorded)
#   regressed: a finish whose gate fails (the work is saved, the cycle
#              reverted, the tree reset, recorded)
#   delta:     the finish's own delta (the working tree captured and
#              compared with the start, from GIT_EVOLVE_TRACE; git counts
#              the lines while the gate runs) beside
#              git diff --name-only <start> -- ':!.agents/**'
#
# A finish's overhead is its wall-clock time less the time its gate took
# (the goals' checks and the test commands; GIT_EVOLVE_TRACE reports it).
# The cycle start before each finish is timed too (it measures the goals
# and saves what the working tree holds of its own, here nothing).
# Needs git and go. RUNS sets the runs per figure (default 11).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
files=${1:-20000}
runs=${RUNS:-11}
source "$here/lib.sh"

repo="$work/repo"
bash "$here/gentree.sh" "$files" "$repo"
cd "$repo"
git evolve init --no-hooks >/dev/null
git status >/dev/null # refresh the index stat data, as any earlier git command would

# change N: the cycle's work, 5 files committed and 5 left uncommitted.
change() {
  local i
  for i in 0 1 2 3 4; do echo "run $1" >>"src/d00$i/f0000$i.txt"; done
  git commit -q -am "cycle work $1"
  for i in 5 6 7 8 9; do echo "run $1" >>"src/d00$i/f0000$i.txt"; done
}

# finish RESULT: one timed finish; appends wall, gate and delta times.
finish() {
  local t0 t1 want=0
  [ "$1" = regressed ] && want=3
  t0=$(date +%s%N)
  GIT_EVOLVE_TRACE=1 git evolve cycle finish >/dev/null 2>"$work/trace" || [ $? = "$want" ] || { cat "$work/trace" >&2; exit 1; }
  t1=$(date +%s%N)
  grep -q "cycle finish\|finish: done" "$work/trace"
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f\n", (b - a) / 1e6 }' >>"$work/$1.wall"
  sed -n 's/.*finish: done .* of which the gate \([0-9.]*\)ms).*/\1/p' "$work/trace" >>"$work/$1.gate"
  sed -n 's/.*finish: the delta.*(\([0-9.]*\)ms)$/\1/p' "$work/trace" >>"$work/$1.delta"
}

for ((i = 0; i < runs; i++)); do
  for result in improved regressed; do
    wall_ms git evolve cycle start --target ok >>"$work/start.wall"
    start=$(git rev-parse HEAD)
    change "$i-$result"
    [ "$result" = regressed ] && echo x >broken
    wall_ms git diff --name-only "$start" -- ':!.agents/**' >>"$work/$result.diff"
    finish "$result"
  done
done

printf '%-9s %-9s %10s %10s %10s %12s %12s %7s\n' files result finish gate overhead delta "git diff" ratio
for result in improved regressed; do
  w=$(median <"$work/$result.wall"); g=$(median <"$work/$result.gate")
  d=$(median <"$work/$result.delta"); gd=$(median <"$work/$result.diff")
  o=$(paste -d' ' "$work/$result.wall" "$work/$result.gate" | awk '{ print $1 - $2 }' | median)
  printf '%-9s %-9s %8sms %8sms %8sms %10sms %10sms %7.2f\n' "$files" "$result" "$w" "$g" "$o" "$d" "$gd" "$(awk -v a="$d" -v b="$gd" 'BEGIN{print a/b}')"
done
printf 'cycle start: %sms (median of %d)\n' "$(median <"$work/start.wall")" "$((2 * runs))"
