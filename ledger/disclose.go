package ledger

import (
	"encoding/json"
	"sort"
	"strings"
)

// What a finished cycle's record says it changed, as cycle finish writes
// it: read here for every listing of a record (show, log's table, the
// report), without the cycle that wrote it.

// Disclosure is what a finished cycle's record says it changed (cycle
// finish writes it): the files, the files of its ruler apart (those a
// person accepted among them), and the tests that passed at its start and
// at its finish. A field of another shape (a record written by hand, or by
// another tool) reads as absent.
type Disclosure struct {
	// Changed are the files the cycle changed, as the record lists them:
	// "+ path", "- path" or "M path", at most MaxChanged.
	Changed []string
	// Ruler are the ruler files it changed, in path order: those of
	// ruler_changed, and those of ruler_accepted.
	Ruler []DisclosedRuler
	// Tests is the count of the tests that passed, when the runner could
	// tell (tests_passed).
	Tests *CensusCount
}

// MaxChanged is the most files a record lists as changed.
const MaxChanged = 200

// DisclosedRuler is a ruler file a cycle changed, as its record says.
type DisclosedRuler struct {
	// Status is "+" (the cycle added it), "-" (removed it), "M" (changed
	// it), or "" when the record does not say (an accepted change of a
	// file past the changed list's bound).
	Status string
	Path   string
	// Accepted is who accepted the change and why; nil when no one did.
	Accepted *Accepted
}

// String is the change as the record lists it: "M add_test.go" (the path
// alone when the record does not say how it changed).
func (d DisclosedRuler) String() string {
	if d.Status == "" {
		return d.Path
	}
	return d.Status + " " + d.Path
}

// Disclose reads a record's changed, ruler_changed, ruler_accepted and
// tests_passed.
func Disclose(r *Record) Disclosure {
	var d Disclosure
	var changed, ruler []string
	if json.Unmarshal(r.Extra["changed"], &changed) == nil {
		d.Changed = changed
	}
	status := map[string]string{}
	for _, c := range d.Changed {
		if st, p, ok := ParseChange(c); ok {
			status[p] = st
		}
	}
	seen := map[string]int{}
	if json.Unmarshal(r.Extra["ruler_changed"], &ruler) == nil {
		for _, c := range ruler {
			if st, p, ok := ParseChange(c); ok {
				if _, dup := seen[p]; !dup {
					seen[p] = len(d.Ruler)
					d.Ruler = append(d.Ruler, DisclosedRuler{Status: st, Path: p})
				}
			}
		}
	}
	var accepted []Accepted
	if json.Unmarshal(r.Extra["ruler_accepted"], &accepted) == nil {
		for _, a := range accepted {
			if a.Path == "" {
				continue
			}
			a := a
			if i, dup := seen[a.Path]; dup {
				d.Ruler[i].Accepted = &a
				continue
			}
			seen[a.Path] = len(d.Ruler)
			d.Ruler = append(d.Ruler, DisclosedRuler{Status: status[a.Path], Path: a.Path, Accepted: &a})
		}
	}
	sort.SliceStable(d.Ruler, func(i, j int) bool { return d.Ruler[i].Path < d.Ruler[j].Path })
	var tests CensusCount
	if raw := r.Extra["tests_passed"]; raw != nil && json.Unmarshal(raw, &tests) == nil {
		d.Tests = &tests
	}
	return d
}

// ParseChange reads an entry of a record's list of changes: "M path".
func ParseChange(s string) (status, path string, ok bool) {
	st, p, ok := strings.Cut(s, " ")
	if !ok || p == "" || (st != "+" && st != "-" && st != "M") {
		return "", "", false
	}
	return st, p, true
}

// Accepted is a change of the ruler a person accepted at a cycle's finish
// (a record's ruler_accepted).
type Accepted struct {
	Path string `json:"path"`
	By   string `json:"by"`
	Why  string `json:"why"`
}

// CensusCount is how many tests passed at a cycle's start and in its
// judgment, as a runner counted them (a record's tests_passed).
type CensusCount struct {
	Runner string `json:"runner"`
	Before int    `json:"before"`
	After  int    `json:"after"`
}

// RegressedRef is where the working tree of a cycle that regressed is kept
// (committed or not, untracked files included) before the revert, in the
// clone that judged it: the commit its record's saved field names.
func RegressedRef(id string) string { return "refs/evolve/cycles/" + id + "/regressed" }
