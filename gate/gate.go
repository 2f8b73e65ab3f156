// Package gate decides whether a cycle's work counts, by rules the agent
// cannot talk its way past:
//   - the substantive-delta rule of the seeds: a cycle whose changes touch
//     only the loop's own bookkeeping (.agents/**, GOALS.yaml, GOALS.md, and
//     paths a project adds) delivered nothing, whatever the agent says;
//   - the regression gate: the project's test commands, then every goal
//     measured again and compared with its measure before the cycle (a goal
//     that passed and does not pass now, whether it fails, times out, skips
//     or cannot run, or a value that moved the wrong way beyond its
//     tolerance, measured twice before it counts).
//
// A Census is what a test command's runner said of each test it ran, so
// that tests that stop running while the command still passes (a TestMain
// or an init that exits 0, tests deselected) can count too.
//
// It works on paths, goals files, snapshots and the output of test
// runners; callers read git and run the commands.
package gate

import (
	"path"
	"strings"
)

// NonSubstantive are the paths whose changes never count as delivered work:
// the agents' own files and the goals that measure the work.
var NonSubstantive = []string{".agents/**", "GOALS.yaml", "GOALS.md"}

// Substantive returns the paths that count as delivered work: those that
// match neither NonSubstantive nor any of extra. Patterns are matched
// against the whole slash-separated path from the repository root; a
// pattern ending in "/**" matches everything below that directory, others
// follow path.Match.
func Substantive(paths []string, extra ...string) []string {
	var out []string
	for _, p := range paths {
		if !matchAny(p, NonSubstantive) && !matchAny(p, extra) {
			out = append(out, p)
		}
	}
	return out
}

func matchAny(p string, patterns []string) bool {
	for _, pat := range patterns {
		if Match(pat, p) {
			return true
		}
	}
	return false
}

// Match reports whether path p matches pattern pat (see Substantive).
func Match(pat, p string) bool {
	if dir, ok := strings.CutSuffix(pat, "/**"); ok {
		return p == dir || strings.HasPrefix(p, dir+"/")
	}
	ok, err := path.Match(pat, p)
	return err == nil && ok
}
