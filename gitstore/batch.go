package gitstore

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"sync"
)

// batch is one long-lived `git cat-file --batch` process through which the
// repository reads objects. C git maps its pack indexes instead of decoding
// them in every process, which go-git does, so reads cost the same in a
// repository of a thousand objects and of millions.
type batch struct {
	mu     sync.Mutex
	cmd    *exec.Cmd
	in     *bufio.Writer
	stdin  io.WriteCloser
	out    *bufio.Reader
	stderr bytes.Buffer
	err    error // the process failed: every later read fails too
	closed sync.Once
}

// startBatch starts git cat-file --batch in dir. A failure to start is kept
// in the batch and returned by its first read.
func startBatch(dir string, env []string) *batch {
	b := &batch{}
	b.cmd = exec.CommandContext(context.Background(), "git", "cat-file", "--batch")
	b.cmd.Dir = dir
	// what git says is read (fail): in its own words, whatever the user's
	// language
	b.cmd.Env = append(env[:len(env):len(env)], "LC_ALL=C")
	b.cmd.Stderr = &b.stderr
	stdin, err := b.cmd.StdinPipe()
	if err != nil {
		b.err = err
		return b
	}
	stdout, err := b.cmd.StdoutPipe()
	if err != nil {
		b.err = err
		return b
	}
	if err := b.cmd.Start(); err != nil {
		b.err = fmt.Errorf("running git cat-file: %w", err)
		return b
	}
	trace("git cat-file --batch started")
	b.stdin = stdin
	b.in = bufio.NewWriter(stdin)
	b.out = bufio.NewReaderSize(stdout, 64<<10)
	return b
}

// batch is the repository's git cat-file, started by the first call.
func (r *Repo) batch() (*batch, error) {
	r.objectsOnce.Do(func() {
		r.objectsMu.Lock()
		defer r.objectsMu.Unlock()
		r.objects = startBatch(r.dir, r.env)
	})
	r.objectsMu.Lock()
	defer r.objectsMu.Unlock()
	if r.objects == nil {
		return nil, errors.New("the repository is closed")
	}
	if r.objects.gaveUp() && !r.closed {
		// git gave up the exchange on an object a partial clone's filter
		// left out (ErrPromised): the reads of other objects, which are
		// here, go on with a git of their own; the read of that object
		// fails as it did
		r.objects.close()
		r.objects = startBatch(r.dir, r.env)
	}
	return r.objects, r.objects.err
}

// gaveUp says whether git ended the exchange on an object a partial
// clone's filter left out.
func (b *batch) gaveUp() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return errors.Is(b.err, ErrPromised)
}

// close ends git cat-file; closing it again does nothing (one Wait).
func (b *batch) close() {
	if b == nil || b.cmd == nil || b.cmd.Process == nil || b.stdin == nil {
		return
	}
	b.closed.Do(func() {
		b.stdin.Close() // git cat-file ends at end of input
		go b.cmd.Wait()
	})
}

// objectType is an object's type as git names it.
type objectType string

const (
	blobType   objectType = "blob"
	treeType   objectType = "tree"
	commitType objectType = "commit"
)

