#!/usr/bin/env bash
# verify_kept_ab.sh REV [N]: the CPU (user + system, the git processes it
# starts included) of `git evolve verify` as built from REV (a) beside the
# working tree's (b), and the sizes of the files each keeps for the next
# verify (ledger.view, the view's one file, or the files of an older
# layout: verify-kept, verify-state and the rest), on copies of one
# ledger of N records (default 10000) made by bench/genrepo.sh, one copy
# each. Runs alternate between the two; each row gives both medians and
# the ratio b/a.
#
#   warm      nothing changed since the last verify
#   +1        a record since the last verify (git notes add of a line)
#   removed   C git removed a note since (the summaries read whole from
#             the kept state, brought forward)
#   first     nothing verified or kept before
#
# BENCH_REPOS=DIR reuses DIR/rN (a repository genrepo.sh made; copied,
# never written). RUNS sets the runs (default 5), ROWS the rows (default
# all four). Needs git and go.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
rev=${1:?usage: verify_kept_ab.sh REV [N]}
n=${2:-10000}
runs=${RUNS:-5}
source "$here/lib.sh"
build_ab "$rev"

for s in a b; do
  copy_ledger "$n" "$work/$s/repo"
  (
    cd "$work/$s/repo"
    export PATH="$work/$s/bin:$base_path"
    state=$(git rev-parse --git-common-dir)/evolve
    rm -rf "$state"
    git evolve verify >/dev/null
    mkdir -p "$work/$s/kept"
    for f in "$state"/verified "$state"/verify-* "$state"/ledger.view; do [ ! -e "$f" ] || cp "$f" "$work/$s/kept/"; done
    for f in "$state"/verify-* "$state"/ledger.view; do [ ! -e "$f" ] || printf '%s %s %s %d\n' "$n" "$s" "${f##*/}" "$(wc -c <"$f")"; done >>"$work/sizes"
    git update-ref refs/bench/base refs/notes/evolve
    git notes --ref=evolve add -m "{\"v\":1,\"id\":\"ffffffffffffffffffff\",\"cycle\":$((n + 1)),\"target\":\"goal-1\",\"result\":\"improved\",\"timestamp\":\"2026-01-01T00:00:00Z\"}" fresh
    git update-ref refs/bench/one refs/notes/evolve
    git update-ref refs/notes/evolve refs/bench/base
    git notes --ref=evolve remove "main~$((n / 2))" 2>/dev/null
    git update-ref refs/bench/removed refs/notes/evolve
    git update-ref refs/notes/evolve refs/bench/base
    git reflog expire --expire=now refs/notes/evolve
  )
done

# run S ROW: the CPU milliseconds of one run of ROW with binary S (its
# prep not counted)
run() {
  local s=$1 row=$2 state
  cd "$work/$s/repo"
  export PATH="$work/$s/bin:$base_path"
  state=$(git rev-parse --git-common-dir)/evolve
  restore() {
    git update-ref refs/notes/evolve "$1"
    git reflog expire --expire=now refs/notes/evolve
    cp "$work/$s/kept/"* "$state/"
  }
  case $row in
  warm) restore refs/bench/base; git evolve verify >/dev/null || true ;;
  +1) restore refs/bench/one ;;
  removed) restore refs/bench/removed ;;
  first) restore refs/bench/base; rm -rf "$state" ;;
  esac
  cputime "$work/cpu" git evolve verify >/dev/null 2>&1 || true
  awk '{ printf "%.1f\n", ($1 + $2) * 1000 }' "$work/cpu"
}

cat "$work/sizes"
printf '%-8s %-10s %10s %10s %7s\n' records row a b "b/a"
for row in ${ROWS:-warm +1 removed first}; do
  : >"$work/t.a"; : >"$work/t.b"
  for ((i = 0; i < runs; i++)); do
    run a "$row" >>"$work/t.a"
    run b "$row" >>"$work/t.b"
  done
  ma=$(median <"$work/t.a"); mb=$(median <"$work/t.b")
  printf '%-8s %-10s %8.1fms %8.1fms %7.2f\n' "$n" "$row" "$ma" "$mb" "$(awk -v a="$ma" -v b="$mb" 'BEGIN{ print b/a }')"
done
