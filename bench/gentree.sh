#!/usr/bin/env bash
# gentree.sh FILES DIR: make a repository in DIR whose working tree has
# FILES small files in 200 directories and a GOALS.yaml (a goal that
# passes, and one that fails once a file named broken exists), all
# committed. Needs git.
set -euo pipefail
files=${1:?usage: gentree.sh FILES DIR}
dir=${2:?usage: gentree.sh FILES DIR}
git init -q "$dir"
cd "$dir"
git config gc.auto 0
awk -v n="$files" 'BEGIN { for (i = 0; i < n; i++) { d = sprintf("src/d%03d", i % 200); f = sprintf("%s/f%05d.txt", d, i); if (i < 200) system("mkdir -p " d); print "line " i > f; close(f) } }'
cat >GOALS.yaml <<'GOALS'
version: 3
goals:
  - id: ok
    description: passes
    check: "true"
    weight: 1
  - id: not-broken
    description: fails once a file named broken exists
    check: "test ! -e broken"
    weight: 1
GOALS
git add -A
git commit -q -m base
