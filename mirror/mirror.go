// Package mirror keeps, in a working tree, the local files the seeds'
// evolve loops read, derived from what git holds:
//
//   - .agents/evolve/cycle-history.jsonl: the ledger's records of the
//     cycles HEAD reaches, with the local journal's (idle, unchanged), one
//     canonical line each in the seeds' field names, in cycle order, so
//     that the seeds' snippets (tail -1 for the next cycle, the idle
//     streak, the last productive timestamp, the oscillation count) read
//     the ledger's answers;
//   - .agents/evolve/fitness-latest.json: the last goals measured, in the
//     seeds' shape (goals[] with id, result, value, threshold, weight);
//   - .agents/evolve/fitness-0-baseline.json: the era's baseline, whose
//     existence the seeds' Step 0.5 checks.
//   - .agents/evolve/session-convergence.json: the last convergence
//     decision (converged, its evidence, the reasons), the terminal state
//     seed 001 records.
//
// They are derived and local: written atomically (a temporary file renamed
// into place), kept out of git by the repository's info/exclude, never
// read back as truth. A digest of what the history file last held when it
// was written, kept under the git directory, tells a hand edit (or a seed
// script's own append) from the tool's writing: such a file is kept aside
// under the git directory and written anew, and the caller is told, never
// importing what it held. When the ledger only grew since the last write,
// the new lines are added to what the file held rather than the whole
// branch being listed again.
package mirror

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"github.com/git-evolve/git-evolve/internal/atomicfile"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// The files, from the top of the working tree.
const (
	Dir          = ".agents/evolve"
	HistoryFile  = ".agents/evolve/cycle-history.jsonl"
	FitnessFile  = ".agents/evolve/fitness-latest.json"
	BaselineFile = ".agents/evolve/fitness-0-baseline.json"
	// ConvergenceFile is seed 001's session-convergence.json.
	ConvergenceFile = ".agents/evolve/session-convergence.json"
)

// excludePatterns keep the files (and the temporary files they are
// written through) out of git.
var excludePatterns = []string{"/" + HistoryFile, "/" + FitnessFile, "/" + BaselineFile, "/" + ConvergenceFile, "/" + Dir + "/*.tmp"}

// Mirror is the seeds' files of one working tree.
type Mirror struct {
	// Top is the top of the working tree.
	Top string
	// StateDir is where the digest of the history file is kept: the
	// worktree's git-evolve directory (<git dir>/evolve).
	StateDir string
	// Exclude is the repository's info/exclude file, where the files are
	// listed before they are first written. Empty: not done.
	Exclude string
}

// Path is the absolute path of one of the files.
func (m Mirror) Path(rel string) string { return filepath.Join(m.Top, filepath.FromSlash(rel)) }

// Present reports whether the working tree has the seeds' layout: an
// .agents/evolve directory.
func (m Mirror) Present() bool {
	fi, err := os.Stat(m.Path(Dir))
	return err == nil && fi.IsDir()
}

// statePath is where the history file's state is kept.
func (m Mirror) statePath() string { return filepath.Join(m.StateDir, "history-mirror.json") }

// Known reports whether the history file was written here before (its
// state is kept).
func (m Mirror) Known() bool {
	_, err := os.Stat(m.statePath())
	return err == nil
}

// WriteFile writes one of the files (rel, from the top) atomically, after
// listing the files in info/exclude.
func (m Mirror) WriteFile(rel string, data []byte) error {
	if err := m.exclude(); err != nil {
		return err
	}
	path := m.Path(rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return writeAtomic(path, data)
}

// writeAtomic writes data to path through a temporary file in the same
// directory renamed into place: a reader sees the old content or the new,
// never a part.
func writeAtomic(path string, data []byte) error { return atomicfile.Write(path, data, 0o644) }

// writeAtomicWith is writeAtomic of what fill writes.
func writeAtomicWith(path string, fill func(*os.File) error) error {
	return atomicfile.WriteWith(path, 0o644, fill)
}

// ExcludePatterns are the info/exclude patterns of the files the mirror
// keeps (a run adds them before the agent's turn, beside its markers').
func ExcludePatterns() []string { return slices.Clone(excludePatterns) }

// exclude adds the files' patterns that info/exclude lacks.
func (m Mirror) exclude() error {
	if m.Exclude == "" {
		return nil
	}
	_, err := atomicfile.AddLines(m.Exclude, "# git evolve: the seeds' files it keeps from the ledger are local to this worktree", excludePatterns)
	return err
}

// digest names a content: the hex SHA-256.
func digest(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// stamp is what a file's metadata says of its content: when both stamps
// of a path are equal, its content is taken as unchanged (as git's index
// takes a file's).
type stamp struct {
	Size  int64 `json:"size"`
	MTime int64 `json:"mtime_ns"`
}

func stampOf(fi fs.FileInfo) stamp {
	if fi == nil {
		return stamp{Size: -1}
	}
	return stamp{Size: fi.Size(), MTime: fi.ModTime().UnixNano()}
}

// statStamp is the stamp of the file at path; Size -1 when there is none.
func statStamp(path string) (stamp, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return stamp{Size: -1}, nil
	}
	if err != nil {
		return stamp{}, err
	}
	return stampOf(fi), nil
}
