package audit

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/git-evolve/git-evolve/cycle"
	"github.com/git-evolve/git-evolve/gitstore"
)

// The last report verify made is kept under the git dir with a digest of
// everything it was made from: the ledger's tip (and its remote-tracking
// copies' when it reads them), the acknowledgements' tip, HEAD (whose trailers were checked), the tip this clone verified,
// the saved work and its refs, what changes the history git log walks
// (shallow, grafts, replace refs) and the git-evolve binary itself. A
// verify whose inputs digest the same answers with that report and reads
// nothing else: the pre-push hook and sync pay for the ledger only when it
// changed. The file is a cache: a missing, damaged, foreign or stale one
// is read past, and the report is made again and kept.

// verifyCacheFormat is the layout of the kept report; a file of another
// layout is not read. Format 3 keeps a SHA-256 of the report as written
// (format 2 had none, and a count or a finding changed in the file, which
// still parsed, was the answer).
const verifyCacheFormat = 3

type keptReport struct {
	Format int             `json:"format"`
	Key    string          `json:"key"`
	Sum    string          `json:"sum"`    // SHA-256 of Report, as written
	Report json.RawMessage `json:"report"` // of every check
}

// reportSum is the digest a kept report is checked by.
func reportSum(report []byte) string {
	sum := sha256.Sum256(report)
	return hex.EncodeToString(sum[:])
}

func verifyCachePath(repo *gitstore.Repo) string {
	return filepath.Join(repo.CommonDir(), "evolve", "verify-report")
}

// maxKeptReport bounds the kept report read back.
const maxKeptReport = 64 << 20

// fullOnlyKinds are the findings only a verify of every check makes (the
// presence of the records' commits, cycle numbers taken twice): a report
// of every check answers a BreachesOnly verify without them.
var fullOnlyKinds = map[string]bool{"not-fetched": true, "not-a-commit": true, "number-collision": true}

// verifyInputs is what a report is made from, read before it is made.
type verifyInputs struct {
	sum      hash.Hash // everything but the verified tip
	verified []byte    // the verified file as it was
}

// readVerifyInputs reads what a verify with o is made from; ok is false
// when that verify is not kept (other revisions than HEAD, the whole
// history asked for, an input that cannot be read).
func readVerifyInputs(l *cycle.Ledger, o VerifyOptions, rd *ledgerReads) (in verifyInputs, ok bool) {
	if len(o.Revs) > 0 || o.FullHistory || !rd.historyOK {
		return in, false
	}
	repo := l.Repo()
	sum := sha256.New()
	fmt.Fprintf(sum, "git-evolve verify report %d\n", verifyCacheFormat)
	bin, ok := binaryID()
	if !ok {
		return in, false
	}
	fmt.Fprintf(sum, "binary %s\n", bin)
	// What the ledger is read from: the local notes ref, and the
	// remote-tracking copies that hold what it lacks (a ledger made Local
	// reads the first alone; with every copy merged, both read the same).
	fmt.Fprintf(sum, "sources %d\n", len(rd.sources))
	for _, h := range rd.sources {
		fmt.Fprintf(sum, "%s\n", h)
	}
	for _, ref := range []string{cycle.NotesRef, ControlRef, "HEAD"} {
		h, there, err := repo.RefHash(ref)
		if err != nil {
			return in, false
		}
		fmt.Fprintf(sum, "ref %s %s %t\n", ref, h, there)
	}
	fmt.Fprintf(sum, "history %s\n", rd.history)
	// The ledger's reflog, which names tips it no longer descends from.
	if fi, err := os.Stat(filepath.Join(repo.CommonDir(), "logs", filepath.FromSlash(cycle.NotesRef))); err == nil {
		fmt.Fprintf(sum, "reflog %d\n", fi.Size())
	}
	// A gc, which can prune the commits records are on, makes new packs.
	fmt.Fprintf(sum, "packs %s\n", rd.packs)
	saves, err := l.Saves()
	if err != nil {
		return in, false
	}
	writeRefs(sum, "save", saves)
	now := map[string]gitstore.Hash{}
	for ref := range saves {
		h, there, err := repo.RefHash(ref)
		if err != nil {
			return in, false
		}
		if there {
			now[ref] = h
			continue
		}
		// A deleted one is reported with whether its commit is still here.
		present, err := repo.HasObject(saves[ref])
		if err != nil {
			return in, false
		}
		fmt.Fprintf(sum, "saved commit %s %t\n", saves[ref], present)
	}
	writeRefs(sum, "saved ref", now)
	in.sum = sum
	in.verified, err = os.ReadFile(verifiedPath(repo))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return in, false
	}
	return in, true
}

