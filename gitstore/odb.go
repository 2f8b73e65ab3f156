package gitstore

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// A process that reads a few objects (a record reads a commit, a few
// trees and two notes) reads them here, from the loose objects and the
// packs, instead of starting git cat-file (about 10 ms of CPU for git's
// start here, where these reads take well under one). Only answers are
// taken from here: every object read is checked against its name (its
// SHA-1 over git's header and content), and anything else (an object not
// found, a pack this does not read, a replace ref, a damaged file) is
// asked of git cat-file, which has the last word on what is missing or
// broken. The reads are bounded (nativeBudget, and nativeBatch objects an
// exchange): a process that reads many objects reads them through git.
// The objects rebuilt along a chain of deltas are kept (bases), as git's
// delta base cache keeps them: the trees of a notes history are chains of
// about 50 deltas, and the notes trees of a commit and of its parent are
// read along one chain once.
// TestNativeReadsAgreeWithCatFile compares every object of repositories
// with loose objects, packs and deltas with git's answers.
// go-git's idxfile and packfile would do this by decoding each index
// whole before the first read (3.3 ms for a pack of 2,000 objects, 8.9 ms
// for 40,000, where this reads an object in 0.1 to 0.4 ms), and its
// objfile reads loose objects 1.1 to 1.8 times slower: BenchmarkCodecRead,
// docs/benchmarks.md.

// nativeBudget is how many zlib streams a process inflates here (an
// object, or each delta of its chain) before it leaves every further read
// to git cat-file.
const nativeBudget = 512

// nativeMaxSize is the largest object read here.
const nativeMaxSize = 1 << 20

// maxDeltaChain is the longest chain of deltas followed here (git's
// default depth is 50).
const maxDeltaChain = 64

// odb reads objects in-process. Its zero value is ready; it is opened at
// its first read.
type odb struct {
	mu       sync.Mutex
	opened   bool
	off      bool // replace refs, or the budget spent: every read is git's
	dir      string
	packs    []*packIndex
	inflates int
	deltas   [2]int        // offset and named-base deltas applied (the tests ask)
	zr       io.ReadCloser // a zlib reader kept between reads
	br       *bufio.Reader
	// bases keeps the objects rebuilt on the way along chains of deltas,
	// by pack and offset, as git's delta base cache does: the trees of
	// successive notes commits are deltas along one chain, read once.
	bases     map[baseKey]baseObject
	baseBytes int
}

type baseKey struct {
	pack *packIndex
	off  int64
}

type baseObject struct {
	typ  objectType
	data []byte
}

// maxBaseBytes bounds the objects bases keeps.
const maxBaseBytes = 16 << 20

// packIndex is one pack and its version 2 index, read as needed.
type packIndex struct {
	idx, pack *os.File
	count     uint32
	fanout    [256]uint32
	bad       bool // unreadable: skipped
}

// ReadsMany says that this process is about to read many objects (a walk
// of the notes history: its commits, trees and notes): every read is
// git cat-file's from then on, whose delta base cache serves a long chain
// of trees, where reads in-process would only spend their budget before
// cat-file is started anyway. cat-file starts at once, beside what the
// caller asks of git first (the walk's git rev-list): its start is off
// the walk's path.
func (r *Repo) ReadsMany() {
	o := &r.native
	o.mu.Lock()
	defer o.mu.Unlock()
	o.opened, o.off = true, true
	go r.batch() // after Close, none starts (Close)
}

// nativeObject reads object h in-process: ok is false when it was not
// read here (see above), and the caller asks git.

func (r *Repo) nativeObject(h Hash) (objectType, []byte, bool) {
	o := &r.native
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.opened {
		if o.off = r.replaced(); !o.off {
			o.open(r.objectsDir())
		}
		o.opened = true
	}
	if o.off {
		return "", nil, false
	}
	return o.read(h)
}

// open opens the packs of the objects directory dir.
func (o *odb) open(dir string) {
	o.opened = true
	o.dir = dir
	o.packs = openPacks(filepath.Join(dir, "pack"))
}

