package gitstore

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"context"
	"crypto/sha1"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// ErrObjectNotFound is returned when an object is not in the repository, for
// example a commit that this clone has not fetched.
var ErrObjectNotFound = errors.New("object not found")

// ErrWrongType is returned when an object is there but of another type
// than the one asked for (a note on a blob read as a commit).
var ErrWrongType = errors.New("wrong object type")

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
	// Message is in UTF-8: one whose commit names another encoding
	// (Encoding) is re-encoded by git, as git log shows it.
	Message string
	// Encoding is the commit's encoding header ("" when it has none).
	Encoding string
}

// Subject is the commit's subject as git log's %s gives it: past any blank
// lines, the message's first paragraph, its lines joined by a space, each
// without the spaces, tabs and carriage returns that end it. A NUL ends the
// message, as it does git's reading of it.
func (c CommitInfo) Subject() string { return subjectOf(c.Message) }

func subjectOf[T string | []byte](msg T) string {
	for i := 0; i < len(msg); i++ {
		if msg[i] == 0 {
			msg = msg[:i]
			break
		}
	}
	var b []byte
	for len(msg) > 0 {
		n := 0
		for n < len(msg) && msg[n] != '\n' {
			n++
		}
		line := msg[:n]
		msg = msg[min(n+1, len(msg)):]
		for len(line) > 0 && (line[len(line)-1] == ' ' || line[len(line)-1] == '\t' || line[len(line)-1] == '\r') {
			line = line[:len(line)-1]
		}
		switch {
		case len(line) == 0 && len(b) > 0:
			return string(b) // the paragraph's end
		case len(line) == 0:
			continue // a blank line before the subject
		case len(b) > 0:
			b = append(b, ' ')
		}
		b = append(b, line...)
	}
	return string(b)
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
	ci, err := parseCommit(h, data)
	if err == nil && foreignEncoding(ci.Encoding) {
		err = r.reencode([]Hash{h}, func(_ int, msg string) { ci.Message = msg })
	}
	return ci, err
}

// Commits reads several commits in one exchange with git (the names
// written while the answers are read): infos[i] is hs[i]'s, and errs[i]
// says why there is none: ErrObjectNotFound when it is absent,
// ErrWrongType when it is no commit. The error is for git failing.
func (r *Repo) Commits(hs []Hash) (infos []CommitInfo, errs []error, err error) {
	infos = make([]CommitInfo, len(hs))
	var foreign []Hash
	var at []int
	errs, err = r.readCommits(hs, func(i int, data []byte) (err error) {
		infos[i], err = parseCommit(hs[i], data)
		if err == nil && foreignEncoding(infos[i].Encoding) {
			foreign, at = append(foreign, hs[i]), append(at, i)
		}
		return err
	})
	if err == nil {
		err = r.reencode(foreign, func(j int, msg string) { infos[at[j]].Message = msg })
	}
	return infos, errs, err
}

// readCommits reads the commits hs in one exchange with git, handing each
// one's object to take; errs[i] says why hs[i] is no commit, or what take
// said of it.
func (r *Repo) readCommits(hs []Hash, take func(i int, data []byte) error) (errs []error, err error) {
	errs = make([]error, len(hs))
	names := make([]string, len(hs))
	for i, h := range hs {
		names[i] = h.String()
	}
	err = r.objectsOf(names, func(i int, typ objectType, data []byte, err error) error {
		switch {
		case err != nil:
			errs[i] = fmt.Errorf("reading commit %s: %w", hs[i], err)
		case typ != commitType:
			errs[i] = fmt.Errorf("object %s is a %s, not a commit: %w", hs[i].Short(), typ, ErrWrongType)
		default:
			errs[i] = take(i, data)
		}
		return nil
	})
	return errs, err
}

