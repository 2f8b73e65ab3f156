#!/usr/bin/env bash
# firstwarm.sh [N...]: each command that reads or writes the ledger, timed
# as whole processes twice: first (no state under the git directory's
# evolve/, as in a fresh clone: nothing derived, nothing verified) and
# warm (the same command run just before), beside the git CLI giving the
# same answer, on a ledger of N records made by bench/genrepo.sh (default
# sizes: 1000 10000 100000). Runs alternate between git-evolve and git;
# each row gives the wall-clock medians (net of the cost of timing a
# process), their ratio, the median CPU (user + system, the git processes a
# command starts included: on a shared machine it moves less with the load
# than the wall clock does) and its ratio, and both peak RSS.
#
#   log -n 20    git evolve log -n 20            git log -20 --notes=evolve
#   show cycle   git evolve show <a middle cycle> git notes --ref=evolve show <its commit>
#   log          git evolve log                  git log --notes=evolve --format='%H %N'
#   status       git evolve status               git log -20 --notes=evolve
#   verify       git evolve verify               git log -p refs/notes/evolve
#   record       git evolve record               git notes --ref=evolve add
#   log -n 20 +1, show cycle +1: the same read, warm, after one more record
#
# BENCH_REPOS=DIR reuses DIR/rN when it is there (a copy is timed, the
# original is left as it is) and otherwise makes it there: a ledger of
# 100,000 records takes minutes to make. Needs git, go and GNU time.
# RUNS sets the runs (default 5); sizes of 100,000 and more take RUNS_BIG
# (default 3). ROWS, an extended regular expression, keeps the rows whose
# command it matches (ROWS='^record' times the records alone).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1000 10000 100000)
runs=${RUNS:-5}
source "$here/lib.sh"

harness() {
  : >"$work/h"
  for ((i = 0; i < 15; i++)); do one h true >>"$work/h"; done
  median <"$work/h"
}

# timed TAG CMD...: wall ms of one run of CMD; its CPU ms (user + system,
# children included) appended to $work/cpu.TAG, its peak RSS (KiB) to
# $work/rss.TAG
timed() {
  local tag=$1
  shift
  local t0 t1
  t0=$(date +%s%N)
  cputime "$work/time" "$@" >/dev/null 2>"$work/err" || { cat "$work/err" >&2; return 1; }
  t1=$(date +%s%N)
  awk '{ printf "%.1f\n", ($1 + $2) * 1000 }' "$work/time" >>"$work/cpu.$tag"
  awk '{ print $3 }' "$work/time" >>"$work/rss.$tag"
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f\n", (b - a) / 1e6 }'
}

# wanted NAME: whether ROWS keeps the row NAME
wanted() { [ -z "${ROWS:-}" ] || [[ $1 =~ $ROWS ]]; }

# row NAME RUNS PREP EVOLVE GIT: RUNS alternating runs; PREP (a shell
# command, may be :) runs before each git-evolve run, untimed.
row() {
  local name=$1 k=$2 prep=$3 ev=$4 gc=$5
  wanted "$name" || return 0
  : >"$work/a"; : >"$work/b"; : >"$work/rss.a"; : >"$work/rss.b"; : >"$work/cpu.a"; : >"$work/cpu.b"
  for ((i = 0; i < k; i++)); do
    eval "$prep"
    eval "set -- $ev"
    timed a "$@" >>"$work/a"
    eval "set -- $gc"
    timed b "$@" >>"$work/b"
  done
  local ma mb ca cb ra rb
  ma=$(median <"$work/a" | awk -v h="$base" '{ printf "%.1f", $1 - h }')
  mb=$(median <"$work/b" | awk -v h="$base" '{ printf "%.1f", $1 - h }')
  ca=$(median <"$work/cpu.a"); cb=$(median <"$work/cpu.b")
  ra=$(sort -n "$work/rss.a" | tail -1); rb=$(sort -n "$work/rss.b" | tail -1)
  printf '%-8s %-16s %9sms %9sms %7.2f %7sms %7sms %7.2f %7s %7s\n' "$n" "$name" "$ma" "$mb" \
    "$(awk -v a="$ma" -v b="$mb" 'BEGIN{ if (b < 0.1) b = 0.1; print a/b }')" "$ca" "$cb" \
    "$(awk -v a="$ca" -v b="$cb" 'BEGIN{ if (b < 1) b = 1; print a/b }')" "$((ra / 1024))M" "$((rb / 1024))M"
}

printf '%-8s %-16s %11s %11s %7s %9s %9s %7s %7s %7s\n' records command "evolve" git ratio "cpu" "git cpu" ratio "evolve" "git"
for n in "${sizes[@]}"; do
  repo="$work/copy$n"
  copy_ledger "$n" "$repo"
  cd "$repo"
  rm -rf .git/evolve
  k=$runs
  [ "$n" -lt 100000 ] || k=${RUNS_BIG:-3}
  state=$(git rev-parse --git-common-dir)/evolve
  fresh=($(git rev-list main..fresh))
  mid=$((n / 2))
  midsha=$(git rev-parse "main~$((n - mid))")
  base=$(harness)
  echo "# $n records: the harness costs $base ms a run; the medians below are net of it"
  first="rm -rf '$state'"
  for cmd in "log -n 20|git evolve log -n 20|git log -20 --notes=evolve" \
    "show cycle|git evolve show $mid|git notes --ref=evolve show $midsha" \
    "log|git evolve log|git log --notes=evolve --format='%H %N'" \
    "status|git evolve status|git log -20 --notes=evolve" \
    "verify|git evolve verify|git log -p refs/notes/evolve"; do
    IFS='|' read -r name ev gc <<<"$cmd"
    wanted "$name first" || wanted "$name warm" || continue
    row "$name first" "$k" "$first" "$ev" "$gc"
    eval "$ev" >/dev/null
    row "$name warm" "$k" : "$ev" "$gc"
  done
  # each record on a commit of its own: SHA for git-evolve, SHA2 for git
  # (its own counter: row's loop counts with i)
  rn=0
  next='rn=$((rn + 1)); export SHA=${fresh[$rn]} SHA2=${fresh[$((rn + 25))]}'
  rec='git evolve record --result harvested --target bench --goals-passing 1 --goals-total 2 --canonical-sha "$SHA"'
  add='git notes --ref=evolve add -f -m "{\"cycle\":0}" "$SHA2"'
  row "record first" "$k" "$next; $first" "$rec" "$add"
  eval "$next; $rec" >/dev/null
  row "record warm" "$k" "$next" "$rec" "$add"
  # a read after one more record (as after a sync that brought one): what
  # was kept describes the ledger as it was a record ago
  row "log -n 20 +1" "$k" "$next; $rec >/dev/null" "git evolve log -n 20" "git log -20 --notes=evolve"
  row "show cycle +1" "$k" "$next; $rec >/dev/null" "git evolve show $mid" "git notes --ref=evolve show $midsha"
  cd "$work"
  rm -rf "$repo"
done
