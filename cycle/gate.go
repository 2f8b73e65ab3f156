package cycle

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/git-evolve/git-evolve/gate"
	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/goals"
)

// GateAt is the gate a cycle that starts on commit and is judged by the
// goals file f runs: the commands f's gate key names (gate: [] runs none),
// else the project's test command detected in commit's tree (detected is
// then set), within f's gate timeout. Derived from the commit and the goals file alone,
// it is the same at the finish as at the start, whatever the cycle changed.
func (l *Ledger) GateAt(commit gitstore.Hash, f *goals.File) (g goals.Gate, detected *gate.Detected, err error) {
	if f.Gate.Set {
		return f.Gate, nil, nil
	}
	read, readErr := l.TreeReader(commit)
	d, ok := gate.DetectTests(read)
	if err := readErr(); err != nil {
		return goals.Gate{}, nil, err
	}
	g = goals.Gate{Timeout: f.Gate.Timeout}
	if g.Timeout <= 0 {
		g.Timeout = goals.DefaultGateTimeout
	}
	if !ok {
		return g, nil, nil
	}
	g.Commands = []string{d.Command}
	return g, &d, nil
}

// checkTrust refuses (a *Refusal) a ruler this machine has not trusted:
// the goals file data (the content cycle c was started with) and the
// detected gate command, when there is one.
func (l *Ledger) checkTrust(c *OpenCycle, data []byte, detected *gate.Detected) error {
	t := goals.TrustAt(l.stateDir)
	if ok, err := t.Trusted(goals.DigestOf(c.goalsName(), data)); err != nil {
		return err
	} else if !ok {
		return &Refusal{fmt.Sprintf("the goals file cycle %d started with (sha256 %s) is not trusted on this machine", c.Cycle, goals.DigestOf(c.goalsName(), data)[:12]),
			"read it (git cat-file -p " + short(c.Goals) + "), then trust it with git evolve trust"}
	}
	if detected == nil {
		return nil
	}
	if ok, err := t.Trusted(detected.TrustDigest()); err != nil {
		return err
	} else if !ok {
		return &Refusal{fmt.Sprintf("the gate cycle %d runs, %s, is not trusted on this machine", c.Cycle, detected),
			"trust it with git evolve trust (it trusts the goals file and the gate detected beside it), or set gate: in GOALS.yaml"}
	}
	return nil
}

// StartGate is the gate a cycle opened on commit with the goals file f
// runs (see GateAt), refused (a *Refusal) when it is a detected command
// this machine has not trusted, or one whose tool is not installed: a
// cycle that cannot be judged does not start.
func (l *Ledger) StartGate(commit gitstore.Hash, f *goals.File) (goals.Gate, *gate.Detected, error) {
	g, d, err := l.GateAt(commit, f)
	if err != nil || d == nil {
		return g, d, err
	}
	if ok, err := goals.TrustAt(l.stateDir).Trusted(d.TrustDigest()); err != nil {
		return g, d, err
	} else if !ok {
		return g, d, &Refusal{fmt.Sprintf("the gate, %s, is not trusted on this machine: with no gate: key in %s, a cycle runs the project's tests", d, goals.FileName),
			"trust it with git evolve trust (it trusts the goals file and the gate detected beside it), or set gate: in " + goals.FileName + " (gate: [] for none)"}
	}
	if err := d.Available(); err != nil {
		return g, d, &Refusal{fmt.Sprintf("the gate, %s, cannot run here: %v", d, err),
			"install it, or set gate: in " + goals.FileName + " to the command that runs the project's tests (gate: [] for none)"}
	}
	return g, d, nil
}

// TrustGates trusts the test commands detected in the trees given (the
// working tree's files, HEAD's): what GateAt runs for a goals file without a
// gate key. It returns those it trusted that were not trusted before.
func TrustGates(stateDir string, reads ...gate.ReadFile) ([]gate.Detected, error) {
	t := goals.TrustAt(stateDir)
	var added []gate.Detected
	for _, read := range reads {
		d, ok := gate.DetectTests(read)
		if !ok {
			continue
		}
		if have, err := t.Trusted(d.TrustDigest()); err != nil {
			return added, err
		} else if have {
			continue
		}
		if err := t.Add(d.TrustDigest(), "gate "+d.String()); err != nil {
			return added, err
		}
		added = append(added, d)
	}
	return added, nil
}

// TreeReader reads the files at the top of commit's tree, for
// gate.DetectTests; readErr returns the first error a read met (a file that
// is not there is none).
func (l *Ledger) TreeReader(commit gitstore.Hash) (read gate.ReadFile, readErr func() error) {
	var first error
	read = func(name string) ([]byte, bool) {
		if first != nil {
			return nil, false
		}
		blob, ok, err := l.repo.TreeFile(commit, name)
		if err == nil && ok {
			var data []byte
			if data, err = l.repo.ReadBlob(blob); err == nil {
				return data, true
			}
		}
		first = err
		return nil, false
	}
	return read, func() error { return first }
}

// projectCommand reports whether the program a gate command could not run
// is the project's own, a file of the start commit's tree (a script the
// cycle deleted, moved or made not executable): then the cycle broke its
// gate, which is a failure, not a tool missing on this machine.
func (l *Ledger) projectCommand(cr goals.CommandResult, top string, start gitstore.Hash) bool {
	name := cr.Missing
	if name == "" {
		if fields := strings.Fields(cr.Command); len(fields) > 0 {
			name = fields[0]
		}
	}
	if !strings.Contains(name, "/") {
		return false // a program found on PATH
	}
	if filepath.IsAbs(name) {
		rel, err := filepath.Rel(top, name)
		if err != nil || strings.HasPrefix(rel, "..") {
			return false
		}
		name = rel
	}
	name = path.Clean(filepath.ToSlash(name))
	_, ok, err := l.repo.TreeFile(start, name)
	return err == nil && ok
}
