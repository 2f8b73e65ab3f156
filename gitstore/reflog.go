package gitstore

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ReflogEntry is one entry of a ref's reflog: the ref moved from Old to
// New (either zero when the ref was created or deleted), by Who, at When.
type ReflogEntry struct {
	Old, New Hash
	Who      string // "Name <email>"
	When     time.Time
	Message  string
	// End is the offset in the reflog just past this entry.
	End int64
}

// maxReflog bounds the part of a reflog ReflogSince reads.
const maxReflog = 256 << 20

// ReflogSince reads the entries of ref's reflog (as git's files backend
// keeps it, under the common git dir's logs/) past byte offset from,
// oldest first, and the offset of its end. after names the entry that ends
// at from (its New), as an earlier read returned it: when the reflog no
// longer has that entry there (it was expired, rewritten or deleted), it
// is read from its start. A ref with no reflog has no entries.
func (r *Repo) ReflogSince(ref string, from int64, after Hash) ([]ReflogEntry, int64, error) {
	if _, ok := storableRef(ref); !ok || !strings.HasPrefix(ref, "refs/") {
		return nil, 0, fmt.Errorf("no reflog for %q", ref)
	}
	f, err := os.Open(filepath.Join(r.commonDir, "logs", filepath.FromSlash(ref)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	size := fi.Size()
	if from < 0 || from > size || (from > 0 && !r.reflogEndsWith(f, from, after)) {
		from = 0
	}
	if size-from > maxReflog {
		return nil, 0, fmt.Errorf("the reflog of %s is larger than %d MiB", ref, maxReflog>>20)
	}
	data := make([]byte, size-from)
	if _, err := f.ReadAt(data, from); err != nil && !errors.Is(err, io.EOF) {
		return nil, 0, err
	}
	var out []ReflogEntry
	at := from
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break // a line being written: the next read takes it
		}
		line := data[:i]
		data = data[i+1:]
		at += int64(i + 1)
		if e, ok := parseReflogLine(line); ok {
			e.End = at
			out = append(out, e)
		}
	}
	return out, at, nil
}

// reflogEndsWith says whether the reflog's line ending at offset end is an
// entry whose New is after.
func (r *Repo) reflogEndsWith(f *os.File, end int64, after Hash) bool {
	start := max(0, end-4096)
	buf := make([]byte, end-start)
	if _, err := f.ReadAt(buf, start); err != nil && !errors.Is(err, io.EOF) {
		return false
	}
	if len(buf) == 0 || buf[len(buf)-1] != '\n' {
		return false
	}
	buf = buf[:len(buf)-1]
	if i := bytes.LastIndexByte(buf, '\n'); i >= 0 {
		buf = buf[i+1:]
	} else if start > 0 {
		return false
	}
	e, ok := parseReflogLine(buf)
	return ok && e.New == after
}

// parseReflogLine reads "<old> <new> <name> <<email>> <time> <zone>\t<message>".
func parseReflogLine(line []byte) (ReflogEntry, bool) {
	var e ReflogEntry
	head, msg, _ := bytes.Cut(line, []byte{'\t'})
	if len(head) < 82 || head[40] != ' ' || head[81] != ' ' {
		return e, false
	}
	var err error
	if e.Old, err = ParseHash(string(head[:40])); err != nil {
		return e, false
	}
	if e.New, err = ParseHash(string(head[41:81])); err != nil {
		return e, false
	}
	ident := string(head[82:])
	gt := strings.LastIndexByte(ident, '>')
	if gt < 0 {
		return e, false
	}
	e.Who = ident[:gt+1]
	if f := strings.Fields(ident[gt+1:]); len(f) >= 1 {
		if secs, err := strconv.ParseInt(f[0], 10, 64); err == nil {
			e.When = time.Unix(secs, 0).UTC()
		}
	}
	e.Message = string(msg)
	return e, true
}
