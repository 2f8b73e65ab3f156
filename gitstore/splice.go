package gitstore

import (
	"fmt"
	"strings"
)

// SpliceTree returns a tree that is base with its root entries named in
// names taken from from instead: replaced by from's entry of that name, or
// removed when from has none. Only the root tree is written; every other
// tree and blob is shared with base and from.
func (r *Repo) SpliceTree(base, from Hash, names ...string) (Hash, error) {
	be, err := r.readTree(base)
	if err != nil {
		return ZeroHash, err
	}
	fe, err := r.readTree(from)
	if err != nil {
		return ZeroHash, err
	}
	take := map[string]bool{}
	for _, n := range names {
		take[n] = true
	}
	out := make([]treeEntry, 0, len(be)+len(names))
	for _, e := range be {
		if !take[e.name] {
			out = append(out, e)
		}
	}
	for _, e := range fe {
		if take[e.name] {
			out = append(out, e)
		}
	}
	h, err := r.writeTree(out)
	if err != nil {
		return ZeroHash, fmt.Errorf("writing the spliced tree: %w", err)
	}
	return h, nil
}

// TreeFile returns the blob at path (slash-separated, from the root) in a
// tree or in a commit's tree; ok is false when there is no file there.
func (r *Repo) TreeFile(treeOrCommit Hash, path string) (blob Hash, ok bool, err error) {
	e, ok, err := r.treeEntryAt(treeOrCommit, path)
	return e.hash, ok, err
}

// treeEntryAt returns the entry of the file at path in a tree or in a
// commit's tree; ok is false when there is no file there.
func (r *Repo) treeEntryAt(treeOrCommit Hash, path string) (treeEntry, bool, error) {
	tree, err := r.treeOf(treeOrCommit)
	if err != nil {
		return treeEntry{}, false, err
	}
	parts := strings.Split(path, "/")
	for i, name := range parts {
		entries, err := r.readTree(tree)
		if err != nil {
			return treeEntry{}, false, err
		}
		found := false
		for _, e := range entries {
			if e.name != name {
				continue
			}
			if last := i == len(parts)-1; last != e.dir {
				if last {
					return e, true, nil
				}
				tree, found = e.hash, true
			}
			break
		}
		if !found {
			return treeEntry{}, false, nil
		}
	}
	return treeEntry{}, false, nil
}