// read reads h from the loose objects and the packs, checked against its
// name; ok is false when it was not read here.
func (o *odb) read(h Hash) (objectType, []byte, bool) {
	typ, data, ok := o.loose(h)
	if !ok {
		typ, data, ok = o.packed(h)
		// bases keeps what packed read: the caller gets its own copy
		data = bytes.Clone(data)
	}
	if o.inflates >= nativeBudget {
		o.off = true
	}
	if !ok || len(data) > nativeMaxSize {
		return "", nil, false
	}
	if nameOf(typ, data) != h {
		return "", nil, false
	}
	return typ, data, true
}

// closeNative closes the packs the in-process reads opened.
func (r *Repo) closeNative() {
	o := &r.native
	o.mu.Lock()
	defer o.mu.Unlock()
	o.close()
}

// close closes the packs; every later read is git's.
func (o *odb) close() {
	for _, p := range o.packs {
		p.idx.Close()
		p.pack.Close()
	}
	o.packs, o.off, o.opened = nil, true, true
}

// replaced reports whether git could read an object other than the one
// named: a replace ref exists (or their place is moved), and git is not
// told to ignore them.
func (r *Repo) replaced() bool {
	if os.Getenv("GIT_NO_REPLACE_OBJECTS") != "" {
		return false
	}
	if os.Getenv("GIT_REPLACE_REF_BASE") != "" {
		return true
	}
	if entries, err := os.ReadDir(filepath.Join(r.commonDir, "refs", "replace")); err == nil && len(entries) > 0 || err != nil && !os.IsNotExist(err) {
		return true
	}
	packed, err := os.ReadFile(filepath.Join(r.commonDir, "packed-refs"))
	return err != nil && !os.IsNotExist(err) || bytes.Contains(packed, []byte(" refs/replace/"))
}

// openPacks opens the packs of dir whose index is version 2.
func openPacks(dir string) []*packIndex {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var packs []*packIndex
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".idx")
		if !ok || !strings.HasPrefix(name, "pack-") {
			continue
		}
		p := &packIndex{}
		var err error
		if p.idx, err = os.Open(filepath.Join(dir, e.Name())); err != nil {
			continue
		}
		if p.pack, err = os.Open(filepath.Join(dir, name+".pack")); err != nil {
			p.idx.Close()
			continue
		}
		var head [8 + 256*4]byte
		if _, err := p.idx.ReadAt(head[:], 0); err != nil || string(head[:8]) != "\377tOc\x00\x00\x00\x02" {
			p.idx.Close()
			p.pack.Close()
			continue
		}
		for i := range p.fanout {
			p.fanout[i] = binary.BigEndian.Uint32(head[8+4*i:])
		}
		p.count = p.fanout[255]
		packs = append(packs, p)
	}
	return packs
}

// loose reads h from its loose file.
func (o *odb) loose(h Hash) (objectType, []byte, bool) {
	hex := h.String()
	f, err := os.Open(filepath.Join(o.dir, hex[:2], hex[2:]))
	if err != nil {
		return "", nil, false
	}
	defer f.Close()
	o.inflates++
	if _, ok := o.inflater(f); !ok {
		return "", nil, false
	}
	head, err := o.br.ReadSlice(0)
	if err != nil {
		return "", nil, false
	}
	t, size, ok := strings.Cut(string(head[:len(head)-1]), " ")
	n, err := strconv.Atoi(size)
	if !ok || err != nil || n < 0 || n > nativeMaxSize {
		return "", nil, false
	}
	switch typ := objectType(t); typ {
	case blobType, treeType, commitType, "tag":
		data := make([]byte, n)
		if _, err := io.ReadFull(o.br, data); err != nil {
			return "", nil, false
		}
		return typ, data, true
	}
	return "", nil, false
}

