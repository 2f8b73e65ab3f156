package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/git-evolve/git-evolve/internal/testenv"
	"github.com/git-evolve/git-evolve/ledger/store"
)

// What verify keeps (the file of the tip it verified; the view's file, and
// in it the summaries, the keys, the delta, the objects they stand for)
// changes no verdict however it is damaged: cut short, emptied,
// overwritten with random bytes, with bits flipped, or a directory in its
// place, a verify that reads it answers what a verify from git alone
// answers, with nothing changed since it was kept (the summaries read
// whole) and with a record added since (the delta). A section is damaged
// inside a container whose table holds.
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
	kept := []string{"verified", "ledger.view"}
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
	sections := keptSectionsOf(t, filepath.Join(state, "ledger.view"))
	for _, i := range verifySections {
		if sec := sections[i]; len(sec) == 0 {
			t.Fatalf("section %d was not kept", i)
		}
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
		do   func(data []byte) []byte // nil: a directory in the file's place
	}{
		{"cut short", func(data []byte) []byte { return data[:len(data)/2] }},
		{"emptied", func([]byte) []byte { return []byte{} }},
		{"random bytes", func(data []byte) []byte {
			out := make([]byte, len(data))
			rng.Read(out)
			return out
		}},
		{"bits flipped", func(data []byte) []byte {
			out := bytes.Clone(data)
			for i := 24 + rng.Intn(64); i < len(out); i += 64 + rng.Intn(64) {
				out[i] ^= 1 << rng.Intn(8)
			}
			return out
		}},
		{"one bit flipped", func(data []byte) []byte {
			out := bytes.Clone(data)
			out[len(out)/2] ^= 4
			return out
		}},
		{"a directory", nil},
	}
	names := map[int]string{secState: "the state", secKeys: "the keys", secDelta: "the delta", secObjects: "the objects"}
	for _, target := range []string{"verified", "ledger.view", "the state", "the keys", "the delta", "the objects"} {
		for _, d := range damages {
			for _, c := range []struct {
				what, at, want string
			}{{"nothing since", tip, wantTip}, {"a record since", grown, wantGrown}} {
				restore(c.at)
				file := target
				if !slices.Contains(kept, target) {
					file = "ledger.view"
				}
				path := filepath.Join(state, file)
				switch {
				case file != target && d.do == nil:
					continue // a section is no file
				case file != target:
					secs := sections
					for i, name := range names {
						if name == target {
							secs[i] = d.do(bytes.Clone(sections[i]))
						}
					}
					if target == "the state" {
						// read: a verify with the delta reads none
						// of it
						secs[secDelta] = nil
					}
					writeKeptSections(t, path, secs)
				case d.do == nil:
					if err := os.Remove(path); err != nil {
						t.Fatal(err)
					}
					if err := os.MkdirAll(filepath.Join(path, "inside"), 0o755); err != nil {
						t.Fatal(err)
					}
				default:
					if err := os.WriteFile(path, d.do(saved[file]), 0o600); err != nil {
						t.Fatal(err)
					}
				}
				verifyGives(t, a, c.want, fmt.Sprintf("%s %s, %s", target, d.name, c.what))
			}
		}
	}
}

// A digest in the kept summaries changed to another digest (the section
// still decodes: kept as text or in binary, in the state or in the keys it
// reads its records' first summaries from): the answer is git's.
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
	path := store.ViewPath(a.repo)
	saved := keptSectionsOf(t, path)
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
	for _, sec := range []int{secState, secKeys} {
		for _, d := range digests {
			bin, err := hex.DecodeString(d)
			if err != nil {
				t.Fatal(err)
			}
			for _, form := range [][]byte{[]byte(d), bin} {
				i := bytes.Index(saved[sec], form)
				if i < 0 {
					continue
				}
				secs := saved
				secs[sec] = bytes.Clone(saved[sec])
				secs[sec][i] ^= 1
				changed++
				// the verify reads the summaries whole: not the delta
				secs[secDelta] = nil
				writeKeptSections(t, path, secs)
				verifyGives(t, a, want, fmt.Sprintf("digest %s changed in section %d", d, sec))
			}
		}
	}
	if changed == 0 {
		t.Fatal("no digest found in the state or the keys")
	}
}

