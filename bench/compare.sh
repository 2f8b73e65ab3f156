#!/usr/bin/env bash
# compare.sh [N...]: time whole processes of git-evolve beside the git CLI on
# the same generated repository (bench/genrepo.sh), and report medians,
# ratios and peak memory. Default sizes: 1000 10000.
#
#   log:      git evolve log --json            vs  git log --notes=evolve --format='%H %N'
#             (git-evolve's saved view of the ledger is current, as it is after
#             any earlier read)
#   log-cold: the same with no saved view (the first read in a clone)
#   record:   git evolve record (one more cycle) vs  git notes --ref=evolve add
#
# Needs git, go and GNU time (/usr/bin/time). RUNS sets the runs per figure.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1000 10000)
runs=${RUNS:-11}
source "$here/lib.sh"

# time_ms CMD...: wall-clock milliseconds of one run; peak RSS (KiB) in $work/rss
time_ms() {
  /usr/bin/time -f '%e %M' -o "$work/time" "$@" >/dev/null 2>"$work/err" || { cat "$work/err" >&2; return 1; }
  read -r secs rss <"$work/time"
  echo "$rss" >"$work/rss"
  awk -v s="$secs" 'BEGIN { printf "%d\n", s * 1000 + 0.5 }'
}

printf '%-8s %-8s %12s %12s %7s %10s %10s\n' records op "git-evolve" "git" ratio "evolve KiB" "git KiB"
for n in "${sizes[@]}"; do
  repo="$work/repo$n"
  bash "$here/genrepo.sh" "$n" "$repo"
  cd "$repo"
  fresh=($(git rev-list main..fresh))

  # log: alternate the two commands so that noise hits both alike
  : >"$work/a"; : >"$work/b"
  git evolve log --json >/dev/null    # warm the page cache for both
  for ((i = 0; i < runs; i++)); do
    wall_ms git evolve log --json >>"$work/a"
    wall_ms git log --notes=evolve --format='%H %N' >>"$work/b"
  done
  time_ms git evolve log --json >/dev/null; ea=$(cat "$work/rss")
  time_ms git log --notes=evolve --format='%H %N' >/dev/null; eb=$(cat "$work/rss")
  ma=$(median <"$work/a"); mb=$(median <"$work/b")
  printf '%-8s %-8s %10sms %10sms %7.2f %10s %10s\n' "$n" log "$ma" "$mb" "$(awk -v a="$ma" -v b="$mb" 'BEGIN{print a/b}')" "$ea" "$eb"

  : >"$work/a"; : >"$work/b"
  for ((i = 0; i < (runs + 1) / 2; i++)); do
    rm -f "$(git rev-parse --git-common-dir)/evolve/ledger.view"
    wall_ms git evolve log --json >>"$work/a"
    wall_ms git log --notes=evolve --format='%H %N' >>"$work/b"
  done
  rm -f "$(git rev-parse --git-common-dir)/evolve/ledger.view"
  time_ms git evolve log --json >/dev/null; ea=$(cat "$work/rss")
  ma=$(median <"$work/a"); mb=$(median <"$work/b")
  printf '%-8s %-8s %10sms %10sms %7.2f %10s %10s\n' "$n" log-cold "$ma" "$mb" "$(awk -v a="$ma" -v b="$mb" 'BEGIN{print a/b}')" "$ea" "$eb"

  # record: each run appends one more record, on a commit without a note;
  # git-evolve records once first, as in daily use
  : >"$work/a"; : >"$work/b"
  git evolve record --result harvested --target warm --goals-passing 1 --goals-total 2 --canonical-sha "${fresh[0]}" >/dev/null
  for ((i = 1; i <= runs && i < ${#fresh[@]} / 2; i++)); do
    wall_ms git evolve record --result harvested --target bench --goals-passing 1 --goals-total 2 --canonical-sha "${fresh[$i]}" >>"$work/a"
    wall_ms git notes --ref=evolve add -m "{\"cycle\":0}" "${fresh[$((i + ${#fresh[@]} / 2))]}" >>"$work/b"
  done
  ma=$(median <"$work/a"); mb=$(median <"$work/b")
  printf '%-8s %-8s %10sms %10sms %7.2f\n' "$n" record "$ma" "$mb" "$(awk -v a="$ma" -v b="$mb" 'BEGIN{print a/b}')"
  cd "$work"
done
