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
)

// streamThreshold is the number of root entries above which ForEachNote
// reads note contents through one `git cat-file --batch` process instead
// of go-git: a tree that large has been fanned out and holds hundreds of
// notes or more, and C git inflates packed blobs faster than go-git, on
// another core, while this process parses.
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
// from fn stops the walk and is returned.
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
	return n.streamNotes(fn)
}

func (n *Notes) streamNotes(fn func(obj Hash, data []byte) error) (err error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", "cat-file", "--batch", "--buffer") // every name is sent, then stdin closed: git may buffer its answers
	cmd.Dir = n.r.dir
	cmd.Env = n.r.env
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("running git cat-file: %w", err)
	}
	// While git starts, list the notes; then one goroutine sends every name
	// while this one reads the answers in order.
	var objs, blobs []Hash
	if err := n.Walk(func(obj, blob Hash) error {
		objs = append(objs, obj)
		blobs = append(blobs, blob)
		return nil
	}); err != nil {
		stdin.Close()
		_ = cmd.Wait()
		return err
	}
	go func() {
		buf := make([]byte, 0, 41*len(blobs))
		line := make([]byte, 41)
		line[40] = '\n'
		for _, b := range blobs {
			hexEncode(line[:40], b)
			buf = append(buf, line...)
		}
		stdin.Write(buf) // a failure shows as a short read below
		stdin.Close()
	}()
	rd := bufio.NewReaderSize(stdout, 256<<10)
	var data []byte
	for i, obj := range objs {
		header, err := rd.ReadSlice('\n')
		if err != nil {
			return n.streamFailed(cmd, &stderr, err)
		}
		size, err := parseBatchHeader(header)
		if err != nil {
			return n.streamFailed(cmd, &stderr, fmt.Errorf("note on %s: %w", objs[i].Short(), err))
		}
		if cap(data) < size+1 {
			data = make([]byte, size+1)
		}
		data = data[:size+1]
		if _, err := io.ReadFull(rd, data); err != nil {
			return n.streamFailed(cmd, &stderr, err)
		}
		if err := fn(obj, data[:size]); err != nil {
			cancel()
			_ = cmd.Wait()
			return err
		}
	}
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("git cat-file: %v: %s", err, bytes.TrimSpace(stderr.Bytes()))
	}
	return nil
}

func (n *Notes) streamFailed(cmd *exec.Cmd, stderr *bytes.Buffer, err error) error {
	if cmd.Process != nil {
		cmd.Process.Kill()
	}
	_ = cmd.Wait()
	return fmt.Errorf("reading notes from git cat-file: %v %s", err, bytes.TrimSpace(stderr.Bytes()))
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
