package gitstore

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// What the object store holds, read from its directories: which
// directories git reads objects from, their loose objects and their
// packs. verify keeps these names beside what it read, and uses what it
// kept only while they are all still here.

// LooseObjects lists the loose objects of the object directories dirs
// (ObjectDirs), sorted. ok is false when a directory could not be read.
func LooseObjects(dirs []string) (out []Hash, ok bool) {
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return nil, false
		}
		for _, e := range entries {
			name := e.Name()
			if len(name) != 2 || !e.IsDir() || !isHex(name) {
				continue
			}
			files, err := os.ReadDir(filepath.Join(dir, name))
			if err != nil {
				return nil, false
			}
			for _, f := range files {
				if h, err := ParseHash(name + f.Name()); err == nil && len(f.Name()) == 38 {
					out = append(out, h)
				}
			}
		}
	}
	slices.SortFunc(out, Hash.Compare)
	return slices.Compact(out), true
}

// ObjectDirs are the object directories git reads: the repository's (or
// GIT_OBJECT_DIRECTORY's), those GIT_ALTERNATE_OBJECT_DIRECTORIES names,
// and those the alternates files name, theirs too, as deep as git follows
// them (5). They are read from the file system, not asked of git: a
// verify with nothing changed starts no git process.
func (r *Repo) ObjectDirs() []string {
	objects := filepath.Clean(r.objectsDir())
	dirs := []string{objects}
	seen := map[string]bool{objects: true}
	add := func(dir string) {
		if dir = filepath.Clean(dir); !seen[dir] {
			seen[dir] = true
			dirs = append(dirs, dir)
		}
	}
	for _, dir := range filepath.SplitList(os.Getenv("GIT_ALTERNATE_OBJECT_DIRECTORIES")) {
		if dir != "" {
			add(dir)
		}
	}
	for depth, from, to := 0, 0, len(dirs); depth < 6 && from < to; depth, from, to = depth+1, to, len(dirs) {
		for _, dir := range dirs[from:to] {
			data, err := os.ReadFile(filepath.Join(dir, "info", "alternates"))
			if err != nil {
				continue
			}
			for _, line := range strings.Split(string(data), "\n") {
				line = strings.TrimSpace(line)
				if line == "" || strings.HasPrefix(line, "#") {
					continue
				}
				if !filepath.IsAbs(line) {
					line = filepath.Join(dir, line)
				}
				add(line)
			}
		}
	}
	return dirs
}

// LooseHere says whether loose object h is in one of dirs.
func LooseHere(dirs []string, h Hash) bool {
	name := h.String()
	for _, dir := range dirs {
		if _, err := os.Stat(filepath.Join(dir, name[:2], name[2:])); err == nil {
			return true
		}
	}
	return false
}

// PackNames are the names of the packs git reads objects from (those of
// the repository and of the object directories it borrows from), sorted: a
// pack with its index (git reads no object of a pack whose index is gone,
// and removes the index first).
func PackNames(dirs []string) []string {
	var packs []string
	for _, dir := range dirs {
		found, _ := filepath.Glob(filepath.Join(dir, "pack", "*.pack"))
		for _, p := range found {
			if fi, err := os.Stat(strings.TrimSuffix(p, ".pack") + ".idx"); err == nil && fi.Mode().IsRegular() {
				packs = append(packs, filepath.Base(p))
			}
		}
	}
	slices.Sort(packs)
	return slices.Compact(packs)
}