// object reads one object, named by anything git accepts (a full name, or
// rev^{commit}, rev:path, …). It returns ErrObjectNotFound when the name
// names no object, and a *RevisionError when it is ambiguous.
func (r *Repo) object(name string) (Hash, objectType, []byte, error) {
	if h, err := ParseHash(name); err == nil && h.String() == name {
		if typ, data, ok := r.nativeObject(h); ok {
			return h, typ, data, nil
		}
	}
	b, err := r.batch()
	if err != nil {
		return ZeroHash, "", nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err != nil {
		return ZeroHash, "", nil, b.err
	}
	if _, err := b.in.WriteString(name + "\n"); err != nil {
		return ZeroHash, "", nil, b.fail(err)
	}
	if err := b.in.Flush(); err != nil {
		return ZeroHash, "", nil, b.fail(err)
	}
	header, err := b.out.ReadSlice('\n')
	if err != nil {
		return ZeroHash, "", nil, b.fail(err)
	}
	// "<name> missing" and "<name> ambiguous" echo the name, which may hold
	// spaces; check them before splitting the header.
	line := bytes.TrimSuffix(header, []byte("\n"))
	switch {
	case bytes.HasSuffix(line, []byte(" missing")):
		return ZeroHash, "", nil, ErrObjectNotFound
	case bytes.HasSuffix(line, []byte(" ambiguous")):
		return ZeroHash, "", nil, &RevisionError{Rev: name, Reason: "is ambiguous: give more digits"}
	}
	f := bytes.Fields(line)
	switch {
	case len(f) != 3:
		return ZeroHash, "", nil, b.fail(fmt.Errorf("unexpected output %q", header))
	}
	h, err := ParseHash(string(f[0]))
	if err != nil {
		return ZeroHash, "", nil, b.fail(err)
	}
	typ := objectType(f[1])
	size, err := strconv.Atoi(string(f[2]))
	if err != nil || size < 0 {
		return ZeroHash, "", nil, b.fail(fmt.Errorf("unexpected output %q", header))
	}
	data := make([]byte, size+1)
	if _, err := io.ReadFull(b.out, data); err != nil {
		return ZeroHash, "", nil, b.fail(err)
	}
	return h, typ, data[:size], nil
}

// objects reads several objects in one exchange: all the names are written
// (from another goroutine, so that neither side can block the other on a
// full pipe) and the answers read in order. fn gets each object's index in
// names; a missing object is ErrObjectNotFound.
func (r *Repo) objectsOf(names []string, fn func(i int, typ objectType, data []byte, err error) error) error {
	// A few objects are read in-process where they can be (odb.go); git
	// reads the rest.
	var ferr error
	if len(names) <= nativeBatch {
		var rest []string
		var at []int
		for i, n := range names {
			if h, err := ParseHash(n); err == nil && h.String() == n {
				if typ, data, ok := r.nativeObject(h); ok {
					if ferr == nil {
						ferr = fn(i, typ, data, nil)
					}
					continue
				}
			}
			rest, at = append(rest, n), append(at, i)
		}
		if len(rest) == 0 || ferr != nil {
			return ferr
		}
		if len(rest) < len(names) {
			return r.batchObjectsOf(rest, func(i int, typ objectType, data []byte, err error) error {
				return fn(at[i], typ, data, err)
			})
		}
	}
	return r.batchObjectsOf(names, fn)
}

// batchObjectsOf is objectsOf through git cat-file.
func (r *Repo) batchObjectsOf(names []string, fn func(i int, typ objectType, data []byte, err error) error) error {
	b, err := r.batch()
	if err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err != nil {
		return b.err
	}
	werr := make(chan error, 1)
	go func() {
		for _, n := range names {
			if _, err := b.in.WriteString(n + "\n"); err != nil {
				werr <- err
				return
			}
		}
		werr <- b.in.Flush()
	}()
	var ferr error
	for i := range names {
		header, err := b.out.ReadSlice('\n')
		if err != nil {
			<-werr
			return b.fail(err)
		}
		line := bytes.TrimSuffix(header, []byte("\n"))
		if bytes.HasSuffix(line, []byte(" missing")) || bytes.HasSuffix(line, []byte(" ambiguous")) {
			if ferr == nil {
				ferr = fn(i, "", nil, ErrObjectNotFound)
			}
			continue
		}
		f := bytes.Fields(line)
		if len(f) != 3 {
			<-werr
			return b.fail(fmt.Errorf("unexpected output %q", header))
		}
		typ := objectType(f[1])
		size, err := strconv.Atoi(string(f[2]))
		if err != nil || size < 0 {
			<-werr
			return b.fail(fmt.Errorf("unexpected output %q", header))
		}
		data := make([]byte, size+1)
		if _, err := io.ReadFull(b.out, data); err != nil {
			<-werr
			return b.fail(err)
		}
		if ferr == nil {
			ferr = fn(i, typ, data[:size], nil)
		}
	}
	if err := <-werr; err != nil {
		return b.fail(err)
	}
	return ferr
}

// nativeBatch is the most objects one exchange reads in-process: more
// are git's (odb.go).
const nativeBatch = 64

func (b *batch) fail(err error) error {
	if b.cmd.Process != nil {
		b.cmd.Process.Kill()
		// What git said is all written once it is reaped (exec copies its
		// standard error until then): a git that gave up on an object
		// says why last.
		b.closed.Do(func() {
			if b.stdin != nil {
				b.stdin.Close()
			}
			_ = b.cmd.Wait()
		})
	}
	said := bytes.TrimSpace(b.stderr.Bytes())
	if i := bytes.Index(said, []byte("fatal: could not fetch ")); i >= 0 && bytes.Contains(said[i:], []byte(" from promisor remote")) {
		// an object a partial clone's filter left out, which git may not
		// fetch for a read: it ends the whole exchange
		obj, _, _ := bytes.Cut(said[i+len("fatal: could not fetch "):], []byte(" "))
		b.err = fmt.Errorf("reading object %s: %w, and reads never fetch", obj, ErrPromised)
	} else {
		b.err = fmt.Errorf("reading objects from git cat-file: %v %s", err, said)
	}
	return b.err
}

// readObject reads the object h, which must have type want.
func (r *Repo) readObject(h Hash, want objectType) ([]byte, error) {
	if typ, data, ok := r.pendingData(h); ok && typ == want {
		return data, nil
	}
	_, typ, data, err := r.object(h.String())
	if err != nil {
		return nil, err
	}
	if typ != want {
		return nil, fmt.Errorf("object %s is a %s, not a %s: %w", h.Short(), typ, want, ErrWrongType)
	}
	return data, nil
}

// fanoutNames are the names of a notes tree's fanout directories (two hex
// digits), one copy of each: a diff of notes trees reads thousands of
// them.
// They are slices of one constant: nothing is made when the process
// starts.
var fanoutNames = func() (out [256]string) {
	for i := range out {
		out[i] = hexPairs[2*i : 2*i+2]
	}
	return out
}()

const hexPairs = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f" +
	"202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f" +
	"404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f" +
	"606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f" +
	"808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f" +
	"a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebf" +
	"c0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedf" +
	"e0e1e2e3e4e5e6e7e8e9eaebecedeeeff0f1f2f3f4f5f6f7f8f9fafbfcfdfeff"

// parseTree reads the entries of a tree object in git's binary format.
// (go-git's plumbing/object took 3 to 4.7 times as long: BenchmarkCodecParse.)
func parseTree(data []byte) ([]treeEntry, error) {
	var out []treeEntry
	whole := len(data)
	for len(data) > 0 {
		sp := bytes.IndexByte(data, ' ')
		if sp < 0 {
			return nil, fmt.Errorf("malformed tree entry")
		}
		mode, ok := parseMode(data[:sp])
		if !ok {
			return nil, fmt.Errorf("malformed tree entry mode %q", data[:sp])
		}
		data = data[sp+1:]
		nul := bytes.IndexByte(data, 0)
		if nul < 0 || len(data) < nul+21 {
			return nil, fmt.Errorf("malformed tree entry")
		}
		if mode == 0 {
			// git reads a mode of 0 as a submodule's (canon_mode); here 0
			// is the mode of the files this package writes
			mode = 0o160000
		}
		e := treeEntry{mode: mode, dir: mode&0o170000 == 0o040000} // as git reads it (S_ISDIR)
		if i, ok := fanoutIndex(data[:nul]); ok {
			e.name = fanoutNames[i]
		} else {
			e.name = string(data[:nul])
		}
		copy(e.hash[:], data[nul+1:nul+21])
		if out == nil {
			// The entries of a tree are much alike (a notes tree's are all
			// fanout directories or all notes): room for as many as the
			// first one's size fits, and an eighth more.
			n := whole / (sp + 1 + nul + 21)
			out = make([]treeEntry, 0, n+n/8+1)
		}
		out = append(out, e)
		data = data[nul+21:]
	}
	return out, nil
}

// parseMode reads a tree entry's mode: octal digits, as strconv.ParseUint
// with base 8 and 32 bits reads them.
func parseMode(b []byte) (uint32, bool) {
	if len(b) == 0 {
		return 0, false
	}
	var n uint64
	for _, c := range b {
		if c < '0' || c > '7' {
			return 0, false
		}
		n = n<<3 | uint64(c-'0')
		if n > 1<<32-1 {
			return 0, false
		}
	}
	return uint32(n), true
}

// fanoutIndex reports whether name is two lowercase hex digits, and which.
func fanoutIndex(name []byte) (int, bool) {
	if len(name) != 2 {
		return 0, false
	}
	hi, ok1 := hexDigit(name[0])
	lo, ok2 := hexDigit(name[1])
	return hi<<4 | lo, ok1 && ok2
}

func hexDigit(c byte) (int, bool) {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0'), true
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10, true
	}
	return 0, false
}
