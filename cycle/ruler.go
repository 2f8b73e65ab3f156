package cycle

import (
	"fmt"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/git-evolve/git-evolve/gate"
	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/goals"
	"github.com/git-evolve/git-evolve/ledger"
)

// RulerChange is a file of a cycle's ruler (gate.Ruler) that the cycle
// changed.
type RulerChange struct {
	Path string `json:"path"`
	// Status is "+" (the cycle added it), "-" (removed it) or "M"
	// (changed it).
	Status string `json:"status"`
	// Why it judges, in a few words ("a Go test file").
	Why string `json:"why"`
	// Accepted says a person accepted the cycle's version (cycle finish
	// --accept-ruler-change): the first judgment ran with it.
	Accepted bool `json:"accepted,omitempty"`
	// old and new are the file's blobs at the start and in the work (zero
	// where absent): a file removed whose content the cycle added
	// elsewhere was moved, not changed.
	old, new gitstore.Hash
	// rest says the file's part that does not judge changed too (of a
	// package.json, a go.mod or a Rust file, see gate.RestChanged): the
	// change is the project's as well as the ruler's.
	rest bool
}

// String is the change as the record lists it: "M add_test.go".
func (r RulerChange) String() string { return r.Status + " " + r.Path }

// rulerOf is the ruler of a cycle judged by f (its gate set) that started
// on start: the files f's gate and checks name in start's tree, and f's
// ruler: patterns.
func (l *Ledger) rulerOf(f *goals.File, start gitstore.Hash) gate.Ruler {
	var checks []string
	for _, g := range f.Goals {
		checks = append(checks, g.Check)
	}
	exists := func(p string) bool {
		_, ok, err := l.repo.TreeFile(start, p)
		return err == nil && ok
	}
	return gate.Ruler{Named: gate.NamedFiles(f.Gate.Commands, checks, exists), Globs: f.Ruler}
}

// holdRuler is the tree that judges a cycle's work with its ruler as it
// was at the start, given the files it changed since (files): tree with
// every ruler file the cycle changed as start had it (one it added left
// out, one it changed or removed put back; of a package.json or a go.mod,
// only the part that judges; of a Rust file, its test modules: those of
// one it added left out, those of one it removed not put back), but for
// the paths a person accepted. It returns held == tree when the cycle changed no
// ruler file, and the ruler changes in path order, accepted ones included.
func (l *Ledger) holdRuler(r gate.Ruler, files []gitstore.FileChange, tree gitstore.Hash, accept map[string]bool) (held gitstore.Hash, changes []RulerChange, err error) {
	var edits []gitstore.CapturedPath
	for _, fc := range files {
		part, why := r.Part(fc.Path)
		if part == gate.NotRuler {
			continue
		}
		ch := RulerChange{Path: fc.Path, Status: "M", Why: why, old: fc.Old, new: fc.New}
		switch {
		case fc.OldMode == 0:
			ch.Status = "+"
		case fc.NewMode == 0:
			ch.Status = "-"
		}
		edit := gitstore.CapturedPath{Path: fc.Path, Mode: fc.OldMode, Blob: fc.Old}
		switch {
		case part == gate.WholeFile:
		case part == gate.RustTests && (ch.Status == "-" || !isRegular(fc.NewMode) || ch.Status == "M" && !isRegular(fc.OldMode)):
			// Its test modules went with the code they test (the census
			// counts the tests that vanished), or it is no file to read.
			continue
		case part == gate.RustTests || ch.Status == "M" && isRegular(fc.OldMode) && isRegular(fc.NewMode):
			old := fc.Old
			if ch.Status == "+" {
				old = gitstore.ZeroHash // a Rust file added: its own test modules are left out
			}
			blob, changed, rest, err := l.heldPart(part, old, fc.New)
			if err != nil {
				return gitstore.ZeroHash, nil, err
			}
			if !changed {
				continue // the part that judges is as it was
			}
			edit = gitstore.CapturedPath{Path: fc.Path, Mode: fc.NewMode, Blob: blob}
			ch.rest = rest
		}
		if accept[fc.Path] {
			ch.Accepted = true
		} else {
			edits = append(edits, edit)
		}
		changes = append(changes, ch)
	}
	sort.Slice(changes, func(i, j int) bool { return changes[i].Path < changes[j].Path })
	if len(edits) == 0 {
		return tree, changes, nil
	}
	held, err = l.repo.EditTree(tree, edits)
	if err != nil {
		return gitstore.ZeroHash, nil, &Refusal{fmt.Sprintf("the ruler as the cycle started cannot be put back into its work: %v", err),
			"move the files the cycle put where a ruler file was, or accept the change with git evolve cycle finish --accept-ruler-change PATH -m why"}
	}
	return held, changes, l.repo.Flush()
}

