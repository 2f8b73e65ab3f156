package audit

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-evolve/git-evolve/internal/testenv"
)

// What verify keeps (its report, the summaries, the keys, the delta, the
// objects they stand for) changes no verdict however it is damaged: cut
// short, emptied, overwritten with random bytes, with bits flipped, or a
// directory in its place, a verify that reads it answers what a verify
// from git alone answers, with nothing changed since it was kept (the
// summaries read whole) and with a record added since (the delta).
func TestDamagedKeptFilesChangeNoVerdict(t *testing.T) {
	testenv.Slow(t)
	a, rng := recordedClone(t, 12, 6)
	// a notice and a breach for the kept files to stand for: a record of
	// the seeds' shape, and a record edited by hand
	a.git("notes", "--ref=evolve", "append", "-m", `{"v":1,"cycle":100,"result":"harvested"}`, "HEAD~9")
	on := a.noted()
	text := a.git("notes", "--ref=evolve", "show", on[0])
	a.git("notes", "--ref=evolve", "add", "-f", "-m", text+"\n"+`{"v":1,"cycle":101,"result":"improved","target":"x"}`, on[0])
	a.record(rng)

	state := filepath.Join(a.repo.CommonDir(), "evolve")
	kept := []string{"verified", "verify-state", "verify-keys", "verify-delta", "verify-objects"}
	for i := 0; i < 2; i++ { // the second reads from what the first kept
		if _, err := VerifyWith(a.l, VerifyOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	saved := map[string][]byte{}
	for _, name := range kept {
		data, err := os.ReadFile(filepath.Join(state, name))
		if err != nil {
			t.Fatalf("%s was not kept: %v", name, err)
		}
		saved[name] = data
	}
	tip := a.git("rev-parse", "refs/notes/evolve")
	a.record(rng)
	grown := a.git("rev-parse", "refs/notes/evolve")

	// put back what was kept, with the ledger at tip
	restore := func(ledgerAt string) {
		t.Helper()
		a.git("update-ref", "refs/notes/evolve", ledgerAt)
		for _, name := range kept {
			path := filepath.Join(state, name)
			if err := os.RemoveAll(path); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, saved[name], 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := func(ledgerAt string) string {
		t.Helper()
		restore(ledgerAt)
		rep, err := VerifyWith(a.l, VerifyOptions{FromGit: true})
		if err != nil {
			t.Fatal(err)
		}
		return reportText(rep)
	}
	wantTip, wantGrown := want(tip), want(grown)

	damages := []struct {
		name string
		do   func(path string, data []byte) error
	}{
		{"cut short", func(path string, data []byte) error { return os.WriteFile(path, data[:len(data)/2], 0o600) }},
		{"emptied", func(path string, _ []byte) error { return os.WriteFile(path, nil, 0o600) }},
		{"random bytes", func(path string, data []byte) error {
			out := make([]byte, len(data))
			rng.Read(out)
			return os.WriteFile(path, out, 0o600)
		}},
		{"bits flipped", func(path string, data []byte) error {
			out := bytes.Clone(data)
			for i := 24 + rng.Intn(64); i < len(out); i += 64 + rng.Intn(64) {
				out[i] ^= 1 << rng.Intn(8)
			}
			return os.WriteFile(path, out, 0o600)
		}},
		{"one bit flipped", func(path string, data []byte) error {
			out := bytes.Clone(data)
			out[len(out)/2] ^= 4
			return os.WriteFile(path, out, 0o600)
		}},
		{"a directory", func(path string, _ []byte) error {
			if err := os.Remove(path); err != nil {
				return err
			}
			return os.MkdirAll(filepath.Join(path, "inside"), 0o755)
		}},
	}
	for _, name := range kept[1:] {
		for _, d := range damages {
			for _, c := range []struct {
				what, at, want string
			}{{"nothing since", tip, wantTip}, {"a record since", grown, wantGrown}} {
				restore(c.at)
				if err := d.do(filepath.Join(state, name), saved[name]); err != nil {
					t.Fatal(err)
				}
				rep, err := VerifyWith(a.l, VerifyOptions{})
				if err != nil {
					t.Errorf("%s %s, %s: %v", name, d.name, c.what, err)
					continue
				}
				if got := reportText(rep); got != c.want {
					t.Errorf("%s %s, %s: the answer differs\ngot:      %s\nfrom git: %s", name, d.name, c.what, got, c.want)
				}
			}
		}
	}
}

// A digest in the kept summaries changed to another digest (the file
// still decodes: kept as text or in binary, in verify-state or in the
// verify-keys it reads its records' first summaries from): the answer is
// git's.
func TestKeptDigestChangedChangesNoVerdict(t *testing.T) {
	testenv.Slow(t)
	a, _ := recordedClone(t, 8, 4)
	for i := 0; i < 2; i++ {
		if _, err := VerifyWith(a.l, VerifyOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	full, err := VerifyWith(a.l, VerifyOptions{FromGit: true})
	if err != nil {
		t.Fatal(err)
	}
	want := reportText(full)
	state := filepath.Join(a.repo.CommonDir(), "evolve")
	saved := map[string][]byte{}
	for _, name := range []string{"verify-state", "verify-keys"} {
		data, err := os.ReadFile(filepath.Join(state, name))
		if err != nil {
			t.Fatal(err)
		}
		saved[name] = data
	}
	// each record's digest, as the next record's prev link names it
	var digests []string
	for _, obj := range a.noted() {
		text := a.git("notes", "--ref=evolve", "show", obj)
		if _, after, ok := strings.Cut(text, `"prev":"`); ok {
			link, _, _ := strings.Cut(after, `"`)
			if _, d, ok := strings.Cut(link, ":"); ok {
				digests = append(digests, d)
			}
		}
	}
	changed := 0
	for name, data := range saved {
		for _, d := range digests {
			bin, err := hex.DecodeString(d)
			if err != nil {
				t.Fatal(err)
			}
			for _, form := range [][]byte{[]byte(d), bin} {
				i := bytes.Index(data, form)
				if i < 0 {
					continue
				}
				out := bytes.Clone(data)
				out[i] ^= 1
				changed++
				// the verify reads the summaries whole: not the delta
				os.Remove(filepath.Join(state, "verify-delta"))
				for other, kept := range saved {
					if err := os.WriteFile(filepath.Join(state, other), kept, 0o600); err != nil {
						t.Fatal(err)
					}
				}
				if err := os.WriteFile(filepath.Join(state, name), out, 0o600); err != nil {
					t.Fatal(err)
				}
				rep, err := VerifyWith(a.l, VerifyOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if got := reportText(rep); got != want {
					t.Errorf("digest %s changed in %s: the answer differs\ngot:      %s\nfrom git: %s", d, name, got, want)
				}
			}
		}
	}
	if changed == 0 {
		t.Fatal("no digest found in verify-state or verify-keys")
	}
}

// Kept files of the formats before these (their checks sound) are read
// past: the answer is git's, with nothing changed since they were kept and
// with a record added since; and the verify keeps files of this format.
func TestOlderFormatsReadPast(t *testing.T) {
	testenv.Slow(t)
	a, rng := recordedClone(t, 8, 4)
	state := filepath.Join(a.repo.CommonDir(), "evolve")
	for i := 0; i < 2; i++ {
		if _, err := VerifyWith(a.l, VerifyOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	older := map[string]func([]byte) []byte{
		"verify-state": func(b []byte) []byte { b[len(verifyStateMagic)] = verifyStateFormat - 1; return resumState(b) },
		"verify-keys":  func(b []byte) []byte { b[len(keysMagic)] = keysFormat - 1; return resumKeys(b) },
		"verify-delta": func(b []byte) []byte { b[len(deltaMagic)] = deltaFormat - 1; return b }, // the CRC is of what follows
	}
	saved := map[string][]byte{}
	for name := range older {
		data, err := os.ReadFile(filepath.Join(state, name))
		if err != nil {
			t.Fatal(err)
		}
		saved[name] = data
	}
	tip := a.git("rev-parse", "refs/notes/evolve")
	a.record(rng)
	grown := a.git("rev-parse", "refs/notes/evolve")
	for _, at := range []string{tip, grown} {
		a.git("update-ref", "refs/notes/evolve", at)
		full, err := VerifyWith(a.l, VerifyOptions{FromGit: true})
		if err != nil {
			t.Fatal(err)
		}
		for name, old := range older {
			for other, data := range saved {
				if other == name {
					data = old(bytes.Clone(data))
				}
				if err := os.WriteFile(filepath.Join(state, other), data, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			rep, err := VerifyWith(a.l, VerifyOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got, want := reportText(rep), reportText(full); got != want {
				t.Errorf("%s of the format before, ledger at %s: the answer differs\ngot:      %s\nfrom git: %s", name, at[:7], got, want)
			}
		}
	}
	// all three of the format before: the verify reads from git, and
	// keeps what it read in this format
	for name, old := range older {
		if err := os.WriteFile(filepath.Join(state, name), old(bytes.Clone(saved[name])), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := VerifyWith(a.l, VerifyOptions{}); err != nil {
		t.Fatal(err)
	}
	for name, format := range map[string]int{"verify-state": verifyStateFormat, "verify-keys": keysFormat} {
		data, err := os.ReadFile(filepath.Join(state, name))
		if err != nil {
			t.Fatal(err)
		}
		if magic := map[string]string{"verify-state": verifyStateMagic, "verify-keys": keysMagic}[name]; len(data) <= len(magic) || int(data[len(magic)]) != format {
			t.Errorf("%s was not written anew in format %d", name, format)
		}
	}
}

// recordedClone is a repository of commits empty commits with records
// records on them, written with a seeded source (returned for more), in
// an environment of its own.
func recordedClone(t *testing.T, commits, records int) (*clone, *rand.Rand) {
	t.Helper()
	root := t.TempDir()
	for k, v := range map[string]string{
		"GIT_AUTHOR_NAME": "Ann", "GIT_COMMITTER_NAME": "Ann",
		"GIT_AUTHOR_EMAIL": "ann@example.com", "GIT_COMMITTER_EMAIL": "ann@example.com",
		"HOME": root, "XDG_CONFIG_HOME": filepath.Join(root, ".config"), "GIT_CONFIG_NOSYSTEM": "1",
		"GIT_EVOLVE_HOST": "box", "GIT_AUTHOR_DATE": "2026-01-02T03:04:05Z", "GIT_COMMITTER_DATE": "2026-01-02T03:04:05Z",
	} {
		t.Setenv(k, v)
	}
	dir := filepath.Join(root, "a")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	a := &clone{t: t, dir: dir}
	a.git("init", "-q", "-b", "main")
	for i := range commits {
		a.git("commit", "-q", "--allow-empty", "-m", fmt.Sprintf("c%d", i))
	}
	a = openClone(t, dir)
	rng := rand.New(rand.NewSource(7))
	for range records {
		a.record(rng)
	}
	return a, rng
}
