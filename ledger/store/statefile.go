package store

import (
	"bufio"
	"os"
	"path/filepath"

	"github.com/git-evolve/git-evolve/internal/atomicfile"
)

// LockPath is the lock file writers of the ledger hold (with filelock)
// while they take a cycle number and write.
func (l *Ledger) LockPath() string { return filepath.Join(l.stateDir, "ledger.lock") }

// WriteStateFile writes a state file (of the ledger, or of verify) as its
// content is made, to a temporary file beside it that is renamed into
// place: a reader sees the old file or the new one, never a part, and a
// large file is never held whole in memory.
func WriteStateFile(path string, write func(w *bufio.Writer) error) error {
	err := atomicfile.WriteWith(path, 0o600, func(f *os.File) error {
		w := bufio.NewWriterSize(f, 256<<10)
		if err := write(w); err != nil {
			return err
		}
		return w.Flush()
	})
	return err
}

// staleTemp is how old a temporary file of a state file must be for
// atomicfile to take it for one a killed process left.
const staleTemp = atomicfile.StaleAge
