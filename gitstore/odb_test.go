package gitstore

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// catFileAll is every object of the repository as git cat-file reads it.
func catFileAll(t *testing.T, dir string) map[Hash]struct {
	typ  objectType
	data []byte
} {
	t.Helper()
	cmd := exec.Command("git", "cat-file", "--batch-all-objects", "--batch", "--unordered")
	cmd.Dir = dir
	cmd.Env = gitEnv()
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	all := map[Hash]struct {
		typ  objectType
		data []byte
	}{}
	rd := bufio.NewReader(bytes.NewReader(out))
	for {
		line, err := rd.ReadString('\n')
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		f := strings.Fields(line)
		if len(f) != 3 {
			t.Fatalf("cat-file printed %q", line)
		}
		h, _ := ParseHash(f[0])
		n, _ := strconv.Atoi(f[2])
		data := make([]byte, n+1)
		if _, err := io.ReadFull(rd, data); err != nil {
			t.Fatal(err)
		}
		all[h] = struct {
			typ  objectType
			data []byte
		}{objectType(f[1]), data[:n]}
	}
	return all
}

// Every object read in-process is git cat-file's, in loose objects, in a
// pack with offset deltas and in one with deltas against a named base, and
// an object the packs do not hold is not read.
func TestNativeReadsAgreeWithCatFile(t *testing.T) {
	setEnv(t)
	r := newRepo(t)
	// history whose trees and files change a little at a time: deltas
	for i := 0; i < 24; i++ {
		for j := 0; j < 5; j++ {
			body := strings.Repeat(fmt.Sprintf("line %d of file %d\n", j, j), 40) + fmt.Sprintf("change %d\n", i)
			if err := os.WriteFile(filepath.Join(r.dir, fmt.Sprintf("f%d.txt", (i+j)%7)), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		r.git("add", "-A")
		r.git("commit", "-q", "-m", fmt.Sprintf("commit %d", i))
		if i%8 == 7 {
			r.git("notes", "--ref=evolve", "add", "-m", fmt.Sprintf("note %d", i), "HEAD")
			r.git("tag", "-a", "-m", "tag", fmt.Sprintf("t%d", i))
		}
	}
	check := func(what string, minObjects int, delta int) {
		t.Helper()
		if what != "loose" {
			// the packs hold deltas, of both kinds as asked
			idx, _ := filepath.Glob(filepath.Join(r.dir, ".git", "objects", "pack", "*.idx"))
			out := r.git(append([]string{"verify-pack", "-v"}, idx...)...)
			if !strings.Contains(out, "chain length = 2") {
				t.Fatalf("%s: no chain of deltas: %s", what, out)
			}
		}
		all := catFileAll(t, r.dir)
		if len(all) < minObjects {
			t.Fatalf("%s: %d objects", what, len(all))
		}
		repo := r.open()
		defer repo.Close()
		read := 0
		for h, want := range all {
			if repo.native.inflates >= nativeBudget-maxDeltaChain {
				repo.native.inflates = 0 // the test reads every object
			}
			typ, data, ok := repo.nativeObject(h)
			if !ok {
				continue
			}
			read++
			if typ != want.typ || !bytes.Equal(data, want.data) {
				t.Fatalf("%s: %s read as %s %q, git: %s %q", what, h, typ, data, want.typ, want.data)
			}
		}
		if delta >= 0 && repo.native.deltas[delta] == 0 {
			t.Errorf("%s: no delta of kind %d read", what, delta)
		}
		if read != len(all) {
			t.Errorf("%s: %d of %d objects read in-process", what, read, len(all))
		}
	}
	check("loose", 120, -1)
	r.git("repack", "-adq", "--depth=50", "--window=50")
	check("packed, offset deltas", 120, 0)
	// a pack whose deltas name their base (pack-objects' default without
	// --delta-base-offset, as an old git writes them)
	packDir := filepath.Join(r.dir, ".git", "objects", "pack")
	old, _ := filepath.Glob(filepath.Join(packDir, "pack-*"))
	var list bytes.Buffer
	for _, line := range strings.Split(strings.TrimSpace(r.git("rev-list", "--objects", "--all")), "\n") {
		list.WriteString(strings.Fields(line)[0] + "\n")
	}
	cmd := exec.Command("git", "pack-objects", "-q", "--depth=50", "--window=50", filepath.Join(packDir, "pack"))
	cmd.Dir, cmd.Env, cmd.Stdin = r.dir, gitEnv(), &list
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for _, f := range old {
		os.Remove(f)
	}
	check("packed, deltas against a named base", 120, 1)

	// an object in no pack and not loose is not read here
	repo := r.open()
	defer repo.Close()
	if _, _, ok := repo.nativeObject(Hash{1, 2, 3}); ok {
		t.Error("an object that is nowhere was read")
	}
}

// With a replace ref, every read is git's (which reads the replacement).
func TestNativeReadsLeaveReplaceRefsToGit(t *testing.T) {
	setEnv(t)
	r := newRepo(t)
	r.git("commit", "-q", "--allow-empty", "-m", "one")
	one := r.hash("rev-parse", "HEAD")
	r.git("commit", "-q", "--allow-empty", "-m", "two")
	two := r.hash("rev-parse", "HEAD")
	if _, _, ok := r.open().nativeObject(one); !ok {
		t.Fatal("not read in-process without replace refs")
	}
	r.git("replace", one.String(), two.String())
	repo := r.open()
	defer repo.Close()
	if _, _, ok := repo.nativeObject(one); ok {
		t.Error("read in-process with a replace ref")
	}
	ci, err := repo.Commit(one)
	if err != nil || ci.Message != "two\n" {
		t.Errorf("Commit(%s) = %q, %v; want the replacement's", one.Short(), ci.Message, err)
	}
}

// A delta from a damaged pack never makes applyDelta panic or give more
// or less than the size it declares.
func FuzzApplyDelta(f *testing.F) {
	base := []byte("the base object, long enough to copy from\n")
	// sizes 42 and 12; copy 8 bytes from offset 4; insert "abcd"
	f.Add(base, []byte{42, 12, 0x91, 4, 8, 4, 'a', 'b', 'c', 'd'})
	f.Add(base, []byte{42, 0})
	f.Add([]byte{}, []byte{0, 3, 3, 'x', 'y', 'z'})
	f.Add(base, []byte{42, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 1})
	f.Add(base, []byte{42, 16, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, base, delta []byte) {
		out, ok := applyDelta(base, delta)
		if !ok {
			return
		}
		if len(out) > nativeMaxSize {
			t.Fatalf("%d bytes", len(out))
		}
	})
}

// identDate reads a date as git does, or says it cannot; it never panics,
// and a date it reads keeps its zone to the minute.
func FuzzIdentDate(f *testing.F) {
	for _, s := range []string{"@1700000000 +0200", "@0 -0000", "2026-01-02T03:04:05Z", "2026-01-02T03:04:05+02:00",
		"2005-04-07T22:13:13-0130", "@99999999999999999999 +0000", "@1 +99", "2026-13-45T99:99:99Z", "", "yesterday"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		lookup := func(k string) (string, bool) {
			if k == "D" {
				return s, true
			}
			return "", false
		}
		when, ok := identDate(lookup, "D", time.Unix(1700000000, 0))
		if !ok {
			return
		}
		if _, off := when.Zone(); off%60 != 0 {
			t.Fatalf("%q: offset %d", s, off)
		}
	})
}