// Kept sections of the formats before these (their checks sound), and a
// container of the format before, are read past: the answer is git's, with
// nothing changed since they were kept and with a record added since; and
// the verify keeps them in this format. So are the files an older
// git-evolve kept them in, which the verify removes.
func TestOlderFormatsReadPast(t *testing.T) {
	testenv.Slow(t)
	a, rng := recordedClone(t, 8, 4)
	state := filepath.Join(a.repo.CommonDir(), "evolve")
	path := filepath.Join(state, "ledger.view")
	for i := 0; i < 2; i++ {
		if _, err := VerifyWith(a.l, VerifyOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	older := map[int]func([]byte) []byte{
		secState: func(b []byte) []byte { b[len(verifyStateMagic)] = verifyStateFormat - 1; return resumState(b) },
		secKeys:  func(b []byte) []byte { b[len(keysMagic)] = keysFormat - 1; return resumKeys(b) },
		secDelta: func(b []byte) []byte { b[len(deltaMagic)] = deltaFormat - 1; return b }, // the CRC is of what follows
	}
	saved := keptSectionsOf(t, path)
	whole, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
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
		check := func(what string) {
			t.Helper()
			verifyGives(t, a, reportText(full), fmt.Sprintf("%s, ledger at %s", what, at[:7]))
		}
		for sec, old := range older {
			secs := saved
			secs[sec] = old(bytes.Clone(saved[sec]))
			if sec == secState {
				secs[secDelta] = nil // read: a verify with the delta reads none of it
			}
			writeKeptSections(t, path, secs)
			check(fmt.Sprintf("section %d of the format before", sec))
		}
		// the container of the format before (its magic line's number one
		// less), its table's seal made to hold
		b := bytes.Clone(whole)
		magic := bytes.IndexByte(b, '\n')
		b[magic-1]--
		head, tail := magic+1+16, store.Sections*16+8+16
		seal := sha256.Sum256(append(bytes.Clone(b[:head]), b[len(b)-tail:len(b)-16]...))
		copy(b[len(b)-16:], seal[:16])
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		check("the view's file of the format before")
		// the files an older git-evolve kept, as it kept them: read past,
		// and removed once the view is written anew
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		olderFiles := []string{"verify-kept", "verify-state", "verify-keys", "verify-delta", "verify-objects", "merged", "copies"}
		for i, name := range olderFiles {
			if err := os.WriteFile(filepath.Join(state, name), saved[min(i, len(saved)-1)], 0o600); err != nil {
				t.Fatal(err)
			}
		}
		check("the files an older git-evolve kept")
		for _, name := range olderFiles {
			if _, err := os.Stat(filepath.Join(state, name)); err == nil {
				t.Errorf("%s is still there after a verify wrote the view", name)
			}
		}
	}
	// all three sections of the format before: the verify reads from git,
	// and keeps what it read in this format
	secs := saved
	for sec, old := range older {
		secs[sec] = old(bytes.Clone(saved[sec]))
	}
	writeKeptSections(t, path, secs)
	if _, err := VerifyWith(a.l, VerifyOptions{}); err != nil {
		t.Fatal(err)
	}
	now := keptSectionsOf(t, path)
	for sec, format := range map[int]int{secState: verifyStateFormat, secKeys: keysFormat, secDelta: deltaFormat} {
		magic := map[int]string{secState: verifyStateMagic, secKeys: keysMagic, secDelta: deltaMagic}[sec]
		if data := now[sec]; len(data) <= len(magic) || int(data[len(magic)]) != format {
			t.Errorf("section %d was not written anew in format %d", sec, format)
		}
	}
}

// verifyGives runs a verify of a's ledger, building on what it kept, and
// reports what (the case) when its answer is not want, git's.
func verifyGives(t *testing.T, a *clone, want, what string) {
	t.Helper()
	rep, err := VerifyWith(a.l, VerifyOptions{})
	if err != nil {
		t.Errorf("%s: %v", what, err)
		return
	}
	if got := reportText(rep); got != want {
		t.Errorf("%s: the answer differs\ngot:      %s\nfrom git: %s", what, got, want)
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
