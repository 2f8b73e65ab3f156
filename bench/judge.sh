#!/usr/bin/env bash
# judge.sh [FILES]: what judging a cycle in a checkout of its own costs.
# It builds git-evolve twice, as it was before the judging checkout
# ($BEFORE, default 445c2a5: the gate ran in the working tree) and as this
# tree has it (the gate runs in a linked worktree kept in the cache
# directory: cycle start brings it to HEAD with git reset --hard and git
# clean -ffdx, and measures the goals and counts the tests there; cycle
# finish brings it to the cycle's start the same way while it captures the
# working tree, then advances it to the judged commit by git restore of the
# paths that differ), and times both, run by run in turn, so that noise hits
# both alike. Every figure is a median of RUNS runs (default 7); beside the
# wall time of a command, its processor time (user + sys, GNU time's: its
# own and that of the processes it started), which the load of a shared
# machine moves less.
#
# On a tree of FILES files (bench/gentree.sh, default 20000; no test
# command: the gate is the goals' two checks):
#
#   finish    cycle finish of an improved cycle that changed 10 files (5
#             committed, 5 not, no ruler file): its wall time, its gate
#             (GIT_EVOLVE_TRACE's "of which the gate", which holds the
#             judging checkout), the rest (wall less gate), and the judging
#             checkout on the way to the gate ("judge: the checkout at", or
#             "advanced to"), reused, and apart the checkout made ready at
#             the start beside the capture ("made ready at": git reset
#             --hard and git clean -ffdx, in parallel)
#   start     cycle start before it (after: the judging checkout brought to
#             HEAD, reused)
#   anew      the same finish and start with the judging checkout removed
#             just before (made anew: the first cycle of a clone, or a
#             cleared cache)
#   floor     what git itself takes for the same switch, from the cycle's
#             start to its work: git checkout --detach -f + git clean -ffdx
#             in a worktree at the start, and the judge's own git reset
#             --hard + git clean -ffdx run by hand there; and for a checkout
#             made anew, git worktree add --detach (timed beside it, each
#             after the removal of a checkout and a sync)
#
# On a Go module (bench/gengo.sh: GO_PACKAGES packages, default 20, each
# test spinning GO_ROUNDS rounds, default 100000000), whose gate is the
# detected go test ./... (a GOCACHE of the script's own, warmed first;
# GOFLAGS=-mod=mod GOTOOLCHAIN=local; go is a wrapper that counts the runs
# of go test):
#
#   finish    an improved cycle that changed 3 packages' code (2 committed,
#             1 not): go test builds and runs their tests again, and gives
#             the others' results from its cache
#   ruler     the same with a test file changed too (a ruler file: after,
#             the gate runs twice, the ruler held as at the start, then the
#             cycle's own)
#   start     cycle start after a finish (after: the census of the tests is
#             the one that finish kept: no run)
#   own       cycle start after a commit of one's own that changed 3
#             packages (after: the census runs go test)
#
# And a project whose gate is sh test.sh (which counts its runs) gives how
# many times the gate's command runs in two cycles: with TAP lines (a
# census the finish can keep) and without (no census: each start counts
# again).
#
# Needs git, go and GNU time (/usr/bin/time). PARTS (default "tree go
# count") picks the parts to run. The judging checkouts live under the
# script's own XDG_CACHE_HOME and HOME, removed with the rest on exit.
# TRACES=DIR keeps there every run's figures and the trace of the last run
# of each.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
files=${1:-20000}
runs=${RUNS:-7}
before=${BEFORE:-445c2a5}
packages=${GO_PACKAGES:-20}
rounds=${GO_ROUNDS:-100000000}
parts=" ${PARTS:-tree go count} "
[ "$packages" -ge 7 ] || { echo "judge.sh: GO_PACKAGES must be 7 or more (the cycles change p00 to p06)" >&2; exit 2; }
userhome=$HOME
source "$here/lib.sh"
start_s=$SECONDS

