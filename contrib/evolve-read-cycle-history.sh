#!/bin/sh
# evolve-read-cycle-history.sh: the evolve loops' history reader, as git-evolve
# reads the ledger. Copy it to scripts/evolve-read-cycle-history.sh: it prints
# one record a line (the seeds' fields: cycle, target, result, sha, gate,
# goals_passing, goals_total, timestamp, trace, ...), in cycle order, from the
# ledger and the local journal (git evolve log --all --json).
#
# Usage:
#   evolve-read-cycle-history.sh                  # the last 3 cycles
#   evolve-read-cycle-history.sh recent [N]       # the last N cycles (default 3)
#   evolve-read-cycle-history.sh latest           # the last cycle only
#   evolve-read-cycle-history.sh range START END  # cycles START..END (inclusive)
#
# Exit 0 with the records on standard output; 2 on bad usage.
usage="usage: $0 {recent [N]|latest|range START END}"
number() {
  case $1 in
  '' | *[!0-9]*) return 1 ;;
  esac
}
mode=${1:-recent}
case $mode in
recent)
  limit=${2:-3}
  if ! number "$limit"; then
    echo "ERROR: 'recent' limit must be a non-negative integer (got '$limit')" >&2
    exit 2
  fi
  [ "$limit" -eq 0 ] && exit 0
  exec git evolve log --all --json -n "$limit"
  ;;
latest)
  exec git evolve log --all --json -n 1
  ;;
range)
  start=${2:-0}
  end=${3:-0}
  if ! number "$start" || ! number "$end"; then
    echo "ERROR: 'range' START and END must be non-negative integers" >&2
    exit 2
  fi
  records=$(git evolve log --all --json) || exit
  # the canonical line names its cycle before any field of free text
  printf '%s\n' "$records" | awk -v s="$start" -v e="$end" '
    match($0, /"cycle":[0-9]+/) { c = substr($0, RSTART + 8, RLENGTH - 8) + 0; if (c >= s && c <= e) print }'
  ;;
-h | --help)
  sed -n '2,15p' "$0"
  echo "$usage"
  ;;
*)
  echo "ERROR: unknown mode: '$mode'" >&2
  echo "$usage" >&2
  exit 2
  ;;
esac