// CommitSubjects is the subject (Subject) of each commit, or why it has
// none, read in one exchange with git as Commits reads them, keeping no
// more of each than its subject: the log table asks it of every commit it
// lists once, 100,000 at a time.
func (r *Repo) CommitSubjects(hs []Hash) (subjects []string, errs []error, err error) {
	subjects = make([]string, len(hs))
	var foreign []Hash
	var at []int
	errs, err = r.readCommits(hs, func(i int, data []byte) error {
		enc := false
		msg, err := walkCommit(hs[i], data, func(key, val []byte) {
			enc = enc || string(key) == "encoding" && foreignEncoding(string(val))
		})
		if err == nil && enc {
			foreign, at = append(foreign, hs[i]), append(at, i)
		}
		subjects[i] = subjectOf(msg)
		return err
	})
	if err == nil {
		err = r.reencode(foreign, func(j int, msg string) { subjects[at[j]] = subjectOf(msg) })
	}
	return subjects, errs, err
}

// objectTypesInBatch is the most objects a TypeQuery asks the long-lived
// git cat-file --batch for, which sends each object whole; more are asked
// of a git cat-file --batch-check of their own, which reads only where
// each is and what it is (a verify of 100,000 records asks for every
// record's commit), started once the query names one more.
const objectTypesInBatch = 256

// ObjectTypes returns the type of each object ("" when it is absent), read
// in one exchange with git.
func (r *Repo) ObjectTypes(hs []Hash) ([]string, error) {
	q := r.NewTypeQuery()
	for _, h := range hs {
		q.Ask(h)
	}
	_, types, err := q.Types()
	return types, err
}

// batchTypes is ObjectTypes through the Repo's cat-file.
func (r *Repo) batchTypes(hs []Hash) ([]string, error) {
	out := make([]string, len(hs))
	names := make([]string, len(hs))
	for i, h := range hs {
		names[i] = h.String()
	}
	err := r.objectsOf(names, func(i int, typ objectType, _ []byte, err error) error {
		if err == nil {
			out[i] = string(typ)
		} else if !errors.Is(err, ErrObjectNotFound) {
			return err
		}
		return nil
	})
	return out, err
}

// ReadBlob returns a blob's content.
func (r *Repo) ReadBlob(h Hash) ([]byte, error) {
	data, err := r.readObject(h, blobType)
	if err != nil {
		return nil, fmt.Errorf("reading blob %s: %w", h, err)
	}
	return data, nil
}

// ObjectSizes returns the size of each object's content (-1 when it is
// absent), asked of one git cat-file --batch-check: what a caller asks
// before it reads blobs that may be of any size.
func (r *Repo) ObjectSizes(hs []Hash) ([]int64, error) {
	out := make([]int64, len(hs))
	var names bytes.Buffer
	var at []int
	for i, h := range hs {
		if typ, data, ok := r.pendingData(h); ok && typ != "" {
			out[i] = int64(len(data))
			continue
		}
		names.WriteString(h.String())
		names.WriteByte('\n')
		at = append(at, i)
	}
	if len(at) == 0 {
		return out, nil
	}
	text, err := r.git(context.Background(), names.Bytes(), "cat-file", "--batch-check")
	if err != nil {
		return nil, err
	}
	lines := bytes.Split(bytes.TrimSuffix(text, []byte("\n")), []byte("\n"))
	if len(lines) != len(at) {
		return nil, fmt.Errorf("git cat-file --batch-check answered %d of %d objects", len(lines), len(at))
	}
	for j, i := range at {
		typ, err := batchCheckType(lines[j], hs[i])
		if err != nil {
			return nil, err
		}
		if typ == "" {
			out[i] = -1
			continue
		}
		f := bytes.Fields(lines[j])
		if len(f) != 3 {
			return nil, fmt.Errorf("git cat-file --batch-check printed %q", lines[j])
		}
		if out[i], err = strconv.ParseInt(string(f[2]), 10, 64); err != nil {
			return nil, fmt.Errorf("git cat-file --batch-check printed %q", lines[j])
		}
	}
	return out, nil
}

