#!/usr/bin/env bash
# genrepo.sh [--flat] N DIR: make a repository in DIR with N commits on main
# and one ledger record (a note in refs/notes/evolve) on each, written by
# git fast-import, plus 50 commits without notes on the branch "fresh" for
# timing appends. Records look like real ones: seed fields, goal counts, a
# short trace.
#
# The ledger's history is as clones that share it make it: one notes commit
# per record, by three writers in turn, and every 50 records a merge, as
# sync makes it, of 9 records another clone wrote meanwhile on a line of
# its own (its notes commits, then the merge holding both sides' notes).
# Each notes commit's message is the one git-evolve writes (a record's
# names the largest cycle in its Evolve-Largest-Cycle trailer, which a
# fresh clone's first record reads instead of every note; a merge's is
# sync's).
# Each notes commit also lists its records in the ledger's index of cycles
# (the notes tree's evolve-cycles.v2 directory, as git-evolve writes it),
# and the last one says which notes it describes (its stamp, computed
# here with git mktree once fast-import has written the notes), so that a
# first read finds what a ledger git-evolve wrote gives it.
# --flat writes the whole ledger as one notes commit instead (what a single
# import makes; the figures in docs/benchmarks.md before the history was
# realistic were taken on it).
set -euo pipefail
flat=0
if [ "${1:-}" = --flat ]; then
  flat=1
  shift
fi
n=${1:?usage: genrepo.sh [--flat] N DIR}
dir=${2:?usage: genrepo.sh [--flat] N DIR}
git init -q "$dir"
cd "$dir"
export GIT_CONFIG_NOSYSTEM=1
git config user.name Bench
git config user.email bench@example.com
git config gc.auto 0
awk -v n="$n" 'BEGIN {
  for (i = 1; i <= n; i++) {
    printf "commit refs/heads/main\nmark :%d\ncommitter Bench <bench@example.com> %d +0000\n", i, 1700000000 + i
    msg = "cycle " i ": improve goal-" (i % 40)
    printf "data %d\n%s\n", length(msg), msg
    if (i > 1) printf "from :%d\n", i - 1
    body = "work " i
    printf "M 644 inline src/file%d.txt\ndata %d\n%s\n\n", i % 500, length(body), body
  }
  for (i = 1; i <= 50; i++) {
    printf "commit refs/heads/fresh\nmark :%d\ncommitter Bench <bench@example.com> %d +0000\n", n + i, 1800000000 + i
    msg = "fresh " i
    printf "data %d\n%s\n", length(msg), msg
    printf "from :%d\n\n", (i == 1 ? n : n + i - 1)
  }
}' | git fast-import --quiet --export-marks=.git/bench-marks
# Second pass: the notes, one per main commit, naming the commit's full sha.
empty=$(git hash-object -w --stdin </dev/null)
awk -v n="$n" -v flat="$flat" -v empty="$empty" '
  function rec(i, s) {
    return sprintf("{\"v\":1,\"id\":\"%020x\",\"cycle\":%d,\"target\":\"goal-%d\",\"result\":\"improved\",\"sha\":\"%s\",\"canonical_sha\":\"%s\",\"timestamp\":\"2026-01-01T00:00:00Z\",\"goals_passing\":%d,\"goals_total\":40,\"trace\":{\"goal_hypothesis\":\"raising goal-%d lifts fitness\",\"green_evidence\":\"go test ./... ok\"}}", i, i, i % 40, s, s, i % 41, i % 40)
  }
  function note(i,   r) {
    r = rec(i, sha[i])
    printf "N inline %s\ndata %d\n%s\n\n", sha[i], length(r) + 1, r
    # the index lists the commit under the cycle of its record (ledger.CycleKey)
    printf "M 100644 %s evolve-cycles.v2/%d/%d/%d-%s\n", empty, int(i / 10000), int(i / 100), i, sha[i]
  }
  # the message git evolve record writes: the largest cycle the ledger
  # holds once the record is written, in a trailer
  function recmsg(i) {
    return "git evolve: record cycle " i " (improved)\n\nEvolve-Largest-Cycle: " i
  }
  # a notes commit of ref by writer w at time t, its message msg
  function head(ref, w, t, msg) {
    printf "commit %s\nmark :%d\ncommitter %s <%s@example.com> %d +0000\ndata %d\n%s\n", ref, ++mark, who[w], who[w], t, length(msg), msg
  }
  { sub(/^:/, "", $1); sha[$1] = $2 }
  END {
    # dated after the commits they note and before any record made later
    # (a notes commit dated after its children, as a wrong clock makes,
    # changes what git rev-list lists)
    t0 = 1700000000 + n + 100
    if (flat) {
      printf "commit refs/notes/evolve\ncommitter Bench <bench@example.com> %d +0000\ndata 13\nbench ledger\n", t0
      for (i = 1; i <= n; i++) note(i)
      exit
    }
    who[0] = "alice"; who[1] = "bob"; who[2] = "ci-bot"
    mark = 10 * n + 1000
    local = 0; side = 0; fork = 0
    for (i = 1; i <= n; i++) {
      t = t0 + i
      if (i % 50 >= 41 && i % 50 <= 49 && i < n) {
        # another clone, on a line of its own from where this one was
        head("refs/notes/side", 2, t, recmsg(i))
        if (side) printf "from :%d\n", side
        else if (local) printf "from :%d\n", local
        side = mark
        pending[++np] = i
        note(i)
        continue
      }
      head("refs/notes/evolve", i % 2, t, (i % 50 == 0 && np ? "git evolve: merge evolve (" np " note(s) from another clone)" : recmsg(i)))
      if (local) printf "from :%d\n", local
      if (i % 50 == 0 && np) {
        printf "merge :%d\n", side
        for (k = 1; k <= np; k++) note(pending[k]) # the union, as the merge writes it
        np = 0; side = 0
      }
      local = mark
      note(i)
    }
  }' .git/bench-marks | git fast-import --quiet
git update-ref -d refs/notes/side 2>/dev/null || true # the other clone's line, merged
# The stamp: the tip's tree without the index, named in the index, the tip
# written again with it (its parents, message and dates kept).
tip=$(git rev-parse refs/notes/evolve)
stamp=$(git ls-tree "$tip^{tree}" | grep -v "	evolve-cycles\.v2\$" | git mktree)
index=$( (git ls-tree "$tip:evolve-cycles.v2" && printf '100644 blob %s\tof-%s\n' "$empty" "$stamp") | git mktree)
root=$( (git ls-tree "$tip^{tree}" | grep -v "	evolve-cycles\.v2\$" && printf '040000 tree %s\tevolve-cycles.v2\n' "$index") | git mktree)
parents=()
for p in $(git log -1 --format=%P "$tip"); do parents+=(-p "$p"); done
new=$(GIT_COMMITTER_NAME="$(git log -1 --format=%cn "$tip")" GIT_COMMITTER_EMAIL="$(git log -1 --format=%ce "$tip")" \
  GIT_COMMITTER_DATE="$(git log -1 --format=%cd --date=raw "$tip")" GIT_AUTHOR_NAME="$(git log -1 --format=%an "$tip")" \
  GIT_AUTHOR_EMAIL="$(git log -1 --format=%ae "$tip")" GIT_AUTHOR_DATE="$(git log -1 --format=%ad --date=raw "$tip")" \
  git commit-tree "${parents[@]}" -F <(git log -1 --format=%B "$tip") "$root")
git update-ref refs/notes/evolve "$new" "$tip"
git checkout -q main 2>/dev/null || true