// key is the digest of the inputs with verified as the verified file's
// content.
func (in verifyInputs) key(verified []byte) string {
	var sum [sha256.Size]byte
	h := in.sum.Sum(sum[:0])
	last := sha256.New()
	last.Write(h)
	fmt.Fprintf(last, "verified %d\n", len(verified))
	last.Write(verified)
	return hex.EncodeToString(last.Sum(nil))
}

func hashFile(sum io.Writer, path string) bool {
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false
	}
	fmt.Fprintf(sum, "file %q %t %d\n", filepath.Base(path), err == nil, len(data))
	sum.Write(data)
	return true
}

func writeRefs(sum io.Writer, what string, refs map[string]gitstore.Hash) {
	names := make([]string, 0, len(refs))
	for name := range refs {
		names = append(names, name)
	}
	slices.Sort(names)
	fmt.Fprintf(sum, "%s %d\n", what, len(names))
	for _, name := range names {
		fmt.Fprintf(sum, "%q %s\n", name, refs[name])
	}
}

// keptVerify is the kept report for in, when there is one that answers a
// verify with o: made from the same inputs, and, for a verify of every
// check, with none of the commits it found missing fetched since.
func keptVerify(repo *gitstore.Repo, in verifyInputs, o VerifyOptions) *Report {
	data, ok := readBounded(verifyCachePath(repo), maxKeptReport)
	if !ok {
		return nil
	}
	var kept keptReport
	if json.Unmarshal(data, &kept) != nil || kept.Format != verifyCacheFormat || kept.Report == nil ||
		kept.Key != in.key(in.verified) || kept.Sum != reportSum(kept.Report) {
		return nil
	}
	var rep *Report
	if json.Unmarshal(kept.Report, &rep) != nil || rep == nil {
		return nil
	}
	if rep.Findings == nil {
		rep.Findings = []Finding{}
	}
	rep.History = 0 // nothing of the ledger's history was read this time
	if o.BreachesOnly {
		return breachesOnly(rep)
	}
	for _, f := range rep.Findings {
		if f.Kind != "not-fetched" {
			continue
		}
		h, err := gitstore.ParseHash(f.Commit)
		if err != nil {
			return nil
		}
		if there, err := repo.HasObject(h); err != nil || there {
			return nil // fetched since: the report is made again
		}
	}
	return rep
}

// keepVerify keeps rep, made from in, when nothing it was made from
// changed while it was made. A file that cannot be written is let be: the
// next verify makes its report again.
func keepVerify(l *cycle.Ledger, in verifyInputs, rep *Report) {
	repo := l.Repo()
	rd, err := readLedgerReads(l)
	if err != nil {
		return
	}
	after, ok := readVerifyInputs(l, VerifyOptions{}, rd)
	if !ok {
		return
	}
	verified := in.verified
	if now, err := os.ReadFile(verifiedPath(repo)); err == nil && string(now) != string(in.verified) {
		if rep.sinceVerified > 0 {
			return // a verify from the tip just verified would not say those again
		}
		verified = now // this verify wrote it
	}
	if after.key(verified) != in.key(verified) {
		return // the ledger (or HEAD, …) moved while it was read
	}
	report, err := json.Marshal(rep)
	if err != nil {
		return
	}
	data, err := json.Marshal(keptReport{Format: verifyCacheFormat, Key: in.key(verified), Sum: reportSum(report), Report: report})
	if err != nil {
		return
	}
	_ = replaceFile(verifyCachePath(repo), func(w *bufio.Writer) { w.Write(data) })
}

// replaceFile writes path anew with what write writes (cycle.WriteStateFile:
// a reader sees the old file or the new one, never a part).
func replaceFile(path string, write func(*bufio.Writer)) error {
	return cycle.WriteStateFile(path, func(w *bufio.Writer) error {
		write(w)
		return nil
	})
}
