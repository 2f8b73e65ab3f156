package gitstore

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
)

// walkListed calls fn with each note of the snapshot and its blob, in path
// order, as walk does, from one git ls-tree -r of the notes tree: git reads
// the tens of thousands of fanout trees of a large ledger itself, where
// walk has each sent through the cat-file pipe and parsed here. A path is
// a note exactly when walk would take it for one: each directory on it a
// fanout level, and the entry at its end a note (classify).
// What it finds at a note's path that is no note is kept for the Repo's
// process, so that BadNotes of the same tree (a first verify asks both)
// lists it no second time.
func (n *Notes) walkListed(ctx context.Context, fn func(obj, blob Hash) error) error {
	bad := []Hash{}
	err := n.eachListed(ctx, func(kind int, obj, blob Hash) error {
		if kind != entryNote {
			bad = append(bad, obj)
			return nil
		}
		return fn(obj, blob)
	})
	if err == nil && !n.tree.IsZero() {
		n.r.keepListedBad(n.tree, bad)
	}
	return err
}

// keepListedBad keeps what a listing of tree found at a note's path that
// is no note, for BadNotes of the same tree.
func (r *Repo) keepListedBad(tree Hash, bad []Hash) {
	r.treeMu.Lock()
	defer r.treeMu.Unlock()
	if r.listedBad == nil {
		r.listedBad = map[Hash][]Hash{}
	}
	r.listedBad[tree] = bad
}

// badListed is BadNotes from one git ls-tree -r (see walkListed), or from
// what a listing of the same tree kept.
func (n *Notes) badListed() ([]Hash, error) {
	if _, err := n.root(); err != nil {
		return nil, err
	}
	n.r.treeMu.Lock()
	kept, ok := n.r.listedBad[n.tree]
	n.r.treeMu.Unlock()
	if ok {
		return slices.Clone(kept), nil
	}
	var out []Hash
	err := n.eachListed(context.Background(), func(kind int, obj, _ Hash) error {
		if kind == entryBadNote {
			out = append(out, obj)
		}
		return nil
	})
	return out, err
}

// eachListed calls fn with each entry of the notes tree at a note's path
// (what classify makes of it: a note or a bad note), in path order, from
// git ls-tree -r.
func (n *Notes) eachListed(ctx context.Context, fn func(kind int, obj, blob Hash) error) error {
	tree, err := n.root()
	if err != nil || tree.IsZero() {
		return err
	}
	args, none, err := n.listArgs(tree)
	if err != nil || none {
		return err
	}
	p, err := n.r.startPiped(ctx, false, args...)
	if err != nil {
		return err
	}
	if err := eachListedEntry(bufio.NewReaderSize(p.stdout, 256<<10), fn); err != nil {
		p.kill()
		return err
	}
	return p.wait()
}

// rootLimits says what git is to list or export of the notes tree when
// its root holds directories that are no fanout level (a ledger's index),
// which hold no note and would cost as much as the notes: excluded names
// them (for a pathspec's exclude), paths the root's other entries (for git
// ls-tree, which takes no exclude), as literal pathspecs. Both are empty, and everything is
// listed, when there is no such directory or when the root holds too many
// entries to name on a command line; none says the root holds nothing
// else.
func (n *Notes) rootLimits(root Hash) (paths, excluded []string, none bool, err error) {
	entries, err := n.r.readTree(root)
	if err != nil || len(entries) > 4096 {
		return nil, nil, false, err
	}
	size := 0
	for _, e := range entries {
		if size += len(e.name); len(e.name) > 1024 || size > 256<<10 {
			return nil, nil, false, nil // a name, or names, too long to pass
		}
		if kind, _ := classify("", e); kind == entryOther && e.dir && validNonNote(e.name) {
			excluded = append(excluded, e.name)
		} else {
			paths = append(paths, ":(literal,top)"+e.name)
		}
	}
	if len(excluded) == 0 {
		return nil, nil, false, nil
	}
	return paths, excluded, len(paths) == 0, nil
}

