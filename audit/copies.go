package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"strconv"
	"strings"

	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/ledger/store"
)

// A read of the ledger takes a remote-tracking copy beside the local one
// only when the copy passes CheckIncoming, the check sync makes before it
// merges that copy: one set of rules for both (store.Ledger.CheckCopies). The
// answer is kept in the view's copies section, keyed by everything it is made from:
// the copy's tip, the local ledger's tip, the acknowledgements' tip (an
// accepted notes commit brings no breach), what changes the history git
// walks (shallow, grafts, replace refs) and the git-evolve binary whose
// rules made it. So what a fetch brought is checked once, by the first
// read after it, and later reads of the same copy read one small section.
// The section is a cache: a missing, damaged or foreign one, or a key it
// lacks, means the copy is checked again.

// copiesFormat is the layout of the copies section and what its keys
// digest.
const copiesFormat = 2

// maxKeptCopies bounds the answers kept (the newest first), and
// maxCopiesFile the section read back.
const (
	maxKeptCopies = 16
	maxCopiesFile = 64 << 10
)

// CopyCheck is the check reads make of a remote-tracking copy of the
// ledger (store.Ledger.CheckCopies): the copy is refused when
// CheckIncoming finds that it would bring this clone's ledger a breach.
func CopyCheck(repo *gitstore.Repo) store.CopyCheck {
	return func(local, copy gitstore.Hash) (*store.CopyRefusal, error) {
		return checkCopy(repo, local, copy)
	}
}

func checkCopy(repo *gitstore.Repo, local, copy gitstore.Hash) (*store.CopyRefusal, error) {
	key, keyed := copyKey(repo, local, copy)
	kept := readKeptCopiesAt(store.ViewPath(repo))
	if keyed {
		for _, k := range kept {
			if k.key == key {
				return k.refusal, nil
			}
		}
	}
	found, err := CheckIncoming(repo, local, copy)
	if err != nil {
		return nil, err
	}
	var r *store.CopyRefusal
	if len(found) > 0 {
		if r, err = refusalOf(repo, local, copy, found); err != nil {
			return nil, err
		}
	}
	if keyed {
		writeKeptCopies(store.ViewPath(repo), append([]keptCopy{{key, r}}, kept...))
	}
	return r, nil
}

// copyKey digests what the check of copy beside local is made from; false
// when one of those cannot be read (then nothing is kept).
func copyKey(repo *gitstore.Repo, local, copy gitstore.Hash) (string, bool) {
	bin, ok := binaryID()
	if !ok {
		return "", false
	}
	history, ok := historyKey(repo)
	if !ok {
		return "", false
	}
	control, there, err := repo.RefHash(ControlRef)
	if err != nil {
		return "", false
	}
	sum := sha256.New()
	fmt.Fprintf(sum, "git-evolve copies %d\nbinary %s\nhistory %s\n", copiesFormat, bin, history)
	fmt.Fprintf(sum, "local %s\ncopy %s\ncontrol %s %t\n", local, copy, control, there)
	return hex.EncodeToString(sum.Sum(nil)), true
}

// refusalOf is the refusal of a copy whose check found breaches (found):
// the first, and the notes commit that brought it.
func refusalOf(repo *gitstore.Repo, local, copy gitstore.Hash, found []Finding) (*store.CopyRefusal, error) {
	f := found[0]
	r := &store.CopyRefusal{Breaches: len(found), Reason: f.Message}
	var by gitstore.Hash
	if h, err := gitstore.ParseHash(f.NotesCommit); err == nil {
		by = h
	} else if obj, err := gitstore.ParseHash(f.Commit); err == nil {
		// a note that does not parse: the notes commit of the copy's own
		// that wrote it as the copy has it
		if by, err = broughtBy(repo, local, copy, obj); err != nil {
			return nil, err
		}
	}
	if by.IsZero() {
		return r, nil
	}
	ci, err := repo.Commit(by)
	if err != nil {
		return r, nil // named by the finding alone
	}
	r.NotesCommit = by
	r.By = fmt.Sprintf("%s, %s", oneLine(ci.Committer.Name), ci.Committer.When.UTC().Format("2006-01-02 15:04"))
	r.Reason = strings.TrimPrefix(f.Message, whoMade(ci)+" ")
	return r, nil
}

// broughtBy is the newest notes commit of to that from lacks to change the
// note on obj (zero when none did).
func broughtBy(repo *gitstore.Repo, from, to, obj gitstore.Hash) (gitstore.Hash, error) {
	args := []string{to.String()}
	if !from.IsZero() {
		args = append(args, "^"+from.String())
	}
	commits, err := repo.RevList(args...)
	if err != nil {
		return gitstore.ZeroHash, err
	}
	for _, c := range commits {
		ci, err := repo.Commit(c)
		if err != nil {
			return gitstore.ZeroHash, err
		}
		snap, err := repo.NotesAt(c)
		if err != nil {
			return gitstore.ZeroHash, err
		}
		base := repo.EmptyNotes()
		if len(ci.Parents) > 0 {
			if base, err = repo.NotesAt(ci.Parents[0]); err != nil {
				base = repo.EmptyNotes()
			}
		}
		changes, err := snap.DiffNotes(base)
		if err != nil {
			return gitstore.ZeroHash, err
		}
		for _, ch := range changes {
			if ch.Object == obj {
				return c, nil
			}
		}
	}
	return gitstore.ZeroHash, nil
}

