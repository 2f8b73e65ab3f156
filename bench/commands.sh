#!/usr/bin/env bash
# commands.sh [N...]: every command a person, a hook or an agent runs on the
# ledger, timed as whole processes beside the git CLI giving the same
# answer, on a ledger of N records made by bench/genrepo.sh (default sizes:
# 1000 10000 100000). Runs alternate between git-evolve and git so that
# noise hits both alike; each row gives the medians (net of the cost of
# timing a process, measured first), the ratio, the min and max of
# git-evolve's runs and both peak RSS.
#
#   nothing      git nothing, a Go program that does nothing (the floor of any
#                external git command: git's dispatch and a Go process)  git version
#   version      git evolve version (git-evolve's own floor: its start)  git version
#   log          git evolve log (the table)        git log --notes=evolve --format='%H %N'
#   log -n 20    git evolve log -n 20              git log -20 --notes=evolve
#   json -n 20   git evolve log --json -n 20       git log -20 --notes=evolve
#   show cycle   git evolve show <a middle cycle>  git notes --ref=evolve show <its commit>
#   show commit  git evolve show <that commit>     the same
#   verify       git evolve verify (nothing changed since the last)  git log --notes=evolve --format='%H %N'
#   verify +1    git evolve verify, one record since the last  the same
#   verify +100  git evolve verify, 100 records since the last  the same
#   verify 1st   git evolve verify (nothing verified or kept before)  the same
#   hook         the pre-push hook (git-evolve hook pre-push, as the shim runs it), nothing new to deliver  sh -c true (the figure is the hook's own)
#   hook +100    the same, delivering 100 new records to a remote on this disk  git push of the same notes commits (after an update-ref that takes them off the remote)
#   json cold    git evolve log --json, no saved view         the same
#   record       git evolve record (after a record)    git notes --ref=evolve add
#   record cold  git evolve record, no state under evolve/ the same
#
# Needs git, go and GNU time (/usr/bin/time). RUNS sets the runs (default
# 7); sizes of 100,000 and more take RUNS_BIG runs (default 3) of the slow
# rows (verify 1st, json cold, record cold).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1000 10000 100000)
runs=${RUNS:-7}
source "$here/lib.sh"

# harness: the median cost of timing a process that does nothing (fork,
# exec, /usr/bin/time, the clock): taken off both sides' medians, so that a
# ratio compares what the two commands do.
harness() {
  : >"$work/h"
  for ((i = 0; i < 15; i++)); do one h true >>"$work/h"; done
  median <"$work/h"
}

# row NAME RUNS PREP EVOLVE GIT: RUNS alternating runs; PREP (a shell
# command, may be :) runs before each git-evolve run, untimed.
row() {
  local name=$1 k=$2 prep=$3 ev=$4 gc=$5
  : >"$work/a"; : >"$work/b"; : >"$work/rss.a"; : >"$work/rss.b"
  for ((i = 0; i < k; i++)); do
    eval "$prep"
    eval "set -- $ev"
    one a "$@" >>"$work/a"
    eval "set -- $gc"
    one b "$@" >>"$work/b"
  done
  local ma mb lo hi ra rb
  ma=$(median <"$work/a" | awk -v h="$base" '{ printf "%.1f", $1 - h }')
  mb=$(median <"$work/b" | awk -v h="$base" '{ printf "%.1f", $1 - h }')
  lo=$(sort -n "$work/a" | head -1); hi=$(sort -n "$work/a" | tail -1)
  ra=0; rb=0
  ra=$(sort -n "$work/rss.a" | tail -1); rb=$(sort -n "$work/rss.b" | tail -1)
  printf '%-8s %-12s %9sms %9sms %7.2f %7s %7s %9s %9s\n' "$n" "$name" "$ma" "$mb" \
    "$(awk -v a="$ma" -v b="$mb" 'BEGIN{ if (b < 0.1) b = 0.1; print a/b }')" "$lo" "$hi" "$((ra / 1024))M" "$((rb / 1024))M"
}