# the build before: its tree from git archive (no worktree to leave
# behind), built with the user's Go caches as lib.sh builds the current one
mkdir -p "$work/src" "$work/before" "$work/after"
HOME=$userhome git -C "$here/.." archive "$before" | tar -x -C "$work/src"
(cd "$work/src" && HOME=$userhome CGO_ENABLED=0 go build -o "$work/before/git-evolve" ./cmd/git-evolve)
rm -rf "$work/src"
cp "$work/bin/git-evolve" "$work/after/"
export XDG_CACHE_HOME="$work/cache"

# ev SIDE ARGS...: git evolve as SIDE (before, after) builds it
ev() {
  local side=$1
  shift
  PATH="$work/$side:$PATH" git evolve "$@"
}

# trsum TEXT: the sum of the times of the trace's lines holding TEXT
trsum() {
  awk -v p="$1" 'index($0, p) && match($0, /\([0-9.]+ms\)$/) { s += substr($0, RSTART + 1, RLENGTH - 4) } END { printf "%.2f\n", s }' "$work/trace"
}

# traced NAME SIDE ARGS...: one run of git evolve ARGS as SIDE, traced;
# appends to $work/NAME.SIDE.* its wall time, its processor time, its gate,
# its judging checkouts on the way and the one made ready (ms), and the
# runs of go test it made.
traced() {
  local name=$1 side=$2 t0 t1 rc=0 n0 f
  shift 2
  f="$work/$name.$side"
  n0=$(wc -l <"$work/gotest.runs")
  t0=$(date +%s%N)
  /usr/bin/time -f '%U %S' -o "$work/cpu" env GIT_EVOLVE_TRACE=1 PATH="$work/$side:$PATH" git evolve "$@" >"$work/out" 2>"$work/trace" || rc=$?
  t1=$(date +%s%N)
  [ "$rc" = 0 ] || { cat "$work/out" "$work/trace" >&2; echo "git evolve $* ($side): exit $rc" >&2; exit 1; }
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f\n", (b - a) / 1e6 }' >>"$f.wall"
  awk '{ printf "%.0f\n", ($1 + $2) * 1000 }' "$work/cpu" >>"$f.cpu"
  sed -n 's/.*finish: done .* of which the gate \([0-9.]*\)ms).*/\1/p' "$work/trace" >>"$f.gate"
  echo "$(trsum 'judge: the checkout at') $(trsum 'judge: the checkout advanced')" | awk '{ printf "%.2f\n", $1 + $2 }' >>"$f.judge"
  trsum 'judge: the checkout made ready' >>"$f.ready"
  echo $(($(wc -l <"$work/gotest.runs") - n0)) >>"$f.runs"
  cp "$work/trace" "$f.trace" # the last one, to read
}

# sides I: the order of the two builds in run I
sides() { if ((${1} % 2)); then echo after before; else echo before after; fi; }

# m FILE: the median of FILE, - when it has none
m() { if [ -s "$1" ]; then median <"$1"; else echo -; fi; }

# diff_of A B OUT: OUT gets A less B, line by line
diff_of() { [ -s "$1" ] && [ -s "$2" ] || return 0; paste -d' ' "$1" "$2" | awk 'NF == 2 { printf "%.2f\n", $1 - $2 }' >"$3"; }

# row LABEL NAME KIND: the medians of NAME.before.KIND and NAME.after.KIND,
# their ratio and what after adds (KIND runs: counts, not ms)
row() {
  local b a
  b=$(m "$work/$2.before.$3")
  a=$(m "$work/$2.after.$3")
  awk -v l="$1" -v b="$b" -v a="$a" -v k="$3" 'BEGIN {
    r = "-"; o = "-"
    if (k == "runs") { printf "%-52s %11s %11s\n", l, b, a; exit }
    if (b != "-" && a != "-" && b > 0) { r = sprintf("%.2f", a / b); o = sprintf("%+.0f%%", (a - b) / b * 100) }
    if (b != "-") b = sprintf("%.1fms", b); if (a != "-") a = sprintf("%.1fms", a)
    printf "%-52s %11s %11s %7s %9s\n", l, b, a, r, o }'
}