// keptCopy is one answer kept: nil refusal for a copy that may be read.
type keptCopy struct {
	key     string
	refusal *store.CopyRefusal
}

// readKeptCopiesAt reads the copies section of the view's file at path: a
// line an answer,
//
//	<key> ok
//	<key> refused <breaches> <notes commit or -> <by, quoted> <reason, quoted>
//
// after a first line naming the format, and before a last one, `crc32c`
// and the CRC-32C of every byte before it (8 hex digits): a section whose
// CRC does not hold is read as none (a damaged byte would otherwise say
// another refusal). Lines that do not read so are passed by.
func readKeptCopiesAt(path string) []keptCopy {
	k := store.OpenKept(path)
	defer k.Release()
	return parseKeptCopies(k.Section(store.SecCopies))
}

// parseKeptCopies reads a copies section.
func parseKeptCopies(data []byte) []keptCopy {
	if len(data) > maxCopiesFile {
		return nil
	}
	// the last line: the CRC-32C of every byte before it
	i := bytes.LastIndex(data, []byte("\ncrc32c "))
	if i < 0 || string(data[i+len("\ncrc32c "):]) != fmt.Sprintf("%08x\n", crc32.Checksum(data[:i+1], castagnoliTable())) {
		return nil
	}
	header, body, _ := bytes.Cut(data[:i], []byte("\n"))
	if string(header) != fmt.Sprintf("git-evolve copies %d", copiesFormat) {
		return nil
	}
	var out []keptCopy
	for _, line := range strings.Split(string(body), "\n") {
		if k, ok := parseKeptCopy(line); ok && len(out) < maxKeptCopies {
			out = append(out, k)
		}
	}
	return out
}

func parseKeptCopy(line string) (keptCopy, bool) {
	key, rest, ok := strings.Cut(line, " ")
	if _, err := hex.DecodeString(key); !ok || err != nil || len(key) != 2*sha256.Size {
		return keptCopy{}, false
	}
	if rest == "ok" {
		return keptCopy{key: key}, true
	}
	rest, ok = strings.CutPrefix(rest, "refused ")
	if !ok {
		return keptCopy{}, false
	}
	count, rest, _ := strings.Cut(rest, " ")
	commit, rest, _ := strings.Cut(rest, " ")
	n, err := strconv.Atoi(count)
	if err != nil || n < 1 {
		return keptCopy{}, false
	}
	r := &store.CopyRefusal{Breaches: n}
	if commit != "-" {
		if r.NotesCommit, err = gitstore.ParseHash(commit); err != nil {
			return keptCopy{}, false
		}
	}
	for _, dst := range []*string{&r.By, &r.Reason} {
		q, err := strconv.QuotedPrefix(rest)
		if err != nil {
			return keptCopy{}, false
		}
		if *dst, err = strconv.Unquote(q); err != nil {
			return keptCopy{}, false
		}
		rest = strings.TrimPrefix(rest[len(q):], " ")
	}
	if rest != "" {
		return keptCopy{}, false
	}
	return keptCopy{key: key, refusal: r}, true
}

// writeKeptCopies writes the copies section of the view's file at path
// with the first
// maxKeptCopies of kept, each key once; a refusal of no breach is no
// answer, and is left out. A file that cannot be written is let be.
func writeKeptCopies(path string, kept []keptCopy) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "git-evolve copies %d\n", copiesFormat)
	seen := map[string]bool{}
	for _, k := range kept {
		if seen[k.key] || len(seen) == maxKeptCopies || k.refusal != nil && k.refusal.Breaches < 1 {
			continue
		}
		seen[k.key] = true
		if k.refusal == nil {
			fmt.Fprintf(&b, "%s ok\n", k.key)
			continue
		}
		r := k.refusal
		commit := "-"
		if !r.NotesCommit.IsZero() {
			commit = r.NotesCommit.String()
		}
		fmt.Fprintf(&b, "%s refused %d %s %s %s\n", k.key, r.Breaches, commit, strconv.Quote(r.By), strconv.Quote(r.Reason))
	}
	fmt.Fprintf(&b, "crc32c %08x\n", crc32.Checksum(b.Bytes(), castagnoliTable()))
	var parts [store.Sections]*store.Part
	parts[store.SecCopies] = &store.Part{Bytes: b.Bytes()}
	if err := store.PutKept(path, nil, parts); err != nil {
		gitstore.Tracef("copies: the answers are not kept: %v", err)
	}
}