// ReadBlobs returns the contents of several blobs, read in one exchange with
// git; a zero hash reads as nil (a file absent on one side of a diff).
func (r *Repo) ReadBlobs(hashes []Hash) ([][]byte, error) {
	out := make([][]byte, len(hashes))
	var names []string
	var at []int
	for i, h := range hashes {
		if h.IsZero() {
			continue
		}
		if typ, data, ok := r.pendingData(h); ok && typ == blobType {
			out[i] = data
			continue
		}
		names = append(names, h.String())
		at = append(at, i)
	}
	err := r.objectsOf(names, func(i int, typ objectType, data []byte, err error) error {
		if err != nil {
			return fmt.Errorf("reading blob %s: %w", names[i], err)
		}
		if typ != blobType {
			return fmt.Errorf("reading blob %s: it is a %s", names[i], typ)
		}
		out[at[i]] = data
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// maxKeptBlobBytes bounds the blobs ReadBlobsKept keeps.
const maxKeptBlobBytes = 8 << 20

// ReadBlobsKept is ReadBlobs for readers that read the same notes: a
// verify reads the notes that changed since the last one for its
// summaries, and again for its history check. The blobs it read are kept
// (immutable, up to maxKeptBlobBytes) and given to the next reader: what it
// returns is shared, and must not be changed.
func (r *Repo) ReadBlobsKept(hashes []Hash) ([][]byte, error) {
	out := make([][]byte, len(hashes))
	var want []Hash
	var at []int
	r.treeMu.Lock()
	for i, h := range hashes {
		if data, ok := r.blobs[h]; ok {
			out[i] = data
			continue
		}
		want, at = append(want, h), append(at, i)
	}
	r.treeMu.Unlock()
	if len(want) == 0 {
		return out, nil
	}
	read, err := r.ReadBlobs(want)
	if err != nil {
		return nil, err
	}
	r.treeMu.Lock()
	defer r.treeMu.Unlock()
	for k, data := range read {
		out[at[k]] = data
		if h := want[k]; !h.IsZero() && r.blobBytes+len(data) <= maxKeptBlobBytes {
			if r.blobs == nil {
				r.blobs = map[Hash][]byte{}
			}
			if _, ok := r.blobs[h]; !ok {
				r.blobs[h] = data
				r.blobBytes += len(data)
			}
		}
	}
	return out, nil
}

// pendingObject is an object named but not written yet (see Flush).
type pendingObject struct {
	typ  plumbing.ObjectType
	data []byte
}

// addPending names an object and keeps it to be written by Flush: a capture
// names the blobs and trees of the working tree at once, but a cycle found
// unchanged never writes them, and one that is committed writes them while
// its gate runs. Reads here see pending objects.
func (r *Repo) addPending(t plumbing.ObjectType, data []byte) Hash {
	h := objectName(t, data)
	r.pendingMu.Lock()
	if r.pending == nil {
		r.pending = map[Hash]pendingObject{}
	}
	r.pending[h] = pendingObject{t, data}
	r.pendingMu.Unlock()
	return h
}

// pendingData returns a pending object's content.
func (r *Repo) pendingData(h Hash) (objectType, []byte, bool) {
	r.pendingMu.Lock()
	defer r.pendingMu.Unlock()
	o, ok := r.pending[h]
	if !ok {
		return "", nil, false
	}
	return objectType(o.typ.String()), o.data, true
}

// Flush writes the objects named but not written yet, so that git sees
// them (loose, or as one pack: PackWrites): WriteCommit flushes first, and
// a caller flushes before it hands one of their names to git or keeps it
// anywhere that outlives the process.
func (r *Repo) Flush() error {
	r.flushMu.Lock()
	defer r.flushMu.Unlock()
	r.pendingMu.Lock()
	todo := make(map[Hash]pendingObject, len(r.pending))
	for h, o := range r.pending {
		todo[h] = o
	}
	r.pendingMu.Unlock()
	if len(todo) == 0 {
		return nil
	}
	var err error
	if len(todo) >= packMin && r.packWrites.Load() {
		err = r.writePack(todo)
	} else {
		err = r.writeAllLoose(todo)
	}
	if err != nil {
		return err
	}
	r.pendingMu.Lock()
	for h := range todo {
		delete(r.pending, h)
	}
	r.pendingMu.Unlock()
	return nil
}

// writeAllLoose writes objs as loose objects. A loose object is a file
// created: several at once on slow disks.
func (r *Repo) writeAllLoose(objs map[Hash]pendingObject) error {
	var wg sync.WaitGroup
	errs := make(chan error, len(objs))
	sem := make(chan struct{}, 4)
	for _, o := range objs {
		wg.Add(1)
		sem <- struct{}{}
		go func(o pendingObject) {
			defer wg.Done()
			defer func() { <-sem }()
			if _, err := r.writeLoose(o.typ, o.data); err != nil {
				errs <- err
			}
		}(o)
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// PackWrites makes the blobs and trees this Repo writes wait for the next
// Flush (WriteCommit flushes first), as pending objects do, while on is
// true; a Flush of at least packMin objects writes them as one pack. For a
// writer of many objects at once (an import's batch): a loose object is a
// file created, a pack one file for all, as git fast-import writes.
//
// The setting is the Repo's: a writer that turns it on writes alone. Turned
// off, the packs written are no longer kept from a repack (see writePack).
func (r *Repo) PackWrites(on bool) {
	r.packWrites.Store(on)
	if !on {
		r.releasePacks()
	}
}

// packMin is the fewest objects a Flush writes as a pack (PackWrites).
const packMin = 64

// writePack writes objs as one pack, whole objects (no deltas, encoded by
// go-git: pack.go), checked and indexed by git index-pack into the
// repository's objects.
func (r *Repo) writePack(objs map[Hash]pendingObject) error {
	pack, err := encodePack(objs)
	if err != nil {
		return err
	}
	// Kept (a .keep file) until a ref names what it holds: a repack in
	// between would drop its objects as unreachable.
	out, err := r.git(context.Background(), pack, "index-pack", "--stdin", "--keep=git evolve: not yet named by a ref")
	if err != nil {
		return fmt.Errorf("writing a pack of %d objects: %w", len(objs), err)
	}
	if kind, name, ok := strings.Cut(strings.TrimSpace(string(out)), "\t"); ok && kind == "keep" && isHex(name) {
		r.keepMu.Lock()
		r.keeps = append(r.keeps, filepath.Join(r.objectsDir(), "pack", "pack-"+name+".keep"))
		r.keepMu.Unlock()
	}
	return nil
}

// releasePacks removes the .keep files of the packs this Repo wrote, once
// a ref names what they hold (or the writer is done).
func (r *Repo) releasePacks() {
	r.keepMu.Lock()
	keeps := r.keeps
	r.keeps = nil
	r.keepMu.Unlock()
	for _, k := range keeps {
		_ = os.Remove(k)
	}
}

// WriteBlob stores data as a blob and returns its name.
func (r *Repo) WriteBlob(data []byte) (Hash, error) {
	return r.writeObject(plumbing.BlobObject, data)
}

// writeObject stores an object loose (or pending, see PackWrites), in git's
// format: zlib-wrapped "<type> <size>\x00<content>" (stored when small,
// see storedBelow), written to a
// temporary file in its fan-out directory and renamed to its name,
// read-only, as git writes it. An object already there is not written again.
// (go-git's objfile writer compresses at zlib's level 6, not git's 1 for
// loose objects, with no setting, and took 1.2 to 1.5 times as long:
// BenchmarkCodecWriteLoose, docs/benchmarks.md.)
func (r *Repo) writeObject(t plumbing.ObjectType, data []byte) (Hash, error) {
	if t != plumbing.CommitObject && r.packWrites.Load() {
		return r.addPending(t, data), nil
	}
	return r.writeLoose(t, data)
}

// writeLoose is writeObject's loose write.
func (r *Repo) writeLoose(t plumbing.ObjectType, data []byte) (Hash, error) {
	header := t.String() + " " + strconv.Itoa(len(data)) + "\x00"
	h := objectName(t, data)
	hex := h.String()
	dir := filepath.Join(r.objectsDir(), hex[:2])
	path := filepath.Join(dir, hex[2:])
	if _, err := os.Lstat(path); err == nil {
		return h, nil
	}
	level, pool := looseLevel, &zlibWriters
	if len(data) < storedBelow {
		level, pool = zlib.NoCompression, &storedWriters
	}
	var buf bytes.Buffer
	buf.Grow(len(header) + len(data) + 64)
	zw, _ := pool.Get().(*zlib.Writer)
	if zw == nil {
		zw, _ = zlib.NewWriterLevel(nil, level)
	}
	zw.Reset(&buf)
	zw.Write([]byte(header))
	zw.Write(data)
	err := zw.Close()
	pool.Put(zw)
	if err != nil {
		return ZeroHash, fmt.Errorf("writing %s object: %w", t, err)
	}
	if err := r.placeLoose(dir, path, buf.Bytes()); err != nil {
		return ZeroHash, fmt.Errorf("writing %s object: %w", t, err)
	}
	return h, nil
}

// placeLoose writes a compressed loose object as git does: to a temporary
// file in its directory dir (made, with the repository's shared bits,
// when missing), read-only, renamed to path.
func (r *Repo) placeLoose(dir, path string, compressed []byte) error {
	tmp, err := os.CreateTemp(dir, "tmp_obj_")
	if errors.Is(err, fs.ErrNotExist) {
		if err = os.MkdirAll(dir, 0o777); err == nil { // less the umask, as git makes it
			if bits := r.sharedDirBits(); bits != 0 {
				if fi, serr := os.Stat(dir); serr == nil {
					_ = os.Chmod(dir, fi.Mode().Perm()|bits|os.ModeSetgid)
				}
			}
			tmp, err = os.CreateTemp(dir, "tmp_obj_")
		}
	}
	if err != nil {
		return err
	}
	_, err = tmp.Write(compressed)
	if err == nil {
		err = tmp.Chmod(0o444)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// sharedDirBits is the permission core.sharedRepository adds to a new
// directory of objects, as git adds it: group (true, 1) or everybody (all,
// world, 2) may read and write, or the octal mode given; 0 when it is unset,
// false or umask.
func (r *Repo) sharedDirBits() os.FileMode {
	r.sharedOnce.Do(func() {
		shared, _, _ := r.Config("core.sharedrepository")
		switch v := strings.ToLower(shared); v {
		case "", "false", "no", "off", "umask", "0":
		case "group", "true", "yes", "on", "1":
			r.sharedDir = 0o070
		case "all", "world", "everybody", "2":
			r.sharedDir = 0o075
		default:
			if m, err := strconv.ParseUint(v, 8, 32); err == nil {
				// as git does: a directory is searchable where it is readable
				m &= 0o777
				r.sharedDir = os.FileMode(m | (m&0o444)>>2)
			}
		}
	})
	return r.sharedDir
}

// objectName is the name git gives an object of type t with content data.
func objectName(t plumbing.ObjectType, data []byte) Hash {
	sum := objectHasher(t, len(data))
	sum.Write(data)
	var h Hash
	sum.Sum(h[:0])
	return h
}

// objectHasher hashes an object of type t and n bytes as git names it: its
// header is written, the content follows.
func objectHasher(t plumbing.ObjectType, n int) hash.Hash {
	sum := sha1.New()
	sum.Write([]byte(t.String() + " " + strconv.Itoa(n) + "\x00"))
	return sum
}

// zlibWriters and storedWriters keep compressors between writes: making
// one costs more than compressing a small object.
var zlibWriters, storedWriters sync.Pool

// storedBelow is the size under which an object is written loose as zlib
// stored blocks (level 0, git's core.looseCompression=0): a record's note,
// trees and commit. Compressing a tree of 7 KB, mostly object names, saves
// a fifth of its bytes and costs 150 µs; seven of them were a millisecond
// of a record (docs/benchmarks.md, "Loose objects stored"). Larger objects
// (a captured file) are compressed at looseLevel.
const storedBelow = 32 << 10

// looseLevel is the zlib level loose objects are written at: git's own
// default for them (core.looseCompression unset: 1, the fastest). The
// setting is not read: that would cost a git process where a record
// otherwise needs none, git reads an object of any level, and a repack
// compresses them again at the pack's level.
const looseLevel = zlib.BestSpeed

// ObjectsHere says whether every object of hs is in the object store now,
// as a git started now finds it, replace refs not followed (a replace ref
// answers for an object that is gone): one git cat-file --batch-check. An
// object a partial clone's filter left out is not here.
func (r *Repo) ObjectsHere(hs []Hash) (bool, error) {
	if len(hs) == 0 {
		return true, nil
	}
	var in bytes.Buffer
	for _, h := range hs {
		in.WriteString(h.String())
		in.WriteByte('\n')
	}
	out, err := r.git(context.Background(), in.Bytes(), "--no-replace-objects", "cat-file", "--batch-check=%(objecttype)")
	if err != nil {
		return false, err
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(hs) {
		return false, fmt.Errorf("git cat-file --batch-check answered %d lines for %d objects", len(lines), len(hs))
	}
	for _, line := range lines {
		switch line {
		case "commit", "tree", "blob", "tag":
		default:
			return false, nil
		}
	}
	return true, nil
}

// objectsDir is where objects are written: GIT_OBJECT_DIRECTORY when it is
// set, as git reads it, else the common git directory's objects.
func (r *Repo) objectsDir() string {
	if d := os.Getenv("GIT_OBJECT_DIRECTORY"); d != "" {
		if filepath.IsAbs(d) {
			return d
		}
		return filepath.Join(r.dir, d)
	}
	return filepath.Join(r.commonDir, "objects")
}

// WriteCommit stores a commit and returns its name, once the objects
// pending (Flush) are written: a commit never names what git cannot read.
func (r *Repo) WriteCommit(tree Hash, parents []Hash, message string, author, committer Signature) (Hash, error) {
	if err := r.Flush(); err != nil {
		return ZeroHash, err
	}
	return r.writeObject(plumbing.CommitObject, encodeCommit(tree, parents, message, author, committer))
}

// treeEntry is one entry of a tree object.
type treeEntry struct {
	name string
	dir  bool
	mode uint32 // git's mode bits as read; 0 for entries this package writes
	hash Hash
}

// maxCachedTreeEntries bounds the entries of the trees a Repo keeps, 25–30
// MB at about 100 bytes an entry with its name (trees are immutable, so a
// cached tree is never stale; the first kept stay, none is evicted). A write
// reads the same root and bucket twice; a verify diffs the same notes
// trees for its summaries and for what is no note since, and commit by
// commit for the ledger's history, and each tree of a notes history is a
// delta that git rebuilds at every read.
const maxCachedTreeEntries = 1 << 18

// cachedTree is the tree h when the Repo keeps it.
func (r *Repo) cachedTree(h Hash) ([]treeEntry, bool) {
	r.treeMu.Lock()
	defer r.treeMu.Unlock()
	e, ok := r.trees[h]
	return e, ok
}

// cacheTree keeps the tree h while the cache has room.
func (r *Repo) cacheTree(h Hash, entries []treeEntry) {
	r.treeMu.Lock()
	defer r.treeMu.Unlock()
	if _, ok := r.trees[h]; ok || r.treeEntries+len(entries)+1 > maxCachedTreeEntries {
		return
	}
	if r.trees == nil {
		r.trees = map[Hash][]treeEntry{}
	}
	r.trees[h] = entries
	r.treeEntries += len(entries) + 1
}

// readTree returns a tree's entries in git's order. The zero hash reads as
// an empty tree.
func (r *Repo) readTree(h Hash) ([]treeEntry, error) {
	if h.IsZero() {
		return nil, nil
	}
	if e, ok := r.cachedTree(h); ok {
		return e, nil
	}
	data, err := r.readObject(h, treeType)
	if err != nil {
		return nil, fmt.Errorf("reading tree %s: %w", h, err)
	}
	entries, err := parseTree(data)
	if err == nil {
		r.cacheTree(h, entries)
	}
	return entries, err
}

// prefetchTrees reads the trees of hashes that are not cached yet, in one
// exchange with git, and caches them: a walk that is about to read many
// subtrees pays for one round trip, not one each.
func (r *Repo) prefetchTrees(hashes []Hash) error {
	var names []string
	var want []Hash
	r.treeMu.Lock()
	for _, h := range hashes {
		if _, ok := r.trees[h]; !ok && !h.IsZero() {
			names = append(names, h.String())
			want = append(want, h)
		}
	}
	r.treeMu.Unlock()
	if len(names) < 2 {
		return nil // one round trip either way
	}
	return r.objectsOf(names, func(i int, typ objectType, data []byte, err error) error {
		if err != nil || typ != treeType {
			return nil // the read that needs it reports it
		}
		if entries, err := parseTree(data); err == nil {
			r.cacheTree(want[i], entries)
		}
		return nil
	})
}

// writeTree stores a tree with the given entries (in any order) and returns
// its name. Entries are sorted the way git sorts them: directories compare
// as if their name ended in "/".
func (r *Repo) writeTree(entries []treeEntry) (Hash, error) {
	h, data := r.encodeTree(entries)
	if _, err := r.writeObject(plumbing.TreeObject, data); err != nil {
		return ZeroHash, err
	}
	return h, nil
}

// pendingTree names a tree and keeps it to be written by Flush.
func (r *Repo) pendingTree(entries []treeEntry) Hash {
	_, data := r.encodeTree(entries)
	return r.addPending(plumbing.TreeObject, data)
}

// pendingBlob names a blob and keeps it to be written by Flush.
func (r *Repo) pendingBlob(data []byte) Hash { return r.addPending(plumbing.BlobObject, data) }

// encodeTree sorts entries, encodes them in git's tree format, names the
// tree and keeps it as a read would give it, for the diffs and the reads
// that often follow a write.
func (r *Repo) encodeTree(entries []treeEntry) (Hash, []byte) {
	sortEntries(entries)
	data := encodeTreeEntries(entries)
	h := objectName(plumbing.TreeObject, data)
	if parsed, err := parseTree(data); err == nil {
		r.cacheTree(h, parsed)
	}
	return h, data
}

// encodeTreeEntries is entries, sorted, in git's tree format.
func encodeTreeEntries(entries []treeEntry) []byte {
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
	return buf.Bytes()
}

func sortKey(e treeEntry) string {
	if e.dir {
		return e.name + "/"
	}
	return e.name
}

// sortEntries sorts entries in git's order, keeping the order of those
// with one name (a tree another tool wrote may hold a name twice): a tree
// named twice from the same entries has one name.
func sortEntries(entries []treeEntry) {
	slices.SortStableFunc(entries, compareKeys)
}

// EmptyTree writes the tree with no entries and returns its name.
func (r *Repo) EmptyTree() (Hash, error) { return r.writeTree(nil) }

// TypeQuery asks the types of objects named one at a time, while the
// asker does other work (a first verify names each note's commit as it
// reads the ledger). Up to objectTypesInBatch names are asked of the Repo's
// cat-file when Types is called; past that, of a git cat-file
// --batch-check of its own, started then, which answers as it reads: a
// goroutine reads the answers, and Types returns them in the order asked.
type TypeQuery struct {
	r      *Repo
	asked  []Hash
	p      *pipedGit // nil until more than objectTypesInBatch are asked
	start  error     // why p could not be started
	w      *bufio.Writer
	read   chan struct{} // closed when the answers are read
	answer [][]byte      // each answer line, in order
	err    error         // what ended the reading otherwise
	wrote  error
}

// NewTypeQuery makes a TypeQuery; it starts no git yet.
func (r *Repo) NewTypeQuery() *TypeQuery { return &TypeQuery{r: r} }

// startChecks starts the git cat-file --batch-check and asks it what was
// asked so far.
func (q *TypeQuery) startChecks() {
	p, err := q.r.startPiped(context.Background(), true, "cat-file", "--batch-check", "--buffer")
	if err != nil {
		q.start = err
		return
	}
	q.p, q.w, q.read = p, bufio.NewWriterSize(p.stdin, 64<<10), make(chan struct{})
	go func() {
		defer close(q.read)
		rd := bufio.NewReaderSize(p.stdout, 64<<10)
		for {
			line, err := rd.ReadBytes('\n')
			if len(line) > 0 && line[len(line)-1] == '\n' {
				q.answer = append(q.answer, line[:len(line)-1])
			}
			if err == io.EOF {
				return
			}
			if err != nil {
				q.err = err
				return
			}
		}
	}()
	for _, h := range q.asked {
		q.write(h)
	}
}

func (q *TypeQuery) write(h Hash) {
	if q.wrote != nil {
		return
	}
	var line [41]byte
	hexEncode(line[:40], h)
	line[40] = '\n'
	if _, err := q.w.Write(line[:]); err != nil {
		q.wrote = err
	}
}

// Ask names one more object. Answers wait in git until its buffer fills or
// the names end.
func (q *TypeQuery) Ask(h Hash) {
	q.asked = append(q.asked, h)
	switch {
	case q.p != nil:
		q.write(h)
	case q.start == nil && len(q.asked) > objectTypesInBatch:
		q.startChecks()
	}
}

// Types ends the names and returns each object asked and its type ("" when
// it is absent), in the order asked.
func (q *TypeQuery) Types() ([]Hash, []string, error) {
	if q.start != nil {
		return nil, nil, q.start
	}
	if q.p == nil {
		types, err := q.r.batchTypes(q.asked)
		if err != nil {
			return nil, nil, err
		}
		return q.asked, types, nil
	}
	err := q.w.Flush()
	q.p.stdin.Close()
	<-q.read
	if werr := q.p.wait(); err == nil {
		err = werr
	}
	if err == nil {
		err = q.wrote
	}
	if err == nil {
		err = q.err
	}
	if err != nil {
		return nil, nil, err
	}
	if len(q.answer) != len(q.asked) {
		return nil, nil, fmt.Errorf("git cat-file --batch-check answered %d of %d objects", len(q.answer), len(q.asked))
	}
	types := make([]string, len(q.asked))
	for i, h := range q.asked {
		t, err := batchCheckType(q.answer[i], h)
		if err != nil {
			return nil, nil, err
		}
		types[i] = t
	}
	return q.asked, types, nil
}

// Close ends the query without its answers.
func (q *TypeQuery) Close() {
	if q.p == nil {
		return
	}
	q.p.stdin.Close()
	q.p.kill()
	<-q.read
}

// batchCheckType reads git cat-file --batch-check's answer for h: its
// type, "" when it is missing.
func batchCheckType(line []byte, h Hash) (string, error) {
	name, info, _ := bytes.Cut(line, []byte(" "))
	if string(name) != h.String() {
		return "", fmt.Errorf("git cat-file --batch-check printed %q for %s", line, h)
	}
	if string(info) == "missing" {
		return "", nil
	}
	typ, _, ok := bytes.Cut(info, []byte(" "))
	if !ok {
		return "", fmt.Errorf("git cat-file --batch-check printed %q", line)
	}
	switch string(typ) { // one copy of each name, not one a line
	case string(commitType):
		return string(commitType), nil
	case string(treeType):
		return string(treeType), nil
	case string(blobType):
		return string(blobType), nil
	}
	return string(typ), nil
}
