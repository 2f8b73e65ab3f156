package gitstore

// The hand-written object codecs beside go-git's plumbing, doing the same
// job on the same data (docs/benchmarks.md, "Hand-written codecs beside
// go-git's"):
//
//	go test ./gitstore -run '^$' -bench 'BenchmarkCodec' -benchmem -count 6
//
// ours is this package's hand-written code; gogit is go-git's plumbing
// (idxfile, packfile, objfile, object) doing that part alone;
// gogit-storage is go-git's filesystem storage, which is what it takes to
// use go-git for the whole of a read or a write. The pack is go-git's
// now: hand is the encoder written here before it.

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
	"github.com/go-git/go-git/v5/plumbing/format/objfile"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/go-git/go-git/v5/storage/memory"
)

// codecRepo is a bare repository for the read benchmarks, and the objects
// it holds, newest first (git rev-list --objects --all).
type codecRepo struct {
	dir     string
	objects []Hash
}

var (
	codecOnce  sync.Once
	codecRepos map[string]codecRepo // small, large: one pack; loose
	codecErr   error
)

// codecHistory is a fast-import stream of n commits, each changing one line
// of one of 50 files in 10 directories: once packed, the files and trees
// are chains of deltas, as a notes history's are.
func codecHistory(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		msg := fmt.Sprintf("cycle %d: a change\n\nEvolve-Cycle: %d\nEvolve-Result: improved\n", i, i)
		path := fmt.Sprintf("d%d/f%d.txt", i%10, i%50)
		var content strings.Builder
		for j := 0; j < 40; j++ {
			fmt.Fprintf(&content, "line %d of %s\n", j, path)
		}
		fmt.Fprintf(&content, "change %d\n", i)
		fmt.Fprintf(&b, "commit refs/heads/main\ncommitter C <c@example.com> %d +0000\ndata %d\n%s", 1700000000+i, len(msg), msg)
		fmt.Fprintf(&b, "M 100644 inline %s\ndata %d\n%s\n", path, content.Len(), content.String())
	}
	return b.String()
}

// makeCodecRepo makes a bare repository of n commits (four objects each),
// repacked into one pack with deltas as git gc makes it.
func makeCodecRepo(dir string, n int) (codecRepo, error) {
	if _, err := runGitCmd(testRoot, "", nil, "init", "-q", "--bare", dir); err != nil {
		return codecRepo{}, err
	}
	if _, err := runGitCmd(dir, codecHistory(n), nil, "fast-import", "--quiet"); err != nil {
		return codecRepo{}, err
	}
	if _, err := runGitCmd(dir, "", nil, "repack", "-adfq", "--depth=50", "--window=10"); err != nil {
		return codecRepo{}, err
	}
	return listCodecRepo(dir)
}

func listCodecRepo(dir string) (codecRepo, error) {
	out, err := runGitCmd(dir, "", nil, "rev-list", "--objects", "--all")
	if err != nil {
		return codecRepo{}, err
	}
	r := codecRepo{dir: dir}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		h, err := ParseHash(strings.Fields(line)[0])
		if err != nil {
			return codecRepo{}, err
		}
		r.objects = append(r.objects, h)
	}
	return r, nil
}

// codecFixtures makes the read benchmarks' repositories once a process:
// a pack of 2,000 objects, one of 40,000, and the 2,000 loose.
func codecFixtures(b *testing.B) map[string]codecRepo {
	codecOnce.Do(func() {
		root := filepath.Join(testRoot, "codec")
		small, err := makeCodecRepo(filepath.Join(root, "small"), 500)
		if err != nil {
			codecErr = err
			return
		}
		large, err := makeCodecRepo(filepath.Join(root, "large"), 10000)
		if err != nil {
			codecErr = err
			return
		}
		loose := filepath.Join(root, "loose")
		if _, err := runGitCmd(testRoot, "", nil, "init", "-q", "--bare", loose); err != nil {
			codecErr = err
			return
		}
		packs, _ := filepath.Glob(filepath.Join(small.dir, "objects", "pack", "*.pack"))
		pack, err := os.ReadFile(packs[0])
		if err != nil {
			codecErr = err
			return
		}
		if _, err := runGitCmd(loose, string(pack), nil, "unpack-objects", "-q"); err != nil {
			codecErr = err
			return
		}
		codecRepos = map[string]codecRepo{"small": small, "large": large, "loose": {loose, small.objects}}
	})
	if codecErr != nil {
		b.Fatal(codecErr)
	}
	return codecRepos
}