# frow LABEL A B: the medians of files A and B and their ratio
frow() {
  local a b
  a=$(m "$work/$2")
  b=$(m "$work/$3")
  awk -v l="$1" -v a="$a" -v b="$b" 'BEGIN { printf "%-52s %11.1fms %11.1fms %7.2f\n", l, a, b, a / b }'
}

: >"$work/gotest.runs"
tree() { echo "$work/t$files-$1"; }
mod() { echo "$work/go-$1"; }

# ---- the tree of FILES files

# change N: the cycle's work, 5 files committed and 5 left uncommitted
change() {
  local i
  for i in 0 1 2 3 4; do echo "run $1" >>"src/d00$i/f0000$i.txt"; done
  git commit -q -am "cycle work $1"
  for i in 5 6 7 8 9; do echo "run $1" >>"src/d00$i/f0000$i.txt"; done
}

# nocheckout SIDE: the judging checkout of SIDE's tree removed, as if the
# cache were cleared, and the removal written out
nocheckout() {
  rm -rf "$XDG_CACHE_HOME"/git-evolve/judge/*/"$(basename "$(tree "$1")")"
  git -C "$(tree "$1")" worktree prune
  sync
}

# cycle20k PREFIX SIDE N [anew]: a timed start and a timed finish
cycle20k() {
  cd "$(tree "$2")"
  [ "${4:-}" != anew ] || nocheckout "$2"
  traced "$1start" "$2" cycle start --target ok
  change "$3"
  [ "${4:-}" != anew ] || nocheckout "$2"
  traced "$1finish" "$2" cycle finish
}

switch_checkout() { git -C "$work/floor" checkout -q --detach -f "$1" && git -C "$work/floor" clean -ffdxq; }
switch_reset() { git -C "$work/floor" reset -q --hard "$1" && git -C "$work/floor" clean -ffdxq; }

# floor S W: git's own switch from S to W, two ways
floor() {
  switch_checkout "$1"
  wall_ms switch_checkout "$2" >>"$work/floor.checkout"
  switch_reset "$1"
  wall_ms switch_reset "$2" >>"$work/floor.reset"
}

# fresh: a fresh checkout of HEAD by git worktree add (after the removal
# of the last one and a sync, as the judging checkout made anew)
fresh() {
  local r
  r=$(tree before)
  [ ! -e "$work/fresh" ] || git -C "$r" worktree remove --force "$work/fresh"
  sync
  wall_ms git -C "$r" worktree add -q --detach "$work/fresh" HEAD >>"$work/floor.add"
}

if [[ $parts == *" tree "* ]]; then
  for side in before after; do
    bash "$here/gentree.sh" "$files" "$(tree $side)"
    (cd "$(tree $side)" && ev $side init --no-hooks >/dev/null && git status >/dev/null)
  done
  git -C "$(tree before)" worktree add -q --detach "$work/floor" HEAD
  # one untimed cycle each first (the judging checkout made, as in any
  # clone after its first cycle)
  for side in before after; do
    cycle20k warm- $side warm
  done
  for ((i = 0; i < runs; i++)); do
    for side in $(sides $i); do
      s=$(git -C "$(tree $side)" rev-parse HEAD)
      cycle20k "" $side "$i"
      [ $side = after ] || floor "$s" "$(git -C "$(tree before)" rev-parse HEAD)"
    done
  done
  for ((i = 0; i < runs; i++)); do
    for side in $(sides $i); do cycle20k anew- $side "anew $i" anew; done
    fresh
  done
fi

# ---- the Go module

# gochange N [test]: the cycle's work, 3 packages' code (2 committed, 1
# not), and with test, p03's test too
gochange() {
  local p
  for p in p00 p01; do sed -i "s/^const Run = .*/const Run = \"$1\"/" "$p/$p.go"; done
  git commit -q -am "cycle work $1"
  sed -i "s/^const Run = .*/const Run = \"$1\"/" p02/p02.go
  [ "${2:-}" != test ] || sed -i "s/^const run = .*/const run = \"$1\"/" p03/p03_test.go
}