func isRegular(mode uint32) bool { return mode == 0o100644 || mode == 0o100755 }

// heldPart is the blob of a file whose part judges (see gate.HeldPart):
// the cycle's file, new, with the start's part, old (the zero hash for a
// file the cycle added); changed is false when the parts are the same,
// and rest says the rest of the file changed too (gate.RestChanged). A
// package.json or go.mod too large to read is held whole; a Rust file too
// large to read is not held.
func (l *Ledger) heldPart(part gate.RulerPart, old, new gitstore.Hash) (held gitstore.Hash, changed, rest bool, err error) {
	var ask []gitstore.Hash
	for _, h := range []gitstore.Hash{old, new} {
		if h != gitstore.ZeroHash {
			ask = append(ask, h)
		}
	}
	sizes, err := l.repo.ObjectSizes(ask)
	if err != nil {
		return gitstore.ZeroHash, false, false, err
	}
	for _, n := range sizes {
		if n < 0 || n > gate.MaxRulerPart {
			if part == gate.RustTests {
				return new, false, false, nil // never hold what is not read
			}
			return old, true, false, nil // too large to read (or not here): held whole
		}
	}
	data, err := l.repo.ReadBlobs([]gitstore.Hash{old, new}) // the zero hash reads as nil
	if err != nil {
		return gitstore.ZeroHash, false, false, err
	}
	h, changed := gate.HeldPart(part, data[0], data[1])
	if !changed {
		return new, false, false, nil
	}
	blob, err := l.repo.WriteBlob(h)
	return blob, true, gate.RestChanged(part, data[0], data[1]), err
}

// rulerOnly says whether the cycle's substantive change is to its ruler
// alone (none of it accepted, and no file whose rest changed beside its
// part that judges): such a cycle is never improved.
func rulerOnly(d Delta, changes []RulerChange) bool {
	held := map[string]bool{}
	for _, c := range changes {
		if !c.Accepted && !c.rest {
			held[c.Path] = true
		}
	}
	if d.Files == 0 || len(held) == 0 {
		return false
	}
	for _, p := range d.Paths {
		if !held[p] {
			return false
		}
	}
	return true
}

// rulerList says the ruler changes in words: "M add_test.go (a Go test
// file), - tests/test_x.py (under a tests/ directory)", the first few.
func rulerList(changes []RulerChange) string {
	var parts []string
	for i, c := range changes {
		if i == 5 {
			parts = append(parts, fmt.Sprintf("and %d more", len(changes)-i))
			break
		}
		parts = append(parts, c.String()+" ("+c.Why+")")
	}
	return strings.Join(parts, ", ")
}

// maxChanged bounds the paths a record lists as changed.
const maxChanged = ledger.MaxChanged

// changedList is the files a cycle changed as its record lists them: "+
// path" (added), "- path" (removed) or "M path", at most maxChanged.
func changedList(files []gitstore.FileChange) []string {
	out := make([]string, 0, min(len(files), maxChanged))
	for _, fc := range files {
		if len(out) == maxChanged {
			break
		}
		st := "M"
		switch {
		case fc.OldMode == 0:
			st = "+"
		case fc.NewMode == 0:
			st = "-"
		}
		out = append(out, st+" "+fc.Path)
	}
	return out
}

