// Package journal is the local-only record of cycles that delivered nothing
// (idle and unchanged cycles): a JSON Lines file under the git directory,
// shared by all worktrees of the repository, never committed and never
// pushed. Streak and numbering logic reads it beside the ledger.
package journal

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/git-evolve/git-evolve/ledger"
)

// Journal is the journal file of one repository.
type Journal struct {
	path string
}

// At returns the journal kept in dir (git-evolve's state directory inside
// the common git directory).
func At(dir string) *Journal { return &Journal{path: filepath.Join(dir, "journal.jsonl")} }

// Path is the journal file's path.
func (j *Journal) Path() string { return j.path }

// Read returns the journal's records; lines that do not parse are returned
// as LineErrors and kept in the file. A missing journal is empty.
func (j *Journal) Read() ([]ledger.Record, []*ledger.LineError, error) {
	data, err := j.Bytes()
	if err != nil {
		return nil, nil, err
	}
	recs, bad := ledger.ParseLines(data)
	return recs, bad, nil
}

// Bytes returns the journal's content (nil when there is none).
func (j *Journal) Bytes() ([]byte, error) {
	data, err := os.ReadFile(j.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the journal: %w", err)
	}
	return data, nil
}

// Append adds records to the journal, each as one canonical line, with one
// write so a crash leaves whole lines. Callers serialise appends with the
// ledger lock.
func (j *Journal) Append(recs ...ledger.Record) error {
	if len(recs) == 0 {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(j.path), 0o755); err != nil {
		return fmt.Errorf("creating the journal's directory: %w", err)
	}
	var buf []byte
	for i := range recs {
		buf = append(buf, recs[i].Marshal()...)
		buf = append(buf, '\n')
	}
	f, err := os.OpenFile(j.path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("opening the journal: %w", err)
	}
	if err := ensureNewline(f); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(buf); err != nil {
		f.Close()
		return fmt.Errorf("writing the journal: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("writing the journal: %w", err)
	}
	return f.Close()
}

// ensureNewline terminates a last line that a crash or an editor left
// without a newline, so the next record starts on a line of its own.
func ensureNewline(f *os.File) error {
	fi, err := f.Stat()
	if err != nil || fi.Size() == 0 {
		return err
	}
	last := make([]byte, 1)
	if _, err := f.ReadAt(last, fi.Size()-1); err != nil {
		return fmt.Errorf("reading the journal: %w", err)
	}
	if last[0] != '\n' {
		_, err = f.Write([]byte{'\n'})
	}
	return err
}