// spread is k of hs, evenly spaced: commits, trees and files, recent ones
// and old ones (deltas at the ends of chains).
func spread(hs []Hash, k int) []Hash {
	out := make([]Hash, k)
	for i := range out {
		out[i] = hs[(2*i+1)*len(hs)/(2*k)]
	}
	return out
}

// readOurs is a process's first reads: the packs opened, then the objects.
// The zlib reader o keeps is kept from one call to the next, as go-git
// keeps its own in a pool: each way makes one a process.
func readOurs(o *odb, objects string, hs []Hash) error {
	o.open(objects)
	defer func() {
		o.close()
		o.bases, o.baseBytes, o.inflates = nil, 0, 0
	}()
	for _, h := range hs {
		if _, _, ok := o.read(h); !ok {
			return fmt.Errorf("%s not read", h)
		}
	}
	return nil
}

// readGoGit is readOurs through go-git's plumbing: the indexes decoded by
// idxfile, the objects read by objfile (loose) and packfile, each checked
// against its name as readOurs checks it (objfile's reader hashes what it
// reads).
func readGoGit(objects string, hs []Hash) error {
	packDir := filepath.Join(objects, "pack")
	entries, _ := os.ReadDir(packDir)
	packFS := osfs.New(packDir)
	var packs []*packfile.Packfile
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".idx")
		if !ok {
			continue
		}
		f, err := os.Open(filepath.Join(packDir, e.Name()))
		if err != nil {
			return err
		}
		idx := idxfile.NewMemoryIndex()
		err = idxfile.NewDecoder(f).Decode(idx)
		f.Close()
		if err != nil {
			return err
		}
		pf, err := packFS.Open(name + ".pack")
		if err != nil {
			return err
		}
		p := packfile.NewPackfile(idx, nil, pf, 0)
		defer p.Close()
		packs = append(packs, p)
	}
	for _, h := range hs {
		ok, err := looseGoGit(objects, h)
		if err != nil {
			return err
		}
		for _, p := range packs {
			if ok {
				break
			}
			obj, err := p.Get(plumbing.Hash(h))
			if errors.Is(err, plumbing.ErrObjectNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			if err := readNamed(obj, h); err != nil {
				return err
			}
			ok = true
		}
		if !ok {
			return fmt.Errorf("%s not read", h)
		}
	}
	return nil
}

func looseGoGit(objects string, h Hash) (bool, error) {
	hex := h.String()
	f, err := os.Open(filepath.Join(objects, hex[:2], hex[2:]))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	r, err := objfile.NewReader(f)
	if err != nil {
		return false, err
	}
	defer r.Close()
	_, size, err := r.Header()
	if err != nil {
		return false, err
	}
	data := make([]byte, size)
	if _, err := io.ReadFull(r, data); err != nil {
		return false, err
	}
	if Hash(r.Hash()) != h {
		return false, fmt.Errorf("%s read as another object", h)
	}
	return true, nil
}

// readGoGitStorage is readOurs through go-git's filesystem storage, as
// git.Open would read (without git.Open's refusals).
func readGoGitStorage(gitDir string, hs []Hash) error {
	st := filesystem.NewStorage(osfs.New(gitDir), cache.NewObjectLRUDefault())
	defer st.Close()
	for _, h := range hs {
		obj, err := st.EncodedObject(plumbing.AnyObject, plumbing.Hash(h))
		if err != nil {
			return fmt.Errorf("%s: %w", h, err)
		}
		if err := readNamed(obj, h); err != nil {
			return err
		}
	}
	return nil
}