// inflater makes the kept zlib reader read the stream at the start of
// src (its bufio.Reader, o.br, gives what it inflates).
func (o *odb) inflater(src io.Reader) (io.Reader, bool) {
	in := bufio.NewReaderSize(src, 4096)
	if o.zr == nil {
		zr, err := zlib.NewReader(in)
		if err != nil {
			return nil, false
		}
		o.zr = zr
	} else if err := o.zr.(zlib.Resetter).Reset(in, nil); err != nil {
		return nil, false
	}
	if o.br == nil {
		o.br = bufio.NewReaderSize(o.zr, 8192)
	} else {
		o.br.Reset(o.zr)
	}
	return o.zr, true
}

// packed reads h from the first pack that holds it.
func (o *odb) packed(h Hash) (objectType, []byte, bool) {
	for _, p := range o.packs {
		if p.bad {
			continue
		}
		off, found, ok := p.find(h)
		if !ok {
			p.bad = true
			continue
		}
		if found {
			return o.packedAt(p, off, 0)
		}
	}
	return "", nil, false
}

// find looks h up in the pack's index: its offset in the pack, whether it
// is there, and ok false when the index cannot be read.
func (p *packIndex) find(h Hash) (off int64, found, ok bool) {
	lo := uint32(0)
	if h[0] > 0 {
		lo = p.fanout[h[0]-1]
	}
	hi := p.fanout[h[0]]
	if hi < lo || hi > p.count {
		return 0, false, false
	}
	const names = 8 + 256*4
	var name [20]byte
	for lo < hi {
		mid := lo + (hi-lo)/2
		if _, err := p.idx.ReadAt(name[:], names+int64(mid)*20); err != nil {
			return 0, false, false
		}
		switch c := bytes.Compare(name[:], h[:]); {
		case c == 0:
			var b [8]byte
			at := names + int64(p.count)*24 + int64(mid)*4
			if _, err := p.idx.ReadAt(b[:4], at); err != nil {
				return 0, false, false
			}
			v := binary.BigEndian.Uint32(b[:4])
			if v&0x80000000 == 0 {
				return int64(v), true, true
			}
			large := names + int64(p.count)*28 + int64(v&0x7fffffff)*8
			if _, err := p.idx.ReadAt(b[:], large); err != nil {
				return 0, false, false
			}
			return int64(binary.BigEndian.Uint64(b[:])), true, true
		case c < 0:
			lo = mid + 1
		default:
			hi = mid
		}
	}
	return 0, false, true
}

// Pack entry types (git's object_type).
const (
	packCommit   = 1
	packTree     = 2
	packBlob     = 3
	packTag      = 4
	packOfsDelta = 6
	packRefDelta = 7
)

// packedAt reads the object at off in p, following its deltas.
func (o *odb) packedAt(p *packIndex, off int64, depth int) (objectType, []byte, bool) {
	if b, ok := o.bases[baseKey{p, off}]; ok {
		return b.typ, b.data, true
	}
	typ, data, ok := o.readPacked(p, off, depth)
	if ok && o.baseBytes+len(data) <= maxBaseBytes {
		// a base, or one to be: the next object of its chain starts from it
		if o.bases == nil {
			o.bases = map[baseKey]baseObject{}
		}
		o.bases[baseKey{p, off}] = baseObject{typ, data}
		o.baseBytes += len(data)
	}
	return typ, data, ok
}

