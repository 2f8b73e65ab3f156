package loop

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/git-evolve/git-evolve/cycle"
)

// What the agent's turn can change outside the git directory that reaches
// the judgment, beside the working tree (the cycle's work, judged):
//
//   - the judging checkout's index: a forged one (entries marked
//     unchanged, stat data made to match other content) would have the
//     next switch leave files of another content in place; one the turn
//     changed is dropped, and the next judgment writes the checkout whole;
//   - the dependency directories a judgment borrows from the working tree
//     (cycle.LinkedDirs: node_modules, .venv, venv): an installed test
//     runner rewritten to say pass; named, since an agent may rightly
//     install a dependency;
//   - the user's configuration that git and the test tools read in the
//     checkout (global git config: attributes, filters, hooks; go env
//     -w's file: GOFLAGS=-overlay; npm's, yarn's, cargo's and pip's
//     configuration): named, never put back, since the user may be
//     editing them meanwhile.
//
// Only the judging checkout's index is undone; the rest is named for the
// record's tampering, as the guard of the git directory names what it
// puts back.

// maxWalk bounds the entries of a dependency directory fingerprinted.
const maxWalk = 500_000

// outsideTurn is what outside the git directory the driver holds through
// an agent's turn.
type outsideTurn struct {
	index     string // the judging checkout's index, "" when there is none
	indexWas  fileState
	top       string
	deps      map[string]depPrint
	userFiles map[string]fileState
}

// depPrint is a dependency directory's fingerprint: every entry's path,
// mode, size and time, digested.
type depPrint struct {
	exists bool
	sum    [32]byte
	big    bool // past maxWalk entries: not all of it seen
}

// watchOutside takes what outsideTurn holds, before the turn.
func watchOutside(l *cycle.Ledger, top string) *outsideTurn {
	o := &outsideTurn{top: top, deps: map[string]depPrint{}, userFiles: map[string]fileState{}}
	if p, ok := l.JudgeIndex(); ok {
		o.index = p
		o.indexWas, _ = readState(p, new(int64)) // compared by identity, size and time
	}
	for _, name := range cycle.LinkedDirs {
		o.deps[name] = fingerprint(filepath.Join(top, name))
	}
	for _, p := range userConfigFiles() {
		if st, err := readState(p, nil); err == nil {
			o.userFiles[p] = st
		}
	}
	return o
}

// check says what the turn changed, and drops a judging checkout's index
// it changed.
func (o *outsideTurn) check() []string {
	var marks []string
	if o.index != "" {
		now, err := readState(o.index, new(int64))
		if err == nil && (!o.indexWas.same(now) || (now.info != nil && o.indexWas.info != nil && !os.SameFile(now.info, o.indexWas.info))) {
			done := "it was dropped, and the next judgment writes the checkout whole"
			if err := os.Remove(o.index); err != nil && !errors.Is(err, fs.ErrNotExist) {
				done = "it could not be dropped: " + err.Error()
			}
			marks = append(marks, "the judging checkout's index was changed during the agent's turn; "+done)
		}
	}
	for _, name := range cycle.LinkedDirs {
		if was, now := o.deps[name], fingerprint(filepath.Join(o.top, name)); was != now {
			what := "changed"
			switch {
			case !was.exists:
				what = "made"
			case !now.exists:
				what = "removed"
			}
			marks = append(marks, fmt.Sprintf("%s: %s during the agent's turn (an install, or an edit of what is installed); the judgment used it as the agent left it", name, what))
		}
	}
	for _, p := range userConfigFiles() {
		was := o.userFiles[p]
		if now, err := readState(p, nil); err == nil && !was.same(now) {
			marks = append(marks, fmt.Sprintf("%s: changed during the agent's turn; it configures git or the tests in the judging checkout, and was read as the agent left it", displayHome(p)))
		}
	}
	return marks
}

// fingerprint digests a directory's entries (not following links), within
// maxWalk.
func fingerprint(dir string) depPrint {
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() {
		return depPrint{}
	}
	h := sha256.New()
	n := 0
	big := false
	var buf [8]byte
	_ = filepath.WalkDir(dir, func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if n++; n > maxWalk {
			big = true
			return filepath.SkipAll
		}
		info, err := de.Info()
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		h.Write([]byte(rel))
		h.Write([]byte{0})
		binary.LittleEndian.PutUint64(buf[:], uint64(info.Mode()))
		h.Write(buf[:])
		binary.LittleEndian.PutUint64(buf[:], uint64(info.Size()))
		h.Write(buf[:])
		binary.LittleEndian.PutUint64(buf[:], uint64(info.ModTime().UnixNano()))
		h.Write(buf[:])
		return nil
	})
	d := depPrint{exists: true, big: big}
	copy(d.sum[:], h.Sum(nil))
	return d
}

// userConfigFiles are the user's configuration files that git and the
// test tools read in a judging checkout.
func userConfigFiles() []string {
	home, _ := os.UserHomeDir()
	cfg, _ := os.UserConfigDir()
	var out []string
	add := func(p string) {
		if p != "" && filepath.IsAbs(p) {
			out = append(out, p)
		}
	}
	if p := os.Getenv("GIT_CONFIG_GLOBAL"); p != "" {
		add(p)
	} else {
		add(filepath.Join(home, ".gitconfig"))
		if x := os.Getenv("XDG_CONFIG_HOME"); x != "" {
			add(filepath.Join(x, "git", "config"))
		} else if home != "" {
			add(filepath.Join(home, ".config", "git", "config"))
		}
	}
	if p := os.Getenv("GOENV"); p != "" && p != "off" {
		add(p)
	} else if cfg != "" {
		add(filepath.Join(cfg, "go", "env"))
	}
	cargo := os.Getenv("CARGO_HOME")
	if cargo == "" && home != "" {
		cargo = filepath.Join(home, ".cargo")
	}
	if cargo != "" {
		add(filepath.Join(cargo, "config"))
		add(filepath.Join(cargo, "config.toml"))
	}
	if home != "" {
		for _, name := range []string{".npmrc", ".yarnrc", ".yarnrc.yml", ".pip/pip.conf", ".pydistutils.cfg"} {
			add(filepath.Join(home, name))
		}
	}
	if cfg != "" {
		add(filepath.Join(cfg, "pip", "pip.conf"))
	}
	return out
}

// displayHome is a path with the home directory as ~.
func displayHome(p string) string {
	if home, err := os.UserHomeDir(); err == nil && home != "" {
		if rel, err := filepath.Rel(home, p); err == nil && filepath.IsLocal(rel) {
			return "~/" + filepath.ToSlash(rel)
		}
	}
	return p
}