// Reading k objects as a process does once: the packs opened (go-git
// decodes each index whole), then the objects, deltas rebuilt.
func BenchmarkCodecRead(b *testing.B) {
	repos := codecFixtures(b)
	for _, kind := range []string{"loose", "small", "large"} {
		repo := repos[kind]
		objects := filepath.Join(repo.dir, "objects")
		for _, k := range []int{1, 10, 64} {
			hs := spread(repo.objects, k)
			var o odb
			for _, way := range []struct {
				name string
				read func() error
			}{
				{"ours", func() error { return readOurs(&o, objects, hs) }},
				{"gogit", func() error { return readGoGit(objects, hs) }},
				{"gogit-storage", func() error { return readGoGitStorage(repo.dir, hs) }},
			} {
				b.Run(fmt.Sprintf("%s/k=%d/%s", kind, k, way.name), func(b *testing.B) {
					b.ReportAllocs()
					for b.Loop() {
						if err := way.read(); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}

// A cycle's commit (a parent, a message with trailers), a notes tree's
// fanout level (256 directories) and a level of 100 notes.
func codecParseInputs() (commit, fanout, notes []byte) {
	when := time.Unix(1700000000, 0).In(time.FixedZone("", 7200))
	who := Signature{Name: "A U Thor", Email: "author@example.com", When: when}
	msg := "goals: the slowest check runs in half the time\n\nThe check ran every test twice.\n\n" +
		"Evolve-Cycle: 42\nEvolve-Id: 01J9ZK6W4Q3V8Y2N5R7T0X1B3C\nEvolve-Target: check-speed\nEvolve-Result: improved\n"
	commit = encodeCommit(fakeObj(1), []Hash{fakeObj(2)}, msg, who, who)
	var f, n bytes.Buffer
	for i := 0; i < 256; i++ {
		h := fakeObj(i)
		f.WriteString("40000 " + fanoutNames[i] + "\x00")
		f.Write(h[:])
	}
	for i := 0; i < 100; i++ {
		h := fakeObj(1000 + i)
		n.WriteString("100644 " + h.String()[2:] + "\x00")
		n.Write(h[:])
	}
	return commit, f.Bytes(), n.Bytes()
}

// goGitCommit is parseCommit through go-git's object.Commit, to the same
// CommitInfo.
func goGitCommit(h Hash, o plumbing.EncodedObject) (CommitInfo, error) {
	var c object.Commit
	if err := c.Decode(o); err != nil {
		return CommitInfo{}, err
	}
	enc := string(c.Encoding)
	if enc == "UTF-8" {
		enc = "" // go-git's reading of no encoding header
	}
	ci := CommitInfo{Hash: h, Tree: Hash(c.TreeHash), Message: c.Message, Encoding: enc,
		Author:    Signature{Name: c.Author.Name, Email: c.Author.Email, When: c.Author.When},
		Committer: Signature{Name: c.Committer.Name, Email: c.Committer.Email, When: c.Committer.When}}
	for _, p := range c.ParentHashes {
		ci.Parents = append(ci.Parents, Hash(p))
	}
	return ci, nil
}

// goGitTree is parseTree through go-git's object.Tree, to the same entries.
func goGitTree(o plumbing.EncodedObject) ([]treeEntry, error) {
	var t object.Tree
	if err := t.Decode(o); err != nil {
		return nil, err
	}
	out := make([]treeEntry, len(t.Entries))
	for i, e := range t.Entries {
		out[i] = treeEntry{name: e.Name, mode: uint32(e.Mode), dir: e.Mode == 0o040000, hash: Hash(e.Hash)}
	}
	return out, nil
}

func memoryObject(t plumbing.ObjectType, data []byte) *plumbing.MemoryObject {
	o := &plumbing.MemoryObject{}
	o.SetType(t)
	o.Write(data)
	return o
}

// Parsing a commit and trees from their bytes, both ways to the same
// values (go-git's from an object in memory, made once).
func BenchmarkCodecParse(b *testing.B) {
	commit, fanout, notes := codecParseInputs()
	ch := objectName(plumbing.CommitObject, commit)
	co := memoryObject(plumbing.CommitObject, commit)
	ours, _ := parseCommit(ch, commit)
	if theirs, err := goGitCommit(ch, co); err != nil || fmt.Sprint(theirs) != fmt.Sprint(ours) {
		b.Fatalf("go-git reads the commit as %+v (%v), we read %+v", theirs, err, ours)
	}
	b.Run("commit/ours", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := parseCommit(ch, commit); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("commit/gogit", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := goGitCommit(ch, co); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, tree := range []struct {
		name string
		data []byte
	}{{"fanout-tree", fanout}, {"notes-tree", notes}} {
		to := memoryObject(plumbing.TreeObject, tree.data)
		ours, _ := parseTree(tree.data)
		if theirs, err := goGitTree(to); err != nil || fmt.Sprint(theirs) != fmt.Sprint(ours) {
			b.Fatalf("go-git reads the %s otherwise (%v)", tree.name, err)
		}
		b.Run(tree.name+"/ours", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := parseTree(tree.data); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(tree.name+"/gogit", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := goGitTree(to); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// readNamed reads an object go-git found whole and checks it against its
// name h, as odb does each object it reads.
func readNamed(obj plumbing.EncodedObject, h Hash) error {
	rd, err := obj.Reader()
	if err != nil {
		return err
	}
	data, err := io.ReadAll(rd)
	rd.Close()
	if err != nil {
		return err
	}
	if nameOf(objectType(obj.Type().String()), data) != h {
		return fmt.Errorf("%s read as another object", h)
	}
	return nil
}

// writeLooseGoGit is writeLoose with go-git's objfile writer compressing
// and naming the object, placed by the same code (placeLoose).
func writeLooseGoGit(repo *Repo, objects string, t plumbing.ObjectType, data []byte) (Hash, error) {
	var buf bytes.Buffer
	w := objfile.NewWriter(&buf)
	if err := w.WriteHeader(t, int64(len(data))); err != nil {
		return ZeroHash, err
	}
	if _, err := w.Write(data); err != nil {
		return ZeroHash, err
	}
	if err := w.Close(); err != nil {
		return ZeroHash, err
	}
	h := Hash(w.Hash())
	hex := h.String()
	dir := filepath.Join(objects, hex[:2])
	path := filepath.Join(dir, hex[2:])
	if _, err := os.Lstat(path); err == nil {
		return h, nil
	}
	return h, repo.placeLoose(dir, path, buf.Bytes())
}

// writeGoGitStorage writes the object through go-git's filesystem storage.
func writeGoGitStorage(st *filesystem.Storage, t plumbing.ObjectType, data []byte) (Hash, error) {
	o := st.NewEncodedObject()
	o.SetType(t)
	o.SetSize(int64(len(data)))
	w, err := o.Writer()
	if err != nil {
		return ZeroHash, err
	}
	if _, err := w.Write(data); err != nil {
		return ZeroHash, err
	}
	w.Close()
	h, err := st.SetEncodedObject(o)
	return Hash(h), err
}

// Writing a loose object: a record's note (a blob of about 600 bytes) and
// a notes tree of 100 notes, each one new.
func BenchmarkCodecWriteLoose(b *testing.B) {
	_, _, notes := codecParseInputs()
	note := []byte(`{"v":1,"id":"01J9ZK6W4Q3V8Y2N5R7T0X1B3C","cycle":42,"target":"check-speed","result":"improved",` +
		`"sha":"` + fakeObj(3).String() + `","timestamp":"2026-01-02T03:04:05Z","goals_passing":17,"goals_total":18,` +
		`"quality_score":94.4,"idle_streak":0,"goal_ids":["check-speed","lint","tests"],"trace":{"start":"` +
		fakeObj(4).String() + `","judged":"` + fakeObj(5).String() + `","gate":"passed"}}` + "\n")
	for _, obj := range []struct {
		name string
		typ  plumbing.ObjectType
		data []byte
	}{{"note", plumbing.BlobObject, note}, {"notes-tree", plumbing.TreeObject, notes}} {
		// each write a new object: the data ends in a number of its own
		unique := func(i int) []byte {
			if obj.typ == plumbing.TreeObject {
				d := bytes.Clone(obj.data)
				h := fakeObj(i + 1<<20)
				copy(d[len(d)-20:], h[:])
				return d
			}
			return append(bytes.Clone(obj.data), fmt.Sprintf("%d\n", i)...)
		}
		for _, way := range []string{"ours", "gogit", "gogit-storage"} {
			b.Run(obj.name+"/"+way, func(b *testing.B) {
				dir := b.TempDir()
				if _, err := runGitCmd(dir, "", nil, "init", "-q", "--bare", dir); err != nil {
					b.Fatal(err)
				}
				repo, err := Open(dir)
				if err != nil {
					b.Fatal(err)
				}
				defer repo.Close()
				repo.sharedDirBits() // the one config read, before the clock
				st := filesystem.NewStorage(osfs.New(dir), cache.NewObjectLRUDefault())
				defer st.Close()
				objects := filepath.Join(dir, "objects")
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					data := unique(i)
					i++
					var err error
					switch way {
					case "ours":
						_, err = repo.writeLoose(obj.typ, data)
					case "gogit":
						_, err = writeLooseGoGit(repo, objects, obj.typ, data)
					default:
						_, err = writeGoGitStorage(st, obj.typ, data)
					}
					if err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// importObjects is what an import's batch writes: 10,000 notes (blobs of
// a record each) and the 256 fanout trees naming them, and their root.
func importObjects() map[Hash]pendingObject {
	objs := map[Hash]pendingObject{}
	add := func(t plumbing.ObjectType, data []byte) Hash {
		h := objectName(t, data)
		objs[h] = pendingObject{t, data}
		return h
	}
	var buckets [256][]treeEntry
	for i := 0; i < 10000; i++ {
		c := fakeObj(i)
		note := fmt.Sprintf(`{"v":1,"id":"%s","cycle":%d,"target":"goal-%d","result":"improved","sha":"%s","timestamp":"2026-01-02T03:04:05Z","goals_passing":%d,"goals_total":18}`+"\n",
			fakeObj(-i).String()[:26], i, i%17, c, i%18)
		h := add(plumbing.BlobObject, []byte(note))
		buckets[c[0]] = append(buckets[c[0]], treeEntry{name: c.String()[2:], hash: h})
	}
	var root []treeEntry
	var r Repo
	for i, entries := range buckets {
		_, data := r.encodeTree(entries)
		root = append(root, treeEntry{name: fanoutNames[i], dir: true, hash: add(plumbing.TreeObject, data)})
	}
	_, data := r.encodeTree(root)
	add(plumbing.TreeObject, data)
	return objs
}

// handEncodePack is the pack encoder written here before encodePack used
// go-git's, kept as what it was measured against (and what it must write
// alike): the objects in the order of their names, whole, at zlib level
// level.
func handEncodePack(objs map[Hash]pendingObject, level int) ([]byte, error) {
	names := make([]Hash, 0, len(objs))
	for h := range objs {
		names = append(names, h)
	}
	slices.SortFunc(names, func(a, b Hash) int { return bytes.Compare(a[:], b[:]) })
	var buf bytes.Buffer
	buf.WriteString("PACK")
	buf.Write(binary.BigEndian.AppendUint32(nil, 2))
	buf.Write(binary.BigEndian.AppendUint32(nil, uint32(len(names))))
	zw, err := zlib.NewWriterLevel(&buf, level)
	if err != nil {
		return nil, err
	}
	for _, h := range names {
		o := objs[h]
		// type (commit 1, tree 2, blob 3: go-git's numbering is git's) and
		// size, 4 bits then 7 a byte, low bits first
		size := uint64(len(o.data))
		b := byte(o.typ)<<4 | byte(size&15)
		for size >>= 4; size > 0; size >>= 7 {
			buf.WriteByte(b | 0x80)
			b = byte(size & 0x7f)
		}
		buf.WriteByte(b)
		zw.Reset(&buf)
		zw.Write(o.data)
		if err := zw.Close(); err != nil {
			return nil, err
		}
	}
	sum := sha1.Sum(buf.Bytes())
	buf.Write(sum[:])
	return buf.Bytes(), nil
}

// go-git's encoder writes the pack the hand-written one wrote, byte for
// byte, large objects (a size of several bytes) included.
func TestEncodePackAsByHand(t *testing.T) {
	objs := importObjects()
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<14)
	objs[objectName(plumbing.BlobObject, big)] = pendingObject{plumbing.BlobObject, big}
	got, err := encodePack(objs)
	if err != nil {
		t.Fatal(err)
	}
	want, err := handEncodePack(objs, zlib.DefaultCompression)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("go-git's pack is %d bytes, the hand-written one's %d, and they differ", len(got), len(want))
	}
}

// Encoding an import's batch as a pack of whole objects, for git
// index-pack (which costs the same after either): the encoder written
// here before (hand) and go-git's, as encodePack uses it (gogit); and
// go-git's encoder reading the objects from a storage in memory, filled
// before the clock (gogit-memory; filling it, gogit-fill, is apart).
func BenchmarkCodecPack(b *testing.B) {
	objs := importObjects()
	hashes := make([]plumbing.Hash, 0, len(objs))
	for h := range objs {
		hashes = append(hashes, plumbing.Hash(h))
	}
	fill := func() *memory.Storage {
		st := memory.NewStorage()
		for _, o := range objs {
			st.SetEncodedObject(memoryObject(o.typ, o.data))
		}
		return st
	}
	st := fill()
	b.Run("hand", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := handEncodePack(objs, zlib.DefaultCompression); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("gogit", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := encodePack(objs); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("gogit-memory", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var buf bytes.Buffer
			if _, err := packfile.NewEncoder(&buf, st, false).Encode(hashes, 0); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("gogit-fill", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			fill()
		}
	})
}