// checkAccepted refuses (a *Refusal) an --accept-ruler-change of a path
// that is no ruler file the cycle changed, and keeps who accepted what.
func (l *Ledger) checkAccepted(c *OpenCycle, changes []RulerChange, opts FinishOptions, f *Finishing) error {
	if len(opts.AcceptRuler) == 0 {
		return nil
	}
	changed := map[string]bool{}
	for _, ch := range changes {
		changed[ch.Path] = true
	}
	for _, p := range opts.AcceptRuler {
		if !changed[p] {
			list := "none"
			if len(changes) > 0 {
				list = rulerList(changes)
			}
			return &Refusal{fmt.Sprintf("--accept-ruler-change %s: not a ruler file cycle %d changed (it changed: %s)", p, c.Cycle, list),
				"name the paths as git diff --name-only names them, from the top of the repository"}
		}
	}
	if strings.TrimSpace(opts.AcceptWhy) == "" {
		return &Refusal{"--accept-ruler-change needs the reason, in -m", "say why the cycle's version of the ruler is right: git evolve cycle finish --accept-ruler-change PATH -m why"}
	}
	_, committer, err := l.repo.Identity()
	if err != nil {
		return err
	}
	by := committer.Name + " <" + committer.Email + ">"
	for _, p := range opts.AcceptRuler {
		f.Accepted = append(f.Accepted, ledger.Accepted{Path: p, By: by, Why: strings.TrimSpace(opts.AcceptWhy)})
	}
	return nil
}

// changedExisting are the ruler files the cycle changed that were there
// at its start, not accepted: changed, or removed but for those whose
// content it put elsewhere (a test file renamed).
func changedExisting(changes []RulerChange) []RulerChange {
	added := map[gitstore.Hash]bool{}
	for _, c := range changes {
		if c.Status == "+" {
			added[c.new] = true
		}
	}
	var out []RulerChange
	for _, c := range changes {
		switch {
		case c.Accepted || c.Status == "+":
		case c.Status == "-" && added[c.old]:
		default:
			out = append(out, c)
		}
	}
	return out
}

// movedByRuler are the goals that pass in the judgment with the cycle's
// own ruler (own) and not in the one with the ruler as the cycle started
// (held), when the cycle changed ruler files that were there at its start:
// what the work does not do, that change made pass. New ruler files (new
// tests) move nothing here.
func movedByRuler(held, own *gate.Verdict, changes []RulerChange) []string {
	if held == nil || own == nil || held.After == nil || own.After == nil || len(changedExisting(changes)) == 0 {
		return nil
	}
	var out []string
	for _, r := range own.After.Goals {
		if r.Result == goals.Pass && gate.ResultOf(held.After, r.GoalID) != goals.Pass {
			out = append(out, r.GoalID)
		}
	}
	return out
}

// linksOut are the symbolic links the cycle added or changed (files) that
// lead out of the tree: an absolute target, or one that climbs above the
// top. A checkout would follow them to what is no part of the work (the
// working tree itself): each is [path, target].
func (l *Ledger) linksOut(files []gitstore.FileChange) ([][2]string, error) {
	var out [][2]string
	for _, fc := range files {
		if fc.NewMode != 0o120000 {
			continue
		}
		data, err := l.repo.ReadBlob(fc.New)
		if err != nil {
			return nil, err
		}
		target := string(data)
		if len(target) > 4096 {
			target = target[:4096]
		}
		if escapes(fc.Path, target) {
			out = append(out, [2]string{fc.Path, target})
		}
	}
	return out, nil
}

// escapes says whether a link at path p (slashes, from the top) to target
// leads out of the tree.
func escapes(p, target string) bool {
	if target == "" || strings.HasPrefix(target, "/") || strings.HasPrefix(target, "\\") || (len(target) > 1 && target[1] == ':') {
		return true
	}
	joined := path.Join(path.Dir(p), filepath.ToSlash(target))
	return joined == ".." || strings.HasPrefix(joined, "../")
}

func ln0(links [][2]string) string { return links[0][0] }