# cyclego PREFIX SIDE N [test]: a timed start and a timed finish
cyclego() {
  cd "$(mod "$2")"
  traced "$1start" "$2" cycle start --target ok
  gochange "$3" "${4:-}"
  traced "$1finish" "$2" cycle finish
}

if [[ $parts == *" go "* ]]; then
  export GOCACHE="$work/gocache" GOFLAGS=-mod=mod GOTOOLCHAIN=local
  realgo=$(command -v go)
  mkdir -p "$work/shim"
  printf '#!/bin/sh\n[ "$1" = test ] && echo "$PWD" >>"%s"\nexec "%s" "$@"\n' "$work/gotest.runs" "$realgo" >"$work/shim/go"
  chmod +x "$work/shim/go"
  export PATH="$work/shim:$PATH"
  for side in before after; do
    bash "$here/gengo.sh" "$packages" "$rounds" "$(mod $side)"
    (cd "$(mod $side)" && ev $side init --no-hooks >/dev/null && git status >/dev/null && go test ./... >/dev/null)
  done
  for side in before after; do
    cyclego go-warm- $side warm
  done
  for ((i = 0; i < runs; i++)); do
    for side in $(sides $i); do
      # (each side's changes its own, so that no build or test result of
      # the other's is reused)
      cyclego go- $side "$i $side"
      cyclego go-ruler- $side "ruler $i $side" test
    done
  done
  # a commit of one's own, then a start on it (after its own cycles: the
  # tests of the packages it changed, which the start after runs, would
  # be run by before's next finish)
  for ((i = 0; i < runs; i++)); do
    for side in $(sides $i); do
      cd "$(mod $side)"
      for p in p04 p05 p06; do sed -i "s/^const Run = .*/const Run = \"own $i $side\"/" "$p/$p.go"; done
      git commit -q -am "own work $i"
      traced go-own-start $side cycle start --target ok
      ev $side cycle abort >/dev/null
    done
  done
fi

# ---- runs of the gate's command in two cycles

# count SIDE TAP: runs of sh test.sh at each step of two cycles, the second
# changing test.sh; TAP (tap or none) says whether test.sh prints TAP lines
count() {
  local dir=$work/count-$1-$2 log=$work/count-$1-$2.runs
  : >"$log"
  git init -q "$dir"
  cd "$dir"
  cat >GOALS.yaml <<'GOALS'
version: 3
gate: ["sh test.sh"]
goals:
  - id: feature
    description: the feature exists
    check: "test -e feature.txt"
    weight: 2
  - id: other
    description: other work
    check: "test -e other.txt"
    weight: 1
GOALS
  if [ "$2" = tap ]; then
    printf 'echo run >>%s\necho "TAP version 13"\necho "ok 1 - adds"\necho 1..1\n' "$log" >test.sh
  else
    printf 'echo run >>%s\necho "the tests pass"\n' "$log" >test.sh
  fi
  git add -A
  git commit -q -m base
  ev "$1" init --no-hooks >/dev/null
  local n=0 out=""
  step() { out="$out $(($(wc -l <"$log") - n))"; n=$(wc -l <"$log"); }
  ev "$1" cycle start --target feature >/dev/null
  step
  echo f >feature.txt
  ev "$1" cycle finish >/dev/null
  step
  ev "$1" cycle start --target other >/dev/null
  step
  echo o >other.txt
  echo 'echo "# one more"' >>test.sh
  ev "$1" cycle finish >/dev/null || [ $? = 3 ]
  step
  echo "$out" >"$work/count.$1.$2"
}

