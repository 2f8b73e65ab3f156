package gitstore

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// exportNotes reads every note of the snapshot as streamNotes does, with
// the notes' text from one git fast-export of the notes commit
// (--full-tree) in place of git cat-file: cat-file answers each blob with
// two writes of its own, and a reader of a large ledger wakes for each,
// where fast-export writes its stream in pages. git ls-tree lists the tree
// (a note is what the tree walk takes for one, as in walkListed), and the
// blobs of the export come in the listing's order, each the first time
// the listing names it: each is taken for the entry's only once its object
// name is the entry's (the SHA-1 of the blob as git hashes it). A note's
// blob met again, one over maxExportKept, and every note's blob after one
// that is not the one expected (a git that exports in another order), is
// read through the Repo's cat-file; a file that is no note is never read
// otherwise. used is false, with fn not called, when the export gives no
// blob at all (it did not start, or git refused it): the caller reads the
// notes the other way then, not one by one.
func (n *Notes) exportNotes(fn func(obj Hash, data []byte) error) (used bool, err error) {
	tree, err := n.root()
	if err != nil || n.commit.IsZero() || tree.IsZero() {
		return false, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// (--sparse: a commit that changed only what the pathspec leaves out,
	// the index alone, is still exported, not pruned as the same as its
	// parent)
	args := boundedMaps("fast-export", "--full-tree", "--reference-excluded-parents", "--sparse", "--end-of-options", exportRange(n))
	// what holds no note (a ledger's index) is neither exported nor
	// listed: git would hold each of its paths (rootLimits)
	listArgs, none, err := n.listArgs(tree)
	if err != nil || none {
		return false, err
	}
	_, excluded, _, err := n.rootLimits(tree)
	if err != nil {
		return false, err
	}
	if len(excluded) > 0 {
		args = append(args, "--")
		for _, name := range excluded {
			args = append(args, ":(exclude,literal,top)"+name)
		}
	}
	p, err := n.r.startPiped(ctx, false, args...)
	if err != nil {
		return false, nil
	}
	if f, ok := p.stdout.(*os.File); ok {
		growPipe(f, 1<<20)
	}
	blobs := make(chan []exportedBlob, 16)
	var readErr error // what ended the export's reading; set before blobs closes
	go func() {
		readErr = exportBlobs(ctx, bufio.NewReaderSize(p.stdout, 256<<10), blobs)
		close(blobs)
	}()
	defer func() {
		cancel()
		for range blobs {
		}
		_ = p.wait() // (killed once the listing ended: its file list is not read)
	}()
	// An export that gives no blob at all is one git refused (a git that
	// does not know an option, a commit it will not export): nothing was
	// handed on yet, and the cat-file stream reads the notes.
	batch, ok := <-blobs // what the export sent, not taken yet
	if !ok {
		trace("git fast-export of %s gave no blob (%v); the notes are read through cat-file", n.commit.Short(), readErr)
		return false, nil
	}
	bad := []Hash{}
	seen := make(map[Hash]bool, 1024)
	inOrder := true
	// exported takes the export's next blob when it is want: false, and
	// the export read no further, when it is not (or the export ended).
	exported := func(want Hash) ([]byte, bool) {
		if !inOrder {
			return nil, false
		}
		ok := true
		for len(batch) == 0 && ok {
			batch, ok = <-blobs
		}
		var b exportedBlob
		if ok {
			b, batch = batch[0], batch[1:]
		}
		if ok && b.oid == want {
			return b.data, b.data != nil || b.size == 0
		}
		inOrder = false
		switch {
		case !ok:
			trace("git fast-export of %s ended before blob %s; the notes from there on are read one by one", n.commit.Short(), want.Short())
		default:
			trace("git fast-export of %s gave blob %s where %s was expected; the notes from there on are read one by one", n.commit.Short(), b.oid.Short(), want.Short())
		}
		return nil, false
	}
	l, err := n.r.startPiped(ctx, false, listArgs...)
	if err != nil {
		return true, err
	}
	err = eachListedRecord(bufio.NewReaderSize(l.stdout, 256<<10), func(mode uint32, typ string, oid Hash, path string) error {
		kind, obj := pathKind(mode, path)
		if kind == entryBadNote {
			bad = append(bad, obj)
		}
		if typ != string(blobType) {
			return nil
		}
		// The export holds each blob once, at its first place, notes' and
		// other files' alike; a blob that is no note's is never read
		// otherwise (the tree walk reads none: a partial clone may lack it).
		first := !seen[oid]
		seen[oid] = true
		var data []byte
		got := false
		if first {
			data, got = exported(oid)
		}
		if kind != entryNote {
			return nil
		}
		if !got {
			// Kept once read: a ledger whose notes share a blob (a hostile
			// one may share one among all) asks git for it once.
			read, err := n.r.ReadBlobsKept([]Hash{oid})
			if err != nil {
				return err
			}
			data = read[0][:len(read[0]):len(read[0])] // shared: an append makes a copy
		}
		return fn(obj, data)
	})
	if err != nil {
		l.kill()
		return true, err
	}
	if err := l.wait(); err != nil {
		return true, err
	}
	n.r.keepListedBad(tree, bad)
	return true, nil
}

// exportRange is what exportNotes exports: the snapshot's commit alone
// (a test exports another, whose blobs are not those the listing names).
var exportRange = func(n *Notes) string { return n.commit.String() + "^!" }

// exportedBlob is a blob of the export and its object name, as git hashes
// it.
type exportedBlob struct {
	oid  Hash
	data []byte // nil for one over maxExportKept, not kept
	size int
}

// maxExportData bounds one blob of the stream.
const maxExportData = 1 << 30

// maxExportKept bounds a blob exportBlobs keeps: a larger one is hashed as
// it passes and let go (a note that large is read through cat-file; a file
// that is no note, which a hostile remote may make as large as it likes, is
// never held).
const maxExportKept = 1 << 20

var errExport = errors.New("unexpected fast-export stream")

// exportBlobs sends each blob of a git fast-export stream, in its order,
// until the stream's first commit (whose file list it does not read), its
// end or ctx's; it returns what ended it otherwise.
func exportBlobs(ctx context.Context, rd *bufio.Reader, out chan<- []exportedBlob) (err error) {
	arena := blobArena{}
	// The blobs go in batches: a send to a goroutine that waits wakes it,
	// and one wake for each of 100,000 blobs cost more than the blobs.
	var batch []exportedBlob
	size := 0 // the batch's text
	send := func() bool {
		if len(batch) == 0 {
			return true
		}
		select {
		case out <- batch:
			batch, size = nil, 0
			return true
		case <-ctx.Done():
			return false
		}
	}
	defer func() {
		if err == nil && !send() {
			err = ctx.Err()
		}
	}()
	for mark := 1; ; mark++ {
		l, err := rd.ReadSlice('\n')
		if err == io.EOF && len(l) == 0 {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%w: %v", errExport, err)
		}
		switch line := string(l[:len(l)-1]); {
		case strings.HasPrefix(line, "commit ") || strings.HasPrefix(line, "reset "):
			return nil
		case line == "blob":
		case strings.HasPrefix(line, "feature ") || strings.HasPrefix(line, "progress "):
			mark--
			continue
		default:
			return fmt.Errorf("%w: %q", errExport, line)
		}
		l, err = rd.ReadSlice('\n')
		if err != nil || string(l) != "mark :"+strconv.Itoa(mark)+"\n" {
			return fmt.Errorf("%w: %q where mark :%d was expected (%v)", errExport, l, mark, err)
		}
		l, err = rd.ReadSlice('\n')
		n, ok := exportDataSize(l)
		if err != nil || !ok {
			return fmt.Errorf("%w: %q where the data's size was expected (%v)", errExport, l, err)
		}
		var b exportedBlob
		if n > maxExportKept {
			h := objectHasher(plumbing.BlobObject, n)
			if _, err := io.CopyN(h, rd, int64(n)); err != nil {
				return fmt.Errorf("%w: a blob cut short (%v)", errExport, err)
			}
			copy(b.oid[:], h.Sum(nil))
		} else {
			b.data = arena.room(n)
			if _, err := io.ReadFull(rd, b.data); err != nil {
				return fmt.Errorf("%w: a blob cut short (%v)", errExport, err)
			}
			b.oid = objectName(plumbing.BlobObject, b.data)
		}
		b.size = n
		if b, err := rd.Peek(1); err == nil && b[0] == '\n' {
			rd.ReadByte()
		}
		batch = append(batch, b)
		if size += len(b.data); size >= exportBatch && !send() {
			return ctx.Err()
		}
	}
}

// exportBatch is how much blob text exportBlobs sends at a time.
const exportBatch = 64 << 10

// exportDataSize reads "data <n>\n".
func exportDataSize(l []byte) (int, bool) {
	s, ok := strings.CutPrefix(string(l), "data ")
	if !ok || !strings.HasSuffix(s, "\n") {
		return 0, false
	}
	n, err := strconv.Atoi(s[:len(s)-1])
	return n, err == nil && n >= 0 && n <= maxExportData
}

// blobArena keeps the blobs of an export in blocks of 1 MiB (a large blob
// has a block of its own), each capped so that an append cannot reach the
// next; a block is let go when no note's text points into it.
type blobArena struct{ block []byte }

func (a *blobArena) room(n int) []byte {
	const block = 1 << 20
	if n > cap(a.block)-len(a.block) {
		if n >= block/4 {
			return make([]byte, n)
		}
		a.block = make([]byte, 0, block)
	}
	at := len(a.block)
	a.block = a.block[:at+n]
	return a.block[at : at+n : at+n]
}
