#!/usr/bin/env bash
# mirror.sh [N] [RUNS]: what keeping the seeds' .agents/evolve/cycle-history.jsonl
# costs git evolve record, on a ledger of N records made by bench/genrepo.sh
# (default 10000), RUNS runs each (default 15): each run makes an empty
# commit and records a cycle on it (as the seeds' writer does: HEAD moves,
# the note is on HEAD), in one repository alternately with the seeds'
# layout (.agents/evolve there: the file is appended to) and without it
# (the directory moved away: nothing written). Also: the file built whole
# (its state removed first), with the same command. Medians of wall times,
# and of CPU times (user and system, git's processes included), which a
# loaded machine disturbs less.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
n=${1:-10000}
runs=${2:-15}

bash "$here/genrepo.sh" "$n" "$work/repo" >/dev/null
cd "$work/repo"
git evolve init -q --no-hooks
mkdir -p .agents/evolve
git evolve log -n 1 >/dev/null # the view, the index and the file, built once
test -s .agents/evolve/cycle-history.jsonl
state=.git/evolve/history-mirror.json

# rec TAG: a commit of a file (as a cycle's work), then the record on it;
# appends "wall-ms cpu-ms" to $work/TAG
rec() {
  echo "$1 $2" >work.txt
  git add work.txt
  git commit -q -m "bench $1 $2"
  /usr/bin/time -f '%e %U %S' -o "$work/time" git evolve record --result improved --target bench --goals-passing 1 --goals-total 2 >/dev/null
  awk '{ printf "%.1f %.1f\n", $1 * 1000, ($2 + $3) * 1000 }' "$work/time" >>"$work/$1"
}
: >"$work/with"
: >"$work/without"
: >"$work/whole"
for i in $(seq "$runs"); do
  rec with "$i"
  mv .agents/evolve .agents/evolve.off
  rec without "$i"
  mv .agents/evolve.off .agents/evolve
  rm -f "$state" .agents/evolve/cycle-history.jsonl
  rec whole "$i"
done
lines=$(wc -l <.agents/evolve/cycle-history.jsonl)
git evolve log --json | cmp - .agents/evolve/cycle-history.jsonl
printf '%s records (the file: %s lines, %s bytes), %s runs each, medians:\n' "$n" "$lines" "$(wc -c <.agents/evolve/cycle-history.jsonl)" "$runs"
row() { printf '  %-32s %8.1f ms wall %8.1f ms cpu\n' "$1" "$(cut -d' ' -f1 <"$work/$2" | median)" "$(cut -d' ' -f2 <"$work/$2" | median)"; }
row 'record without the file' without
row 'record, the file appended to' with
row 'record, the file built whole' whole
