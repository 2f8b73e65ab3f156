# lib.sh: what the benchmark scripts share. Sourced, not run: it builds
# git-evolve into a temporary directory ($work, removed on exit), gives git a
# home of its own there, and defines wall_ms and median.

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The user's Go caches, for every build, those after git is given a home
# of its own below too (build_ab).
export GOMODCACHE=$(go env GOMODCACHE) GOCACHE=$(go env GOCACHE)
# Build first, with the user's Go caches, as the README installs it (a
# static binary); then give git a home of its own.
(cd "$here/.." && CGO_ENABLED=0 go build -o "$work/bin/git-evolve" ./cmd/git-evolve)
# and git-nothing, a Go program that does nothing: `git nothing` is the
# least any command git runs as an external one (git's dispatch, a Go
# process) costs, what no work of git-evolve's can go below
mkdir -p "$work/nothing"
printf 'package main\n\nfunc main() {}\n' >"$work/nothing/nothing.go"
(cd "$work/nothing" && CGO_ENABLED=0 go build -o "$work/bin/git-nothing" nothing.go)
# and cputime, GNU time's '%U %S %M' to a file with microseconds (GNU
# time prints hundredths of a second: a git command's 5 ms of CPU read as 0
# or 10): cputime FILE CMD... runs CMD and writes the user and system CPU
# (seconds) of CMD and every process it waited for, and their largest
# peak RSS (KiB).
mkdir -p "$work/cputime"
cat >"$work/cputime/cputime.go" <<'GO'
package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

func main() {
	cmd := exec.Command(os.Args[2], os.Args[3:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru)
	sec := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	os.WriteFile(os.Args[1], []byte(fmt.Sprintf("%.6f %.6f %d\n", sec(ru.Utime), sec(ru.Stime), ru.Maxrss)), 0o644)
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		os.Exit(ee.ExitCode())
	} else if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(127)
	}
}
GO
(cd "$work/cputime" && CGO_ENABLED=0 go build -o "$work/bin/cputime" cputime.go)
export GIT_CONFIG_NOSYSTEM=1 HOME="$work"
git config --global user.name Bench
git config --global user.email bench@example.com
export PATH="$work/bin:$PATH"

# wall_ms CMD...: wall-clock milliseconds of one run, from date's nanoseconds
# (finer than /usr/bin/time's 10 ms).
wall_ms() {
  local t0 t1
  t0=$(date +%s%N)
  "$@" >/dev/null 2>"$work/err" || { cat "$work/err" >&2; return 1; }
  t1=$(date +%s%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f\n", (b - a) / 1e6 }'
}

# ledger N: the directory of a ledger of N records bench/genrepo.sh made,
# to be copied and never written: DIR/rN with BENCH_REPOS=DIR, else one
# under $work; made when it is missing.
ledger() {
  local src="${BENCH_REPOS:-$work}/r$1"
  [ -d "$src" ] || bash "$here/genrepo.sh" "$1" "$src" >/dev/null
  printf '%s\n' "$src"
}

# copy_ledger N DEST: DEST made anew, a copy of the ledger of N records.
copy_ledger() {
  local src
  src=$(ledger "$1")
  rm -rf "$2"
  cp -a "$src" "$2"
}

# median: the median of the numbers on standard input, one a line.
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# one TAG CMD...: wall ms of one run of CMD, its peak RSS (KiB) appended to
# $work/rss.TAG
one() {
  local tag=$1
  shift
  local t0 t1
  t0=$(date +%s%N)
  /usr/bin/time -f '%M' -o "$work/time" "$@" >/dev/null 2>"$work/err" || { cat "$work/err" >&2; return 1; }
  t1=$(date +%s%N)
  cat "$work/time" >>"$work/rss.$tag"
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f\n", (b - a) / 1e6 }'
}

# build_ab REV: git-evolve as built from the revision REV in $work/a/bin,
# and as built from the working tree (lib.sh's) in $work/b/bin, for the
# scripts that time one beside the other; base_path is the PATH the two
# are put in front of (timed_ab), and $work/g/bin an empty one, for git
# alone.
build_ab() {
  base_path=$PATH
  mkdir -p "$work/a/src" "$work/a/bin" "$work/b/bin" "$work/g/bin"
  (cd "$here/.." && git archive "$1") | tar -x -C "$work/a/src"
  (cd "$work/a/src" && CGO_ENABLED=0 go build -o "$work/a/bin/git-evolve" ./cmd/git-evolve)
  cp "$work/bin/git-evolve" "$work/b/bin/"
}

# timed_ab S CMD...: one run of CMD with $work/S/bin first on the PATH (S
# is a, b or g: build_ab); "cpu wall rss" appended to $work/t.S: its CPU
# ms (user + system, the processes it waited for included), its wall-clock
# ms and its peak RSS (KiB).
timed_ab() {
  local s=$1 t0 t1
  shift
  t0=$(date +%s%N)
  PATH="$work/$s/bin:$base_path" cputime "$work/time" "$@" >/dev/null 2>"$work/err" || { cat "$work/err" >&2; return 1; }
  t1=$(date +%s%N)
  awk -v a="$t0" -v b="$t1" '{ printf "%.2f %.2f %d\n", ($1 + $2) * 1000, (b - a) / 1e6, $3 }' "$work/time" >>"$work/t.$s"
}

# col N FILE: the median of column N of FILE; colmax N FILE: its largest.
col() { awk -v c="$1" '{ print $c }' "$2" | median; }
colmax() { awk -v c="$1" '{ print $c }' "$2" | sort -n | tail -1; }
