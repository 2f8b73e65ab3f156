package store

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/internal/atomicfile"
)

// savesPath lists the saved work this clone keeps under refs/evolve/ (the
// work of regressed, aborted and interrupted cycles, a base the cycle
// changed): a line "<ref> <commit>" each time one is made or moves, "<ref>
// -" when it is let go. Verify reports a save that is gone.
func (l *Ledger) savesPath() string { return filepath.Join(l.stateDir, "saves") }

// NoteSave adds to the saves list that ref now holds commit (saved work
// made or moved; the caller moved the ref).
func (l *Ledger) NoteSave(ref, commit string) error {
	return atomicfile.AppendLine(l.savesPath(), ref+" "+commit)
}

// Saves are the saved work this clone made and still keeps, by ref, each
// with the commit it last held.
func (l *Ledger) Saves() (map[string]gitstore.Hash, error) {
	f, err := os.Open(l.savesPath())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]gitstore.Hash{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		ref, val, ok := strings.Cut(sc.Text(), " ")
		if !ok || !strings.HasPrefix(ref, "refs/evolve/") {
			continue
		}
		if val == "-" {
			delete(out, ref)
			continue
		}
		if h, err := gitstore.ParseHash(val); err == nil {
			out[ref] = h
		}
	}
	return out, sc.Err()
}

// ForgetSave lets go of a saved work: verify no longer asks for it.
func (l *Ledger) ForgetSave(ref string) error {
	saves, err := l.Saves()
	if err != nil {
		return err
	}
	if _, ok := saves[ref]; !ok {
		return fmt.Errorf("%s is no saved work this clone keeps", ref)
	}
	return atomicfile.AppendLine(l.savesPath(), ref+" -")
}
