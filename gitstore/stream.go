package gitstore

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
)

// streamThreshold is the number of root entries above which ForEachNote
// reads every note from one git fast-export of the notes commit (or, where
// that cannot serve, lists them with git ls-tree and reads their text
// through a `git cat-file --batch` process of its own), instead of walking
// the tree and reading each note through the Repo's: a tree that large
// has been fanned out and holds hundreds of notes or more, and git reads
// its trees and inflates the notes in a process of its own.
const streamThreshold = 64

// ForEachLine calls fn with every line of every note in the snapshot that
// is not blank (the notes of JSON Lines refs), note by note in path order.
// line is only valid during the call. An error from fn stops the walk.
func (n *Notes) ForEachLine(fn func(obj Hash, line []byte) error) error {
	return n.ForEachNote(func(obj Hash, data []byte) error {
		for _, l := range bytes.Split(data, []byte("\n")) {
			if len(bytes.TrimSpace(l)) == 0 {
				continue
			}
			if err := fn(obj, l); err != nil {
				return err
			}
		}
		return nil
	})
}

// ForEachNote calls fn with every note in the snapshot (any fanout) and its
// content, in path order. data is only valid during the call. An error
// from fn stops the walk and is returned. An error reading the tree is
// returned too, possibly after fn had some of the notes: a caller keeps
// nothing of a walk that failed.
func (n *Notes) ForEachNote(fn func(obj Hash, data []byte) error) error {
	tree, err := n.root()
	if err != nil {
		return err
	}
	root, err := n.r.readTree(tree)
	if err != nil {
		return err
	}
	if len(root) <= streamThreshold {
		return n.Walk(func(obj, blob Hash) error {
			data, err := n.r.ReadBlob(blob)
			if err != nil {
				return err
			}
			return fn(obj, data)
		})
	}
	// git ls-tree and one git fast-export of the notes commit; where the
	// export gives nothing, a git cat-file of their own (streamNotes).
	if used, err := n.exportNotes(fn); used || err != nil {
		return err
	}
	return n.streamNotes(fn)
}

// streamChunk is a run of notes read from git, handed from the goroutine
// that reads git's answers to the one that calls fn.
type streamChunk struct {
	objs []Hash
	ends []int // note i is data[ends[i-1]:ends[i]]
	data []byte
}

// streamChunkSize is how much note text one chunk holds: the reader can
// be this much (times the chunks in flight) ahead of fn.
const streamChunkSize = 256 << 10

// streamInFlight is how many chunks are made: one being filled, the
// others waiting for fn or being read by it.
const streamInFlight = 4

// streamNotes reads every note through one git cat-file --batch of its
// own, three ways at once: one goroutine reads the notes from git ls-tree
// (walkListed) and sends each note's blob name to git; one reads git's
// answers into chunks; this one calls fn with each note in turn. The order
// is the tree's: git answers names in the order sent.
func (n *Notes) streamNotes(fn func(obj Hash, data []byte) error) (err error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cat, err := n.r.startPiped(ctx, true, "cat-file", "--batch", "--buffer") // answers may wait in git's buffer until it fills or its input ends
	if err != nil {
		return err
	}
	stdin, stdout := cat.stdin, cat.stdout
	if f, ok := stdout.(*os.File); ok {
		growPipe(f, 1<<20)
	}
	// The objects whose notes were asked for, in order, for the reader. Its
	// room holds more answers than git can keep in its buffer, and the
	// writer flushes its names before it waits for room: so git never waits
	// for a name that is not sent while the reader waits for an answer git
	// keeps.
	objs := make(chan Hash, 1<<14)
	walked := make(chan error, 1)
	go func() {
		w := bufio.NewWriterSize(stdin, 64<<10)
		line := make([]byte, 41)
		line[40] = '\n'
		err := n.walkListed(ctx, func(obj, blob Hash) error {
			select {
			case objs <- obj:
			default:
				if err := w.Flush(); err != nil {
					return err
				}
				select {
				case objs <- obj:
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			hexEncode(line[:40], blob)
			_, err := w.Write(line)
			return err
		})
		if ferr := w.Flush(); err == nil {
			err = ferr
		}
		stdin.Close()
		close(objs)
		walked <- err
	}()
	// The reader: git's answers, in chunks, to this goroutine.
	free := make(chan *streamChunk, streamInFlight)
	for range streamInFlight {
		free <- &streamChunk{data: make([]byte, 0, streamChunkSize)}
	}
	full := make(chan *streamChunk, streamInFlight)
	read := make(chan error, 1)
	go func() {
		defer close(full)
		rd := bufio.NewReaderSize(stdout, 256<<10)
		var c *streamChunk
		for obj := range objs {
			if c == nil {
				select {
				case c = <-free:
				case <-ctx.Done():
					read <- ctx.Err()
					return
				}
				c.objs, c.ends, c.data = c.objs[:0], c.ends[:0], c.data[:0]
			}
			header, err := rd.ReadSlice('\n')
			if err != nil {
				read <- err
				return
			}
			size, err := parseBatchHeader(header)
			if err != nil {
				read <- fmt.Errorf("note on %s: %w", obj.Short(), err)
				return
			}
			at := len(c.data)
			c.data = slices.Grow(c.data, size+1)[:at+size+1]
			if _, err := io.ReadFull(rd, c.data[at:]); err != nil {
				read <- err
				return
			}
			c.data = c.data[:at+size] // the newline after the note is not its
			c.objs, c.ends = append(c.objs, obj), append(c.ends, len(c.data))
			if len(c.data) >= streamChunkSize {
				full <- c
				c = nil
			}
		}
		if c != nil {
			full <- c
		}
		read <- nil
	}()
	for c := range full {
		start := 0
		for i, obj := range c.objs {
			if err := fn(obj, c.data[start:c.ends[i]:c.ends[i]]); err != nil { // capped: an append cannot reach the next note
				cancel()
				for range full {
				}
				_ = cat.wait()
				<-walked
				return err
			}
			start = c.ends[i]
		}
		free <- c
	}
	if err := <-read; err != nil {
		cancel()
		<-walked
		cat.kill()
		return fmt.Errorf("reading notes from git cat-file: %v %s", err, cat.said())
	}
	if err := <-walked; err != nil {
		_ = cat.wait()
		return err
	}
	return cat.wait()
}

// parseBatchHeader reads "<name> blob <size>\n" and returns the size.
func parseBatchHeader(h []byte) (int, error) {
	h = bytes.TrimSuffix(h, []byte("\n"))
	f := bytes.Fields(h)
	if len(f) != 3 {
		return 0, fmt.Errorf("unexpected git cat-file output %q", h)
	}
	if string(f[1]) != "blob" {
		return 0, errors.New("a note is not a blob: " + string(h))
	}
	size, err := strconv.Atoi(string(f[2]))
	if err != nil || size < 0 {
		return 0, fmt.Errorf("unexpected git cat-file output %q", h)
	}
	return size, nil
}

func hexEncode(dst []byte, h Hash) {
	const digits = "0123456789abcdef"
	for i, b := range h {
		dst[2*i] = digits[b>>4]
		dst[2*i+1] = digits[b&15]
	}
}
