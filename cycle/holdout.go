package cycle

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/goals"
)

// Holdout checks are goals kept outside the agent's tree: in the common
// git directory's evolve/holdout.yaml, or in the file git config
// evolve.holdout names (a user's own, for every clone). The judge runs
// them with the gate, and they are trusted like the goals file; the brief
// never names them, and the record says only that some regressed, never
// which: they catch work fitted to the checks the agent sees.

// HoldoutName is the holdout checks' file in the common git directory's
// evolve/.
const HoldoutName = "holdout.yaml"

// HoldoutRef keeps the holdout checks an open cycle started with.
func HoldoutRef(id string) string { return "refs/evolve/cycles/" + id + "/holdout" }

// maxHoldout bounds the holdout file read.
const maxHoldout = 1 << 20

// HoldoutPath is the file of this repository's holdout checks: the one git
// config evolve.holdout names (~/ for the home directory), else the
// common git directory's evolve/holdout.yaml. ok is false when there is
// no such file.
func (l *Ledger) HoldoutPath() (path string, ok bool, err error) {
	path = filepath.Join(l.stateDir, HoldoutName)
	if v, set, err := l.repo.Config("evolve.holdout"); err != nil {
		return "", false, err
	} else if set && strings.TrimSpace(v) != "" {
		path = strings.TrimSpace(v)
		if rest, ok := strings.CutPrefix(path, "~/"); ok {
			home, err := os.UserHomeDir()
			if err != nil {
				return "", false, err
			}
			path = filepath.Join(home, rest)
		}
	}
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return path, false, nil
	}
	if err != nil {
		return "", false, err
	}
	if !fi.Mode().IsRegular() {
		return "", false, fmt.Errorf("the holdout checks %s are not a file", path)
	}
	return path, true, nil
}

// Holdout reads this repository's holdout checks: the file, parsed as a
// goals file, and its content; nil, nil when there are none. Only its
// goals are read (a gate: there is ignored).
func (l *Ledger) Holdout() (*goals.File, []byte, error) {
	path, ok, err := l.HoldoutPath()
	if err != nil || !ok {
		return nil, nil, err
	}
	data, err := readRegularFile(path, maxHoldout)
	if err != nil {
		return nil, nil, fmt.Errorf("the holdout checks %s: %w", path, err)
	}
	f, err := parseHoldout(path, data)
	return f, data, err
}

func parseHoldout(name string, data []byte) (*goals.File, error) {
	return goals.Parse(name, data)
}

// HoldoutDigest is what the trust of this machine keeps of the holdout
// checks' content.
func HoldoutDigest(data []byte) string {
	return goals.Digest(append([]byte("holdout checks\x00"), data...))
}

// cycleHoldout is the holdout checks cycle c started with (kept by
// HoldoutRef), nil when it started with none.
func (l *Ledger) cycleHoldout(c *OpenCycle) (*goals.File, []byte, error) {
	h, err := gitstore.ParseHash(c.Holdout)
	if err != nil {
		return nil, nil, nil
	}
	data, err := l.repo.ReadBlob(h)
	if err != nil {
		return nil, nil, &Refusal{fmt.Sprintf("the holdout checks cycle %d started with are gone (%s): %v", c.Cycle, HoldoutRef(c.ID), err),
			"close the cycle with git evolve cycle abort and start another"}
	}
	f, err := parseHoldout("the holdout checks (as cycle "+fmt.Sprint(c.Cycle)+" started)", data)
	return f, data, err
}

// checkHoldoutTrust refuses (a *Refusal) holdout checks this machine has
// not trusted.
func (l *Ledger) checkHoldoutTrust(data []byte) error {
	if ok, err := goals.TrustAt(l.stateDir).Trusted(HoldoutDigest(data)); err != nil {
		return err
	} else if !ok {
		return &Refusal{"the holdout checks (sha256 " + HoldoutDigest(data)[:12] + ") are not trusted on this machine",
			"read them, then trust them with git evolve trust"}
	}
	return nil
}

// readRegularFile reads a regular file of at most limit bytes.
func readRegularFile(path string, limit int64) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > limit {
		return nil, fmt.Errorf("not a regular file of at most %d bytes", limit)
	}
	return os.ReadFile(path)
}
