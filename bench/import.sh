#!/usr/bin/env bash
# import.sh [N...]: git evolve import of an N-record history file beside
# git fast-import writing the same notes (one note a commit, the record's
# line as its text), each into a copy of the same repository with no ledger
# (default sizes: 1000 10000 100000). The history file is the export of a
# ledger made by bench/genrepo.sh. Runs alternate; medians, min and max of
# git-evolve's runs, peak RSS of both.
#
# Needs git, go and GNU time. RUNS sets the runs per size (default 3).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1000 10000 100000)
runs=${RUNS:-3}
source "$here/lib.sh"

printf '%-8s %12s %12s %7s %8s %8s %9s %9s\n' records import fast-import ratio min max "evolve" "git"
for n in "${sizes[@]}"; do
  src="$work/src-$n"
  bash "$here/genrepo.sh" "$n" "$src" >/dev/null
  (cd "$src" && git evolve export >"$work/hist-$n.jsonl" && git update-ref -d refs/notes/evolve && git gc -q --prune=now)
  # the same notes as a fast-import stream: the sha of each line, its text
  {
    printf 'commit refs/notes/evolve\ncommitter Bench <bench@example.com> 1700000000 +0000\ndata 6\nimport\n'
    while IFS= read -r line; do
      sha=${line#*\"sha\":\"}
      printf 'N inline %s\ndata %d\n%s\n' "${sha%%\"*}" $((${#line} + 1)) "$line"
    done <"$work/hist-$n.jsonl"
    printf '\n'
  } >"$work/fi-$n.stream"
  : >"$work/a"; : >"$work/b"; : >"$work/rss.a"; : >"$work/rss.b"
  for ((i = 0; i < runs; i++)); do
    rm -rf "$work/a.git" "$work/b.git"
    cp -r "$src/.git" "$work/a.git"
    cp -r "$src/.git" "$work/b.git"
    (cd "$work/a.git" && one a git evolve import "$work/hist-$n.jsonl") >>"$work/a"
    (cd "$work/b.git" && one b sh -c "git fast-import --quiet <'$work/fi-$n.stream'") >>"$work/b"
  done
  a=$(median <"$work/a"); b=$(median <"$work/b")
  printf '%-8s %10sms %10sms %7.2f %8s %8s %8sK %8sK\n' "$n" "$a" "$b" "$(awk -v a="$a" -v b="$b" 'BEGIN{print a/b}')" \
    "$(sort -n "$work/a" | head -1)" "$(sort -n "$work/a" | tail -1)" "$(median <"$work/rss.a")" "$(median <"$work/rss.b")"
done
