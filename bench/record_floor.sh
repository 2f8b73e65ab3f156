#!/usr/bin/env bash
# record_floor.sh [N...]: what no `git evolve record` can go below, beside
# git notes --ref=evolve add and git evolve record, on a copy of a ledger
# of N records made by bench/genrepo.sh (default sizes: 1000 10000
# 100000). The floor is a Go program run as `git floor`, as git runs
# git-evolve, that does only what a record cannot leave to another: it
# starts git update-ref --stdin (the ledger's compare-and-swap, which git
# does), reads git's config through git config -z --list (the identity
# and settings a record needs, as git resolves them), writes K loose
# objects as git does (a temporary file, renamed) and moves a ref of its
# own through the update-ref it started. Rows:
#
#   git notes add      the baseline
#   git nothing        git's dispatch of a Go program that does nothing
#   floor, 0 objects   the processes alone
#   floor, 4 objects   as many objects as git notes add writes
#   floor, 7 objects   as many as a record writes at 10,000 records (its
#                      note, two levels of notes trees, three of the index
#                      of cycles, the commit; eight at 100,000)
#   git evolve record  warm: a record on a commit of its own each run
#
# Each row gives the median wall clock, net of the harness's own cost (a
# run of true timed the same way), and CPU (user + system, the git
# processes included), and both as a ratio to git notes add. The rows
# alternate run by run. BENCH_REPOS=DIR reuses DIR/rN as firstwarm.sh
# does. RUNS sets the runs (default 15). Needs git and go.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1000 10000 100000)
runs=${RUNS:-15}
source "$here/lib.sh"

mkdir -p "$work/floor"
cat >"$work/floor/floor.go" <<'GO'
package main

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"
)

func main() {
	k, _ := strconv.Atoi(os.Getenv("FLOOR_OBJECTS"))
	up := exec.Command("git", "update-ref", "-z", "--stdin", "-m", "floor")
	in, err := up.StdinPipe()
	if err == nil {
		err = up.Start()
	}
	if err != nil {
		fail(err)
	}
	if _, err := exec.Command("git", "config", "-z", "--list").Output(); err != nil {
		fail(err)
	}
	last := "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391" // the empty blob
	for i := 0; i < k; i++ {
		data := []byte(fmt.Sprintf("floor %d %d\n", i, time.Now().UnixNano()))
		head := fmt.Sprintf("blob %d\x00", len(data))
		name := fmt.Sprintf("%x", sha1.Sum(append([]byte(head), data...)))
		var z bytes.Buffer
		zw := zlib.NewWriter(&z)
		zw.Write([]byte(head))
		zw.Write(data)
		zw.Close()
		dir := filepath.Join(".git", "objects", name[:2])
		os.MkdirAll(dir, 0o777)
		f, err := os.CreateTemp(dir, "tmp_obj_")
		if err != nil {
			fail(err)
		}
		f.Write(z.Bytes())
		f.Chmod(0o444)
		f.Close()
		if err := os.Rename(f.Name(), filepath.Join(dir, name[2:])); err != nil {
			fail(err)
		}
		last = name
	}
	fmt.Fprintf(in, "update refs/floor\x00%s\x00\x00", last)
	in.Close()
	if err := up.Wait(); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "floor:", err)
	os.Exit(1)
}
GO
printf 'module floor\n\ngo 1.22\n' >"$work/floor/go.mod"
(cd "$work/floor" && CGO_ENABLED=0 go build -o "$work/bin/git-floor" .)

# timed TAG CMD...: "cpu wall" of one run of CMD appended to $work/t.TAG
timed() {
  local tag=$1 t0 t1
  shift
  t0=$(date +%s%N)
  cputime "$work/time" "$@" >/dev/null 2>"$work/err" || { cat "$work/err" >&2; return 1; }
  t1=$(date +%s%N)
  awk -v a="$t0" -v b="$t1" '{ printf "%.2f %.2f\n", ($1 + $2) * 1000, (b - a) / 1e6 }' "$work/time" >>"$work/t.$tag"
}

rows=(notes nothing floor0 floor4 floor7 record)
name() {
  case $1 in
  notes) echo "git notes add" ;;
  nothing) echo "git nothing" ;;
  floor0) echo "floor, 0 objects" ;;
  floor4) echo "floor, 4 objects" ;;
  floor7) echo "floor, 7 objects" ;;
  record) echo "git evolve record" ;;
  esac
}
printf '%-8s %-18s %9s %7s %9s %7s\n' records row wall "/notes" cpu "/notes"
for n in "${sizes[@]}"; do
  copy_ledger "$n" "$work/repo"
  cd "$work/repo"
  fresh=($(git rev-list main..fresh))
  git evolve record --result harvested --target bench --goals-passing 1 --goals-total 2 --canonical-sha "${fresh[0]}" >/dev/null
  for r in "${rows[@]}" harness; do : >"$work/t.$r"; done
  for ((i = 1; i <= runs; i++)); do
    timed harness true
    sha=${fresh[$((i % ${#fresh[@]}))]}
    timed notes git notes --ref=evolve add -f -m '{"cycle":0}' "$sha"
    timed nothing git nothing
    FLOOR_OBJECTS=0 timed floor0 git floor
    FLOOR_OBJECTS=4 timed floor4 git floor
    FLOOR_OBJECTS=7 timed floor7 git floor
    # a commit of its own for each record: git's note above is on another
    sha=${fresh[$(((i + runs) % ${#fresh[@]}))]}
    timed record git evolve record --result harvested --target bench --goals-passing 1 --goals-total 2 --canonical-sha "$sha"
  done
  h=$(col 2 "$work/t.harness")
  echo "# $n records: the harness costs $h ms a run; the wall clock below is net of it"
  cw=$(awk -v a="$(col 2 "$work/t.notes")" -v h="$h" 'BEGIN { print a - h }')
  cc=$(col 1 "$work/t.notes")
  for r in "${rows[@]}"; do
    w=$(awk -v a="$(col 2 "$work/t.$r")" -v h="$h" 'BEGIN { print a - h }')
    c=$(col 1 "$work/t.$r")
    printf '%-8s %-18s %7.2fms %7.2f %7.2fms %7.2f\n' "$n" "$(name "$r")" "$w" "$(awk -v a="$w" -v b="$cw" 'BEGIN { print a / b }')" \
      "$c" "$(awk -v a="$c" -v b="$cc" 'BEGIN { print a / b }')"
  done
  cd "$work"
done
