#!/usr/bin/env bash
# genrepo.sh N DIR: make a repository in DIR with N commits on main and one
# ledger record (a note in refs/notes/evolve) on each, written by
# git fast-import, plus 50 commits without notes on the branch "fresh" for
# timing appends. Records look like real ones: seed fields, goal counts, a
# short trace.
set -euo pipefail
n=${1:?usage: genrepo.sh N DIR}
dir=${2:?usage: genrepo.sh N DIR}
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
awk -v n="$n" '
  { sub(/^:/, "", $1); sha[$1] = $2 }
  END {
    # dated after the commits it notes and before any record made later
    # (a notes commit dated after its children, as a wrong clock makes,
    # changes what git rev-list lists)
    printf "commit refs/notes/evolve\ncommitter Bench <bench@example.com> %d +0000\ndata 13\nbench ledger\n", 1700000000 + n + 100
    for (i = 1; i <= n; i++) {
      s = sha[i]
      rec = sprintf("{\"v\":1,\"id\":\"%020x\",\"cycle\":%d,\"target\":\"goal-%d\",\"result\":\"improved\",\"sha\":\"%s\",\"canonical_sha\":\"%s\",\"timestamp\":\"2026-01-01T00:00:00Z\",\"goals_passing\":%d,\"goals_total\":40,\"trace\":{\"goal_hypothesis\":\"raising goal-%d lifts fitness\",\"green_evidence\":\"go test ./... ok\"}}", i, i, i % 40, s, s, i % 41, i % 40)
      printf "N inline %s\ndata %d\n%s\n\n", s, length(rec) + 1, rec
    }
  }' .git/bench-marks | git fast-import --quiet
git checkout -q main 2>/dev/null || true
