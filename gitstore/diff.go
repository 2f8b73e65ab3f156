package gitstore

import "fmt"

// ChangedPaths returns the paths of files that differ between the trees of
// two commits (added, deleted or modified, no rename detection), in git's
// order. Subtrees with the same name on both sides are skipped unread.
func (r *Repo) ChangedPaths(from, to Hash) ([]string, error) {
	a, err := r.Commit(from)
	if err != nil {
		return nil, err
	}
	b, err := r.Commit(to)
	if err != nil {
		return nil, err
	}
	var out []string
	if err := r.diffTrees("", a.Tree, b.Tree, &out); err != nil {
		return nil, fmt.Errorf("comparing %s and %s: %w", from.Short(), to.Short(), err)
	}
	return out, nil
}

func (r *Repo) diffTrees(prefix string, a, b Hash, out *[]string) error {
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
	// Both lists are in git's order; merge them by sort key.
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
			if err := r.listSide(prefix, ea[i], out); err != nil {
				return err
			}
			i++
		case i >= len(ea) || kb < ka:
			if err := r.listSide(prefix, eb[j], out); err != nil {
				return err
			}
			j++
		default:
			x, y := ea[i], eb[j]
			if x.hash != y.hash || x.mode != y.mode {
				if x.dir && y.dir {
					if err := r.diffTrees(prefix+x.name+"/", x.hash, y.hash, out); err != nil {
						return err
					}
				} else {
					*out = append(*out, prefix+x.name)
				}
			}
			i++
			j++
		}
	}
	return nil
}

// listSide lists every file under an entry present on one side only.
func (r *Repo) listSide(prefix string, e treeEntry, out *[]string) error {
	if !e.dir {
		*out = append(*out, prefix+e.name)
		return nil
	}
	return r.diffTrees(prefix+e.name+"/", ZeroHash, e.hash, out)
}
