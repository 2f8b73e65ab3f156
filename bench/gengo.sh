#!/usr/bin/env bash
# gengo.sh PACKAGES ROUNDS DIR: make a repository in DIR that holds a Go
# module whose tests take a while: a package core, and PACKAGES packages
# p00, p01, … that build on it, each with a test that spins ROUNDS rounds
# of a xorshift (100,000,000 rounds take about 0.2 s of a core) and a
# constant for a cycle to change (Run in the code, run in the test; both
# are used, so that a change makes a new test binary, whose test runs), and
# the GOALS.yaml of gentree.sh (a goal that passes, and one that fails once a
# file named broken exists; no gate key: the gate is the detected go test
# ./...), all committed. Needs git.
set -euo pipefail
n=${1:?usage: gengo.sh PACKAGES ROUNDS DIR}
rounds=${2:?usage: gengo.sh PACKAGES ROUNDS DIR}
dir=${3:?usage: gengo.sh PACKAGES ROUNDS DIR}
git init -q "$dir"
cd "$dir"
git config gc.auto 0
printf 'module example.com/bench\n\ngo 1.21\n' >go.mod
mkdir core
cat >core/core.go <<'GO'
// Package core is what every package of the module builds on.
package core

// Work spins n rounds of a xorshift and returns the last value.
func Work(n int) uint64 {
	x := uint64(88172645463325252)
	for i := 0; i < n; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}
GO
for ((i = 0; i < n; i++)); do
  p=$(printf 'p%02d' "$i")
  mkdir "$p"
  cat >"$p/$p.go" <<GO
// Package $p is one of the module's packages.
package $p

import "example.com/bench/core"

// Run names the change to the package, for a cycle to change.
const Run = "base"

// tag holds Run at run time (a constant's length alone would be folded).
var tag = Run

// Sum is core.Work, the package's number and the length of Run.
func Sum(n int) uint64 { return core.Work(n) + $i + uint64(len(tag)) }
GO
  cat >"$p/${p}_test.go" <<GO
package $p

import "testing"

// run names the change to the test, for a cycle to change.
const run = "base"

var testTag = run

func TestSum(t *testing.T) {
	if Sum($rounds+len(testTag)) == 0 {
		t.Fatal("zero")
	}
}

func TestSmall(t *testing.T) {
	if Sum(1) == 0 {
		t.Fatal("zero")
	}
}
GO
done
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