printf '%-8s %-12s %11s %11s %7s %7s %7s %9s %9s\n' records command git-evolve git ratio min max "evolve" "git"
for n in "${sizes[@]}"; do
  repo="$work/repo$n"
  bash "$here/genrepo.sh" "$n" "$repo" >/dev/null
  cd "$repo"
  big=$runs
  [ "$n" -lt 100000 ] || big=${RUNS_BIG:-3}
  state=$(git rev-parse --git-common-dir)/evolve
  fresh=($(git rev-list main..fresh))
  mid=$((n / 2))
  midsha=$(git rev-parse "main~$((n - mid))")
  base=$(harness)
  echo "# $n records: the harness costs $base ms a run; the medians below are net of it (min and max are not)"
  git evolve log -n 1 >/dev/null # the saved view, as after any earlier read
  git evolve verify >/dev/null   # what this clone verified

  row nothing "$runs" : "git nothing" "git version"
  row version "$runs" : "git evolve version" "git version"
  row log "$runs" : "git evolve log" "git log --notes=evolve --format='%H %N'"
  row "log -n 20" "$runs" : "git evolve log -n 20" "git log -20 --notes=evolve"
  row "json -n 20" "$runs" : "git evolve log --json -n 20" "git log -20 --notes=evolve"
  row "show cycle" "$runs" : "git evolve show $mid" "git notes --ref=evolve show $midsha"
  row "show commit" "$runs" : "git evolve show $midsha" "git notes --ref=evolve show $midsha"
  row verify "$runs" : "git evolve verify" "git log --notes=evolve --format='%H %N'"
  # where the loop stands, beside git's own one-screen answer
  row status "$runs" : "git evolve status" "git status --short"
  # what a verify kept, then 100 records since: each run starts from it
  keep=$work/kept$n
  mkdir -p "$keep"
  kept="verified ledger.view" # what a verify keeps for the next (the view's file holds it)
  for f in $kept; do cp "$state/$f" "$keep/"; done
  # (the bench's own refs are kept outside refs/notes/evolve*, which the
  # hook delivers)
  git update-ref refs/bench/base refs/notes/evolve
  for ((i = 1; i <= 100; i++)); do
    git evolve record --result harvested --target bench --goals-passing 1 --goals-total 2 --canonical-sha "main~$((n / 3 + i))" >/dev/null
    if [ "$i" = 1 ]; then
      mkdir -p "$keep/one"
      git evolve verify >/dev/null
      for f in $kept; do cp "$state/$f" "$keep/one/"; done
      git update-ref refs/bench/one refs/notes/evolve
    fi
  done
  git update-ref refs/bench/all refs/notes/evolve
  # moving the ledger back is a reset that drops records, which verify
  # finds in the ledger's reflog: each run forgets the move
  forget="git reflog expire --expire=now refs/notes/evolve"
  # +1: the ledger one record past what was kept
  row "verify +1" "$runs" "git update-ref refs/notes/evolve refs/bench/one; $forget; cp '$keep/verified' '$keep/ledger.view' '$state/'" \
    "git evolve verify" "git log --notes=evolve --format='%H %N'"
  row "verify +100" "$runs" "git update-ref refs/notes/evolve refs/bench/all; $forget; cp '$keep/verified' '$keep/ledger.view' '$state/'" \
    "git evolve verify" "git log --notes=evolve --format='%H %N'"
  git evolve verify >/dev/null
  # the pre-push hook of a push with nothing new for the remote (as last
  # seen: the tracking refs hold what the local ones do)
  git config remote.origin.url "$work/nowhere.git"
  for ref in $(git for-each-ref --format='%(refname)' 'refs/notes/evolve*'); do
    git update-ref "refs/notes/remotes/origin/${ref#refs/notes/}" "$ref"
  done
  head=$(git rev-parse HEAD)
  printf 'refs/heads/main %s refs/heads/main %s\n' "$head" "$head" >"$work/push.in"
  row hook "$runs" : "sh -c 'git-evolve hook pre-push origin $work/nowhere.git <$work/push.in'" "sh -c true"
  # the hook of a push whose ledger is 100 records ahead of the remote's (a
  # bare repository on this disk that borrows this one's objects, so that
  # the figure is the hook's work and not the copying of objects): it
  # verifies them (from the state kept before them) and delivers them
  remote=$work/remote$n.git
  git init -q --bare "$remote"
  echo "$(cd "$(git rev-parse --git-common-dir)" && pwd)/objects" >"$remote/objects/info/alternates"
  git --git-dir="$remote" update-ref refs/heads/main "$head"
  git config remote.origin.url "$remote"
  baseh=$(git rev-parse refs/bench/base)
  row "hook +100" "$runs" "git update-ref refs/notes/evolve refs/bench/all; $forget; git --git-dir='$remote' update-ref refs/notes/evolve $baseh; git update-ref refs/notes/remotes/origin/evolve $baseh; cp '$keep/verified' '$keep/ledger.view' '$state/'" \
    "sh -c 'git-evolve hook pre-push origin $remote <$work/push.in'" \
    "sh -c 'git --git-dir=$remote update-ref refs/notes/evolve $baseh; git push -q --no-verify origin refs/bench/all:refs/notes/evolve'"
  git update-ref refs/notes/evolve refs/bench/all
  git update-ref refs/notes/remotes/origin/evolve refs/bench/all
  git evolve verify >/dev/null
  row "verify 1st" "$big" "rm -f '$state/verified' '$state/ledger.view'" "git evolve verify" "git log --notes=evolve --format='%H %N'"
  row "json cold" "$big" "rm -f '$state/ledger.view'" "git evolve log --json" "git log --notes=evolve --format='%H %N'"
  git evolve log -n 1 >/dev/null
  # each record on a commit of its own: SHA for git-evolve, SHA2 for git
  i=0
  next='i=$((i + 1)); export SHA=${fresh[$i]} SHA2=${fresh[$((i + 20))]}'
  rec='git evolve record --result harvested --target bench --goals-passing 1 --goals-total 2 --canonical-sha "$SHA"'
  add='git notes --ref=evolve add -f -m "{\"cycle\":0}" "$SHA2"'
  row record "$runs" "$next" "$rec" "$add"
  row "record cold" "$big" "$next; rm -rf '$state'" "$rec" "$add"
  cd "$work"
done