if [[ $parts == *" count "* ]]; then
  count before tap
  count after tap
  count after none
fi

# ---- the figures
if [ -n "${TRACES:-}" ]; then
  mkdir -p "$TRACES"
  cp "$work"/*.before.* "$work"/*.after.* "$work"/floor.* "$TRACES/" 2>/dev/null || true
fi
for name in "" anew- go- go-ruler-; do
  for side in before after; do
    f="$work/${name}finish.$side"
    diff_of "$f.wall" "$f.gate" "$f.rest"
    diff_of "$f.gate" "$f.judge" "$f.bare"
  done
done
head=$(git -C "$here/.." rev-parse --short HEAD)
if [[ $parts == *" tree "* ]]; then
  echo "# $files files: medians of $runs runs, alternating git-evolve before ($before) and after ($head)"
  printf '%-52s %11s %11s %7s %9s\n' figure before after ratio overhead
  row "finish, improved: wall" finish wall
  row "  processor time" finish cpu
  row "  the gate (after: with the judging checkout)" finish gate
  row "  the rest (wall less the gate)" finish rest
  row "  the judging checkout, reused, on the way" finish judge
  row "  made ready beside the capture (in parallel)" finish ready
  row "  the gate less the judging checkout" finish bare
  row "start: wall" start wall
  row "  processor time" start cpu
  row "  the judging checkout, reused" start judge
  row "finish, checkout made anew: wall" anew-finish wall
  row "  the judging checkout, made" anew-finish judge
  row "start, checkout made anew: wall" anew-start wall
  row "  the judging checkout, made" anew-start judge
  echo
  printf '%-52s %13s %13s %7s\n' "the judging checkout beside git's own switch" judge git ratio
  frow "reused, vs git checkout --detach -f + git clean -ffdx" finish.after.judge floor.checkout
  frow "reused, vs git reset --hard + git clean -ffdx by hand" finish.after.judge floor.reset
  frow "made ready, vs git reset --hard + git clean -ffdx" finish.after.ready floor.reset
  frow "made anew, vs git worktree add --detach" anew-finish.after.judge floor.add
  echo
fi
if [[ $parts == *" go "* ]]; then
  echo "# a Go module of $packages packages (go test ./..., the detected gate): medians of $runs runs"
  printf '%-52s %11s %11s %7s %9s\n' figure before after ratio overhead
  row "finish, 3 packages changed: wall" go-finish wall
  row "  processor time" go-finish cpu
  row "  the gate (after: with the judging checkout)" go-finish gate
  row "  the rest (wall less the gate)" go-finish rest
  row "  the judging checkout" go-finish judge
  row "  runs of go test" go-finish runs
  row "finish, a test changed too: wall" go-ruler-finish wall
  row "  processor time" go-ruler-finish cpu
  row "  the gate (after: with the judging checkouts)" go-ruler-finish gate
  row "  the judging checkouts" go-ruler-finish judge
  row "  runs of go test" go-ruler-finish runs
  row "start after a finish: wall" go-start wall
  row "  runs of go test" go-start runs
  row "start after a commit of one's own: wall" go-own-start wall
  row "  processor time" go-own-start cpu
  row "  runs of go test" go-own-start runs
  echo
fi
if [[ $parts == *" count "* ]]; then
  echo "# runs of the gate's command (sh test.sh): cycle 1's start, its finish (no ruler file changed), cycle 2's start, its finish (test.sh changed)"
  printf '%-40s %s\n' "before" "$(cat "$work/count.before.tap")"
  printf '%-40s %s\n' "after, test.sh prints TAP (a census)" "$(cat "$work/count.after.tap")"
  printf '%-40s %s\n' "after, test.sh prints no TAP" "$(cat "$work/count.after.none")"
fi
echo "# $((SECONDS - start_s)) s"
