package gitstore

import "fmt"

// FileChange is a file that differs between two trees: its blob on each
// side (zero where it is absent) and its mode.
type FileChange struct {
	Path     string
	Old, New Hash
	OldMode  uint32 // 0 where absent
	NewMode  uint32
}

// ChangedPaths returns the paths of files that differ between the trees of
// two commits (added, deleted or modified, no rename detection), in git's
// order. Subtrees with the same name on both sides are skipped unread.
func (r *Repo) ChangedPaths(from, to Hash) ([]string, error) {
	changes, err := r.ChangedFiles(from, to)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(changes))
	for i, c := range changes {
		out[i] = c.Path
	}
	return out, nil
}

// ChangedFiles returns the files that differ between two commits or trees
// (added, deleted or modified, no rename detection), in git's order, with
// their blobs. Subtrees with the same name on both sides are skipped unread.
func (r *Repo) ChangedFiles(from, to Hash) ([]FileChange, error) {
	a, err := r.treeOf(from)
	if err != nil {
		return nil, err
	}
	b, err := r.treeOf(to)
	if err != nil {
		return nil, err
	}
	var out []FileChange
	if err := r.diffTrees("", a, b, &out); err != nil {
		return nil, fmt.Errorf("comparing %s and %s: %w", from.Short(), to.Short(), err)
	}
	return out, nil
}

// treeOf returns the tree a commit names, or h itself when it is a tree.
func (r *Repo) treeOf(h Hash) (Hash, error) {
	_, cached := r.cachedTree(h) // the cache holds trees only
	if typ, _, pending := r.pendingData(h); cached || pending && typ == treeType {
		return h, nil
	}
	_, typ, data, err := r.object(h.String())
	if err != nil {
		return ZeroHash, err
	}
	switch typ {
	case treeType:
		return h, nil
	case commitType:
		ci, err := parseCommit(h, data)
		return ci.Tree, err
	}
	return ZeroHash, fmt.Errorf("%s is a %s, not a commit or a tree", h.Short(), typ)
}

func fileMode(e treeEntry) uint32 {
	if e.mode == 0 {
		return 0o100644
	}
	return e.mode
}

func (r *Repo) diffTrees(prefix string, a, b Hash, out *[]FileChange) error {
	if a == b {
		return nil
	}
	ea, err := r.readTree(a)
	if err != nil {
		return err
	}
	eb, err := r.readTree(b)
	if err != nil {
		return err
	}
	// Both lists are in git's order; merge them by sort key. Files are
	// listed in place; directories are walked after, their trees read in
	// one exchange.
	type step struct {
		at       int // where its files go in out
		name     string
		from, to Hash
	}
	var steps []step
	var prefetch []Hash
	sub := func(name string, from, to Hash) {
		steps = append(steps, step{len(*out), name, from, to})
		prefetch = append(prefetch, from, to)
	}
	i, j := 0, 0
	for i < len(ea) || j < len(eb) {
		var ka, kb string
		if i < len(ea) {
			ka = sortKey(ea[i])
		}
		if j < len(eb) {
			kb = sortKey(eb[j])
		}
		switch {
		case j >= len(eb) || (i < len(ea) && ka < kb):
			if x := ea[i]; x.dir {
				sub(x.name, x.hash, ZeroHash)
			} else {
				*out = append(*out, FileChange{Path: prefix + x.name, Old: x.hash, OldMode: fileMode(x)})
			}
			i++
		case i >= len(ea) || kb < ka:
			if y := eb[j]; y.dir {
				sub(y.name, ZeroHash, y.hash)
			} else {
				*out = append(*out, FileChange{Path: prefix + y.name, New: y.hash, NewMode: fileMode(y)})
			}
			j++
		default:
			x, y := ea[i], eb[j]
			if x.hash != y.hash || x.mode != y.mode {
				if x.dir && y.dir {
					sub(x.name, x.hash, y.hash)
				} else {
					*out = append(*out, FileChange{Path: prefix + x.name, Old: x.hash, New: y.hash, OldMode: fileMode(x), NewMode: fileMode(y)})
				}
			}
			i++
			j++
		}
	}
	if len(steps) == 0 {
		return nil
	}
	if err := r.prefetchTrees(prefetch); err != nil {
		return err
	}
	// Walk the directories, then put their files where the directories
	// stood, so that the list stays in git's order.
	files := *out
	var merged []FileChange
	last := 0
	for _, s := range steps {
		var inner []FileChange
		if err := r.diffTrees(prefix+s.name+"/", s.from, s.to, &inner); err != nil {
			return err
		}
		merged = append(append(merged, files[last:s.at]...), inner...)
		last = s.at
	}
	*out = append(merged, files[last:]...)
	return nil
}

// Numstat returns git's line counts of the files that differ from one
// commit or tree to another, as git diff-tree --numstat gives them: git's
// own diff, attributes honoured (a file git sees as binary, by its content
// or by -diff, counts no lines). The objects must be written (Flush).
func (r *Repo) Numstat(from, to Hash) (map[string]LineDelta, error) {
	out, err := startGit(r.dir, r.env, false, "diff-tree", "-r", "-z", "--numstat", "--no-renames", from.String(), to.String(), "--").finish(nil)
	if err != nil {
		return nil, err
	}
	stats := map[string]LineDelta{}
	for _, d := range parseNumstat(out) {
		stats[d.Path] = d
	}
	return stats, nil
}
