package gitstore

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// ErrObjectNotFound is returned when an object is not in the repository, for
// example a commit that this clone has not fetched.
var ErrObjectNotFound = errors.New("object not found")

// Signature is who made a commit and when.
type Signature struct {
	Name  string
	Email string
	When  time.Time
}

// CommitInfo is what callers need to know about a commit.
type CommitInfo struct {
	Hash      Hash
	Tree      Hash
	Parents   []Hash
	Author    Signature
	Committer Signature
	Message   string
}

// Subject is the first line of the commit message.
func (c CommitInfo) Subject() string {
	s, _, _ := strings.Cut(strings.TrimLeft(c.Message, "\n"), "\n")
	return s
}

func toHash(h plumbing.Hash) Hash { return Hash(h) }

// HasObject reports whether the object is present in this repository. The
// error is for git failing, not for the object being absent.
func (r *Repo) HasObject(h Hash) (bool, error) {
	_, _, _, err := r.object(h.String())
	if errors.Is(err, ErrObjectNotFound) {
		return false, nil
	}
	return err == nil, err
}

// Commit reads a commit. It returns ErrObjectNotFound when it is absent.
func (r *Repo) Commit(h Hash) (CommitInfo, error) {
	data, err := r.readObject(h, commitType)
	if err != nil {
		return CommitInfo{}, fmt.Errorf("reading commit %s: %w", h, err)
	}
	return parseCommit(h, data)
}

// ReadBlob returns a blob's content.
func (r *Repo) ReadBlob(h Hash) ([]byte, error) {
	data, err := r.readObject(h, blobType)
	if err != nil {
		return nil, fmt.Errorf("reading blob %s: %w", h, err)
	}
	return data, nil
}

// WriteBlob stores data as a blob and returns its name.
func (r *Repo) WriteBlob(data []byte) (Hash, error) {
	return r.writeObject(plumbing.BlobObject, data)
}

func (r *Repo) writeObject(t plumbing.ObjectType, data []byte) (Hash, error) {
	o := r.st.NewEncodedObject()
	o.SetType(t)
	o.SetSize(int64(len(data)))
	w, err := o.Writer()
	if err != nil {
		return ZeroHash, err
	}
	if _, err := w.Write(data); err != nil {
		return ZeroHash, err
	}
	if err := w.Close(); err != nil {
		return ZeroHash, err
	}
	h, err := r.st.SetEncodedObject(o)
	if err != nil {
		return ZeroHash, fmt.Errorf("writing %s object: %w", t, err)
	}
	return toHash(h), nil
}

// WriteCommit stores a commit and returns its name.
func (r *Repo) WriteCommit(tree Hash, parents []Hash, message string, author, committer Signature) (Hash, error) {
	return r.writeObject(plumbing.CommitObject, encodeCommit(tree, parents, message, author, committer))
}

// treeEntry is one entry of a tree object.
type treeEntry struct {
	name string
	dir  bool
	mode uint32 // git's mode bits as read; 0 for entries this package writes
	hash Hash
}

// maxCachedTrees bounds the trees a Repo keeps (trees are immutable, so a
// cached tree is never stale; a write reads the same root and bucket twice).
const maxCachedTrees = 512

// readTree returns a tree's entries in git's order. The zero hash reads as
// an empty tree.
func (r *Repo) readTree(h Hash) ([]treeEntry, error) {
	if h.IsZero() {
		return nil, nil
	}
	r.treeMu.Lock()
	e, ok := r.trees[h]
	r.treeMu.Unlock()
	if ok {
		return e, nil
	}
	data, err := r.readObject(h, treeType)
	if err != nil {
		return nil, fmt.Errorf("reading tree %s: %w", h, err)
	}
	entries, err := parseTree(data)
	r.treeMu.Lock()
	if err == nil && len(r.trees) < maxCachedTrees {
		if r.trees == nil {
			r.trees = map[Hash][]treeEntry{}
		}
		r.trees[h] = entries
	}
	r.treeMu.Unlock()
	return entries, err
}

// writeTree stores a tree with the given entries (in any order) and returns
// its name. Entries are sorted the way git sorts them: directories compare
// as if their name ended in "/".
func (r *Repo) writeTree(entries []treeEntry) (Hash, error) {
	sortEntries(entries)
	var buf bytes.Buffer
	for _, e := range entries {
		switch {
		case e.mode != 0:
			buf.WriteString(strconv.FormatUint(uint64(e.mode), 8) + " ")
		case e.dir:
			buf.WriteString("40000 ")
		default:
			buf.WriteString("100644 ")
		}
		buf.WriteString(e.name)
		buf.WriteByte(0)
		buf.Write(e.hash[:])
	}
	return r.writeObject(plumbing.TreeObject, buf.Bytes())
}

func sortKey(e treeEntry) string {
	if e.dir {
		return e.name + "/"
	}
	return e.name
}

func sortEntries(entries []treeEntry) {
	sort.Slice(entries, func(i, j int) bool { return sortKey(entries[i]) < sortKey(entries[j]) })
}
