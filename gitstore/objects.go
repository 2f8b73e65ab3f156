package gitstore

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
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

func toHash(h plumbing.Hash) Hash   { return Hash(h) }
func fromHash(h Hash) plumbing.Hash { return plumbing.Hash(h) }
func translate(err error) error {
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		return ErrObjectNotFound
	}
	return err
}

// HasObject reports whether the object is present in this repository.
func (r *Repo) HasObject(h Hash) bool {
	return r.st.HasEncodedObject(fromHash(h)) == nil
}

// Commit reads a commit. It returns ErrObjectNotFound when it is absent.
func (r *Repo) Commit(h Hash) (CommitInfo, error) {
	c, err := object.GetCommit(r.st, fromHash(h))
	if err != nil {
		return CommitInfo{}, fmt.Errorf("reading commit %s: %w", h, translate(err))
	}
	ci := CommitInfo{
		Hash:      h,
		Tree:      toHash(c.TreeHash),
		Author:    Signature{c.Author.Name, c.Author.Email, c.Author.When},
		Committer: Signature{c.Committer.Name, c.Committer.Email, c.Committer.When},
		Message:   c.Message,
	}
	for _, p := range c.ParentHashes {
		ci.Parents = append(ci.Parents, toHash(p))
	}
	return ci, nil
}

// ReadBlob returns a blob's content.
func (r *Repo) ReadBlob(h Hash) ([]byte, error) {
	o, err := r.st.EncodedObject(plumbing.BlobObject, fromHash(h))
	if err != nil {
		return nil, fmt.Errorf("reading blob %s: %w", h, translate(err))
	}
	rd, err := o.Reader()
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	buf := make([]byte, 0, o.Size())
	w := bytes.NewBuffer(buf)
	if _, err := io.Copy(w, rd); err != nil {
		return nil, fmt.Errorf("reading blob %s: %w", h, err)
	}
	return w.Bytes(), nil
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
	c := &object.Commit{
		Author:    object.Signature{Name: author.Name, Email: author.Email, When: author.When},
		Committer: object.Signature{Name: committer.Name, Email: committer.Email, When: committer.When},
		Message:   message,
		TreeHash:  fromHash(tree),
	}
	for _, p := range parents {
		c.ParentHashes = append(c.ParentHashes, fromHash(p))
	}
	o := r.st.NewEncodedObject()
	if err := c.Encode(o); err != nil {
		return ZeroHash, err
	}
	h, err := r.st.SetEncodedObject(o)
	if err != nil {
		return ZeroHash, fmt.Errorf("writing commit: %w", err)
	}
	return toHash(h), nil
}

// treeEntry is one entry of a tree object.
type treeEntry struct {
	name string
	dir  bool
	mode uint32 // git's mode bits as read; 0 for entries this package writes
	hash Hash
}

// readTree returns a tree's entries in git's order. The zero hash reads as
// an empty tree.
func (r *Repo) readTree(h Hash) ([]treeEntry, error) {
	if h.IsZero() {
		return nil, nil
	}
	t, err := object.GetTree(r.st, fromHash(h))
	if err != nil {
		return nil, fmt.Errorf("reading tree %s: %w", h, translate(err))
	}
	out := make([]treeEntry, len(t.Entries))
	for i, e := range t.Entries {
		out[i] = treeEntry{name: e.Name, dir: e.Mode == filemode.Dir, mode: uint32(e.Mode), hash: toHash(e.Hash)}
	}
	return out, nil
}

// writeTree stores a tree with the given entries (in any order) and returns
// its name. Entries are sorted the way git sorts them: directories compare
// as if their name ended in "/".
func (r *Repo) writeTree(entries []treeEntry) (Hash, error) {
	sortEntries(entries)
	var buf bytes.Buffer
	for _, e := range entries {
		if e.dir {
			buf.WriteString("40000 ")
		} else {
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
