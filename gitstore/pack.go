package gitstore

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// encodePack is objs as a version 2 pack of whole objects, in the order of
// their names, written by go-git's pack encoder, which measures as fast as
// the encoder written here before it (BenchmarkCodecPack,
// docs/benchmarks.md). It compresses at zlib's default level, git's own
// when pack.compression and core.compression are unset: the encoder takes
// no other, and the level changes only the pack's size, not what git reads
// from it.
func encodePack(objs map[Hash]pendingObject) ([]byte, error) {
	names := make([]plumbing.Hash, 0, len(objs))
	for h := range objs {
		names = append(names, plumbing.Hash(h))
	}
	slices.SortFunc(names, func(a, b plumbing.Hash) int { return bytes.Compare(a[:], b[:]) })
	var buf bytes.Buffer
	if _, err := packfile.NewEncoder(&buf, pendingStore(objs), false).Encode(names, 0); err != nil {
		return nil, fmt.Errorf("writing a pack: %w", err)
	}
	return buf.Bytes(), nil
}

// pendingStore is the objects of a pack to write, as go-git's encoder
// reads them: only EncodedObject is asked (a pack of whole objects looks
// for no deltas), and nothing is copied.
type pendingStore map[Hash]pendingObject

var errPendingStore = errors.New("the objects of a pack to write are read only")

func (s pendingStore) EncodedObject(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	o, ok := s[Hash(h)]
	if !ok || t != plumbing.AnyObject && t != o.typ {
		return nil, plumbing.ErrObjectNotFound
	}
	return pendingEncoded{Hash(h), o}, nil
}

func (s pendingStore) NewEncodedObject() plumbing.EncodedObject { return &plumbing.MemoryObject{} }

func (s pendingStore) SetEncodedObject(plumbing.EncodedObject) (plumbing.Hash, error) {
	return plumbing.ZeroHash, errPendingStore
}

func (s pendingStore) IterEncodedObjects(plumbing.ObjectType) (storer.EncodedObjectIter, error) {
	return nil, errPendingStore
}

func (s pendingStore) HasEncodedObject(h plumbing.Hash) error {
	if _, ok := s[Hash(h)]; !ok {
		return plumbing.ErrObjectNotFound
	}
	return nil
}

func (s pendingStore) EncodedObjectSize(h plumbing.Hash) (int64, error) {
	o, ok := s[Hash(h)]
	if !ok {
		return 0, plumbing.ErrObjectNotFound
	}
	return int64(len(o.data)), nil
}

func (s pendingStore) AddAlternate(string) error { return errPendingStore }

// pendingEncoded is a pending object as go-git's encoder reads it.
type pendingEncoded struct {
	h Hash
	o pendingObject
}

func (e pendingEncoded) Hash() plumbing.Hash             { return plumbing.Hash(e.h) }
func (e pendingEncoded) Type() plumbing.ObjectType       { return e.o.typ }
func (e pendingEncoded) SetType(plumbing.ObjectType)     {}
func (e pendingEncoded) Size() int64                     { return int64(len(e.o.data)) }
func (e pendingEncoded) SetSize(int64)                   {}
func (e pendingEncoded) Writer() (io.WriteCloser, error) { return nil, errPendingStore }
func (e pendingEncoded) Reader() (io.ReadCloser, error) {
	return io.NopCloser(bytes.NewReader(e.o.data)), nil
}