// listArgs is git ls-tree's command line for the notes tree root (see
// rootLimits); none when there is nothing to list.
func (n *Notes) listArgs(root Hash) (args []string, none bool, err error) {
	args = boundedMaps("ls-tree", "-r", "-z", "--full-tree", "--end-of-options", root.String())
	paths, _, none, err := n.rootLimits(root)
	if err != nil || none {
		return nil, none, err
	}
	if len(paths) > 0 {
		args = append(append(args, "--"), paths...)
	}
	return args, false, nil
}

// eachListedEntry reads git ls-tree -r -z output ("<mode> <type>
// <object>\t<path>" records ended by NUL) and calls fn with each entry at a
// note's path.
func eachListedEntry(rd *bufio.Reader, fn func(kind int, obj, blob Hash) error) error {
	return eachListedRecord(rd, func(mode uint32, _ string, blob Hash, path string) error {
		if kind, obj := pathKind(mode, path); kind == entryNote || kind == entryBadNote {
			return fn(kind, obj, blob)
		}
		return nil
	})
}

// eachListedRecord reads git ls-tree -r -z output and calls fn with each
// record's mode, type, object and path. A path too long for the reader is
// no note's (a tree from elsewhere may hold anything): passed by, as the
// walk passes it.
func eachListedRecord(rd *bufio.Reader, fn func(mode uint32, typ string, oid Hash, path string) error) error {
	for {
		rec, err := rd.ReadSlice(0)
		if err == bufio.ErrBufferFull {
			for err == bufio.ErrBufferFull {
				_, err = rd.ReadSlice(0)
			}
			if err != nil {
				return fmt.Errorf("git ls-tree ended in the middle of a record")
			}
			continue
		}
		if len(rec) == 0 && err != nil {
			return nil // the end
		}
		if err != nil {
			return fmt.Errorf("git ls-tree ended in the middle of a record")
		}
		mode, typ, oid, path, perr := listedRecord(rec[:len(rec)-1])
		if perr != nil {
			return perr
		}
		if err := fn(mode, typ, oid, path); err != nil {
			return err
		}
	}
}

// listedEntry reads one record of git ls-tree -r: what classify makes of
// the entry at its path, each directory on the way a level of the tree.
func listedEntry(rec []byte) (kind int, obj, blob Hash, err error) {
	mode, _, blob, path, err := listedRecord(rec)
	if err != nil {
		return entryOther, obj, blob, err
	}
	kind, obj = pathKind(mode, path)
	return kind, obj, blob, nil
}

// listedRecord reads one record of git ls-tree -r: "<mode> <type>
// <object>\t<path>".
func listedRecord(rec []byte) (mode uint32, typ string, oid Hash, path string, err error) {
	meta, p, found := bytes.Cut(rec, []byte{'\t'})
	f := bytes.Fields(meta)
	if !found || len(f) != 3 {
		return 0, "", oid, "", fmt.Errorf("unexpected git ls-tree output %q", rec)
	}
	mode, ok := parseMode(f[0])
	if !ok {
		return 0, "", oid, "", fmt.Errorf("unexpected git ls-tree mode %q", f[0])
	}
	if oid, err = ParseHash(string(f[2])); err != nil {
		return 0, "", oid, "", fmt.Errorf("unexpected git ls-tree object %q", f[2])
	}
	return mode, string(f[1]), oid, string(p), nil
}

// pathKind is what classify makes of the entry of mode at path, each
// directory on the way a level of the tree: a note or a bad note, and
// whose; entryOther for anything else.
func pathKind(mode uint32, path string) (kind int, obj Hash) {
	prefix := ""
	rest := path
	for {
		dir, after, more := strings.Cut(rest, "/")
		if !more {
			break
		}
		k, name := classify(prefix, treeEntry{name: dir, dir: true, mode: 0o40000})
		if k != entryFanout {
			return entryOther, obj
		}
		prefix += name // (lower case: classify's)
		rest = after
	}
	kind, name := classify(prefix, treeEntry{name: rest, mode: mode})
	if kind != entryNote && kind != entryBadNote {
		return entryOther, obj
	}
	obj, err := ParseHash(name)
	if err != nil {
		return entryOther, obj
	}
	return kind, obj
}
