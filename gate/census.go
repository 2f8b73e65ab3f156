package gate

import (
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The bounds of a census, whose every name is read from what the tested
// code printed: a name longer than MaxNameBytes keeps its first bytes (cut
// on a rune boundary) followed by "…", and each outcome keeps at most
// MaxNames names.
const (
	MaxNameBytes = 512
	MaxNames     = 100_000
)

// Census is what a test runner said of the tests it ran: each test's name
// by its outcome. The regression gate counts the tests that passed at the
// start of a cycle and at its finish (see Dropped and Vanished), so that
// tests that silently stop running (a TestMain that exits 0, an init that
// exits, tests deselected) count against the cycle.
//
// A name is what the runner calls the test, as the parser of its format
// documents it: valid UTF-8 (invalid bytes become U+FFFD), never empty, at
// most MaxNameBytes plus len("…") bytes, escaped for nothing (callers
// escape for a terminal or Markdown). A name has one outcome: the lists
// are disjoint, each sorted and without repeats.
type Census struct {
	Runner  string   `json:"runner"` // "go", "junit", "cargo" or "tap"
	Passed  []string `json:"passed,omitempty"`
	Failed  []string `json:"failed,omitempty"`
	Skipped []string `json:"skipped,omitempty"`
	// Truncated is true when names were left out: an outcome had more
	// than MaxNames of them.
	Truncated bool `json:"truncated,omitempty"`
}

// Dropped reports whether fewer tests passed after than before: the drop
// the judge counts as a regression, whichever tests it was (Vanished names
// them). A nil census is one where no test passed.
func Dropped(before, after *Census) bool {
	return after.passed() < before.passed()
}

// Vanished returns the names of the tests that passed in before and do not
// pass in after (they are absent, failed or skipped), sorted: the tests
// the judge names when it counts a drop (see Dropped). Tests can vanish
// without a drop (one renamed, or replaced by another); only a drop counts
// as a regression. A nil census is one where no test passed.
func (before *Census) Vanished(after *Census) []string {
	if before == nil {
		return nil
	}
	now := map[string]bool{}
	if after != nil {
		for _, name := range after.Passed {
			now[name] = true
		}
	}
	var out []string
	for _, name := range before.Passed {
		if !now[name] {
			out = append(out, name)
		}
	}
	slices.Sort(out) // a census read back from JSON is not known to be sorted
	return slices.Compact(out)
}

// Summary counts the census's names by outcome, as "12 passed, 1 failed,
// 2 skipped", with " (truncated)" after it when names were left out.
func (c *Census) Summary() string {
	if c == nil {
		c = &Census{}
	}
	s := strconv.Itoa(len(c.Passed)) + " passed, " + strconv.Itoa(len(c.Failed)) + " failed, " + strconv.Itoa(len(c.Skipped)) + " skipped"
	if c.Truncated {
		s += " (truncated)"
	}
	return s
}

func (c *Census) passed() int {
	if c == nil {
		return 0
	}
	return len(c.Passed)
}

// outcome is what a tally holds of a test. started is a test that began and
// has said nothing more (go test only); the census counts it as failed.
type outcome uint8

const (
	started outcome = iota
	skipped
	passed
	failed
)

// tally collects the outcome of each name a parser reads, within the
// bounds of a census.
type tally struct {
	runner    string
	of        map[string]outcome
	count     [failed + 1]int
	truncated bool
}

func newTally(runner string) *tally {
	return &tally{runner: runner, of: map[string]outcome{}}
}

// set gives name the outcome o, whatever it had. A name that would be one
// too many of its outcome is left out.
func (t *tally) set(name string, o outcome) {
	name = boundName(name)
	if name == "" {
		return
	}
	old, had := t.of[name]
	if had && old == o {
		return
	}
	if had {
		t.count[old]--
		delete(t.of, name)
	}
	if t.count[o] >= MaxNames {
		t.truncated = true
		return
	}
	if !had {
		name = strings.Clone(name) // not a window on the runner's whole output
	}
	t.of[name] = o
	t.count[o]++
}

// merge gives name the outcome o unless it has a stronger one: a failure
// outweighs a pass, which outweighs a skip. It serves runners that may
// report one name more than once (two test binaries, two files).
func (t *tally) merge(name string, o outcome) {
	if old, had := t.of[boundName(name)]; had && old >= o {
		return
	}
	t.set(name, o)
}

// census is the tally as a Census; a test that started and said nothing
// more is failed.
func (t *tally) census() *Census {
	c := &Census{Runner: t.runner, Truncated: t.truncated}
	for name, o := range t.of {
		switch o {
		case passed:
			c.Passed = append(c.Passed, name)
		case skipped:
			c.Skipped = append(c.Skipped, name)
		default:
			c.Failed = append(c.Failed, name)
		}
	}
	for _, list := range []*[]string{&c.Passed, &c.Failed, &c.Skipped} {
		slices.Sort(*list)
		if len(*list) > MaxNames { // started and failed together
			*list = (*list)[:MaxNames]
			c.Truncated = true
		}
	}
	return c
}

// boundName is name as valid UTF-8 (invalid bytes replaced, as
// encoding/json would write them) and within MaxNameBytes, cut on a rune
// boundary and marked with "…".
func boundName(name string) string {
	long := len(name) > MaxNameBytes
	if long {
		name = cutRunes(name, MaxNameBytes)
	}
	if !utf8.ValidString(name) {
		name = strings.ToValidUTF8(name, "\uFFFD")
		if len(name) > MaxNameBytes { // a replacement is longer than the byte it replaces
			name, long = cutRunes(name, MaxNameBytes), true
		}
	}
	if long {
		name += "…"
	}
	return name
}

// cutRunes is the longest start of s within n bytes that does not end in
// the middle of a rune (of valid UTF-8; invalid bytes may be cut anywhere).
func cutRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for i := 0; i < utf8.UTFMax-1 && n > 0 && !utf8.RuneStart(s[n]); i++ {
		n--
	}
	return s[:n]
}