// readPacked is packedAt without the kept bases.
func (o *odb) readPacked(p *packIndex, off int64, depth int) (objectType, []byte, bool) {
	if depth > maxDeltaChain || o.inflates >= nativeBudget {
		return "", nil, false
	}
	var head [32]byte
	n, err := p.pack.ReadAt(head[:], off)
	if n == 0 || err != nil && !errors.Is(err, io.EOF) {
		return "", nil, false
	}
	b := head[:n]
	kind := int(b[0]>>4) & 7
	size := int64(b[0] & 15)
	shift := uint(4)
	i := 1
	for b[i-1]&0x80 != 0 {
		if i >= len(b) || shift > 50 {
			return "", nil, false
		}
		size |= int64(b[i]&0x7f) << shift
		shift += 7
		i++
	}
	if size > nativeMaxSize {
		return "", nil, false
	}
	var baseType objectType
	var base []byte
	switch kind {
	case packOfsDelta:
		if i >= len(b) {
			return "", nil, false
		}
		c := b[i]
		i++
		rel := int64(c & 0x7f)
		for c&0x80 != 0 {
			if i >= len(b) || rel > 1<<50 {
				return "", nil, false
			}
			c = b[i]
			i++
			rel = (rel+1)<<7 | int64(c&0x7f)
		}
		if rel <= 0 || rel > off {
			return "", nil, false
		}
		var ok bool
		if baseType, base, ok = o.packedAt(p, off-rel, depth+1); !ok {
			return "", nil, false
		}
	case packRefDelta:
		if i+20 > len(b) {
			return "", nil, false
		}
		var bh Hash
		copy(bh[:], b[i:i+20])
		i += 20
		at, found, ok := p.find(bh)
		if !ok || !found {
			return "", nil, false
		}
		if baseType, base, ok = o.packedAt(p, at, depth+1); !ok {
			return "", nil, false
		}
	case packCommit, packTree, packBlob, packTag:
	default:
		return "", nil, false
	}
	o.inflates++
	if _, ok := o.inflater(io.NewSectionReader(p.pack, off+int64(i), 1<<62)); !ok {
		return "", nil, false
	}
	data := make([]byte, size)
	if _, err := io.ReadFull(o.br, data); err != nil {
		return "", nil, false
	}
	switch kind {
	case packCommit:
		return commitType, data, true
	case packTree:
		return treeType, data, true
	case packBlob:
		return blobType, data, true
	case packTag:
		return "tag", data, true
	}
	o.deltas[kind-packOfsDelta]++
	out, ok := applyDelta(base, data)
	return baseType, out, ok
}

// applyDelta rebuilds an object from its base and a delta in git's
// format: the two sizes, then copies from the base and inserted bytes.
func applyDelta(base, delta []byte) ([]byte, bool) {
	varint := func() (int, bool) {
		v, shift := 0, uint(0)
		for {
			if len(delta) == 0 || shift > 42 {
				return 0, false
			}
			c := delta[0]
			delta = delta[1:]
			v |= int(c&0x7f) << shift
			shift += 7
			if c&0x80 == 0 {
				return v, true
			}
		}
	}
	srcSize, ok1 := varint()
	dstSize, ok2 := varint()
	if !ok1 || !ok2 || srcSize != len(base) || dstSize > nativeMaxSize {
		return nil, false
	}
	out := make([]byte, 0, dstSize)
	for len(delta) > 0 {
		op := delta[0]
		delta = delta[1:]
		switch {
		case op&0x80 != 0:
			var off, n int
			for k := 0; k < 4; k++ {
				if op&(1<<k) != 0 {
					if len(delta) == 0 {
						return nil, false
					}
					off |= int(delta[0]) << (8 * k)
					delta = delta[1:]
				}
			}
			for k := 0; k < 3; k++ {
				if op&(0x10<<k) != 0 {
					if len(delta) == 0 {
						return nil, false
					}
					n |= int(delta[0]) << (8 * k)
					delta = delta[1:]
				}
			}
			if n == 0 {
				n = 0x10000
			}
			if off+n > len(base) || len(out)+n > dstSize {
				return nil, false
			}
			out = append(out, base[off:off+n]...)
		case op != 0:
			n := int(op)
			if n > len(delta) || len(out)+n > dstSize {
				return nil, false
			}
			out = append(out, delta[:n]...)
			delta = delta[n:]
		default:
			return nil, false // reserved
		}
	}
	if len(out) != dstSize {
		return nil, false
	}
	return out, true
}

// nameOf is the name git gives an object of type typ with content data.
func nameOf(typ objectType, data []byte) Hash {
	sum := sha1.New()
	sum.Write([]byte(string(typ) + " " + strconv.Itoa(len(data)) + "\x00"))
	sum.Write(data)
	var h Hash
	sum.Sum(h[:0])
	return h
}
