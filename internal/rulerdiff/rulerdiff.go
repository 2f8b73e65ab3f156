// Package rulerdiff reads the diffs of the ruler files a finished cycle
// changed (the files that judge it, which its record lists), between the
// commit it started from and its work as judged: a unified diff of each
// text file, a summary of the others (binary, too large, a submodule, not
// in this clone), within bounds (a file's size, the lines of a file and of
// all, the number of files). What show prints and show --json's
// ruler_diff. The lines hold the files' bytes as they are: the caller
// escapes them for where it prints them.
package rulerdiff

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/sergi/go-diff/diffmatchpatch"

	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/ledger"
)

// The bounds of the ruler diffs show prints: a file larger than
// maxDiffBytes on either side is said by its sizes, a file's diff stops
// after maxFileDiffLines lines and all of them after maxDiffLines, and at
// most maxDiffFiles files are read.
const (
	diffContext      = 3
	maxDiffBytes     = 1 << 20
	maxFileDiffLines = 200
	maxDiffLines     = 1000
	maxDiffFiles     = 200
	binarySniff      = 8 << 10
)

// unifiedDiff returns the line diff of a and b as the hunks of a unified
// diff, without file headers: each hunk an "@@ -l,n +l,n @@" line, then its
// lines: " " unchanged (diffContext of them around each change), "-" a's,
// "+" b's, and "\ No newline at end of file" after a last line that has
// none. A line is what ends in "\n", or the text's end. At most max lines
// are returned; more is how many were left out. The lines hold the texts'
// bytes as they are: the caller escapes them for where it prints them.
func unifiedDiff(a, b string, max int) (lines []string, more int) {
	type line struct {
		op    byte // ' ', '-' or '+'
		text  string
		noEOL bool
	}
	dmp := diffmatchpatch.New()
	ca, cb, index := dmp.DiffLinesToChars(a, b)
	var ops []line
	for _, d := range dmp.DiffCharsToLines(dmp.DiffMain(ca, cb, false), index) {
		op := byte(' ')
		switch d.Type {
		case diffmatchpatch.DiffDelete:
			op = '-'
		case diffmatchpatch.DiffInsert:
			op = '+'
		}
		for text := d.Text; text != ""; {
			l, rest, found := strings.Cut(text, "\n")
			ops = append(ops, line{op, l, !found})
			text = rest
		}
	}
	// oldAt[i] and newAt[i]: the lines of a and of b before ops[i].
	n := len(ops)
	oldAt, newAt := make([]int, n+1), make([]int, n+1)
	for i, o := range ops {
		oldAt[i+1], newAt[i+1] = oldAt[i], newAt[i]
		if o.op != '+' {
			oldAt[i+1]++
		}
		if o.op != '-' {
			newAt[i+1]++
		}
	}
	span := func(at []int, from, to int) string {
		start, count := at[from]+1, at[to]-at[from]
		switch count {
		case 0:
			return strconv.Itoa(start-1) + ",0"
		case 1:
			return strconv.Itoa(start)
		}
		return strconv.Itoa(start) + "," + strconv.Itoa(count)
	}
	var out []string
	for i := 0; i < n; {
		if ops[i].op == ' ' {
			i++
			continue
		}
		// A hunk: this change and every one after it that fewer than
		// 2×diffContext unchanged lines keep apart, with their context.
		from, last := max0(i-diffContext), i
		for j := i; j < n; {
			if ops[j].op != ' ' {
				last, j = j, j+1
				continue
			}
			k := j
			for k < n && ops[k].op == ' ' {
				k++
			}
			if k == n || k-j > 2*diffContext {
				break
			}
			j = k
		}
		to := min(n, last+1+diffContext)
		out = append(out, "@@ -"+span(oldAt, from, to)+" +"+span(newAt, from, to)+" @@")
		for _, o := range ops[from:to] {
			out = append(out, string(o.op)+o.text)
			if o.noEOL {
				out = append(out, `\ No newline at end of file`)
			}
		}
		i = to
	}
	if len(out) > max {
		return out[:max0(max)], len(out) - max0(max)
	}
	return out, 0
}

func max0(n int) int { return max(n, 0) }

// isBinary says whether a file's content is no text to diff: a NUL in its
// first 8 KiB (as git tells), or not valid UTF-8.
func isBinary(data []byte) bool {
	return bytes.IndexByte(data[:min(len(data), binarySniff)], 0) >= 0 || !utf8.Valid(data)
}

// Diffs are the diffs of the ruler files a cycle changed, between the
// commit it started from and its work as judged (show --json's ruler_diff).
type Diffs struct {
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
	// Saved says To is the saved work of a regressed cycle, not a
	// delivered commit.
	Saved bool `json:"saved,omitempty"`
	// Missing says why there are no diffs: the work is not here, or
	// cannot be read.
	Missing   string `json:"missing,omitempty"`
	Files     []File `json:"files,omitempty"`
	MoreFiles int    `json:"more_files,omitempty"`
}

// File is one ruler file's change: its lines (a unified diff, its
// headers first), or a summary instead (a binary or large file).
type File struct {
	Change   string   `json:"change"` // "M add_test.go"
	Accepted bool     `json:"accepted,omitempty"`
	Summary  string   `json:"summary,omitempty"`
	Lines    []string `json:"lines,omitempty"`
	More     int      `json:"more,omitempty"` // lines left out
}

// Read reads the diffs of the ruler files a finished cycle's
// record lists (nil when it lists none). What it cannot read, it says in
// Missing: the record is shown all the same.
func Read(repo *gitstore.Repo, r *ledger.Record) *Diffs {
	d := ledger.Disclose(r)
	if len(d.Ruler) == 0 {
		return nil
	}
	j, ok := JudgedOf(r)
	if !ok {
		return &Diffs{Missing: "none: the record names no work of the cycle's to compare with its start"}
	}
	out := &Diffs{From: j.Start.String(), To: j.Work.String(), Saved: j.Saved}
	listed := d.Ruler[:min(len(d.Ruler), maxDiffFiles)]
	out.MoreFiles = len(d.Ruler) - len(listed)
	files, err := RulerFiles(repo, j, listed)
	if errors.Is(err, ErrWorkNotHere) {
		out.Missing = "not here: the work as judged (" + j.Work.Short() + ") or the cycle's start is not in this clone"
		if j.Saved {
			out.Missing = "not here: the saved work " + j.Work.Short() + " is not in this clone (the clone that judged the cycle keeps it under " + ledger.RegressedRef(r.ID) + ")"
		}
		return out
	}
	if err != nil {
		out.Missing = "cannot be read: " + err.Error()
		return out
	}
	// The blobs to diff, read in one exchange.
	textual := func(mode uint32, size int64) bool {
		return mode == 0 || (mode&0o170000 == 0o100000 || mode == 0o120000) && size >= 0 && size <= maxDiffBytes
	}
	var want []gitstore.Hash
	for _, f := range files {
		if !f.Same && textual(f.OldMode, f.OldSize) && textual(f.NewMode, f.NewSize) {
			want = append(want, f.Old, f.New) // a zero hash reads as nil
		}
	}
	blobs, err := repo.ReadBlobs(want)
	if err != nil {
		out.Missing = "cannot be read: " + err.Error()
		return out
	}
	budget := maxDiffLines
	for _, f := range files {
		rd := File{Change: f.String(), Accepted: f.Accepted != nil}
		sizes := func(what string) string {
			switch {
			case f.OldMode == 0:
				return fmt.Sprintf("%s, added: %d bytes", what, f.NewSize)
			case f.NewMode == 0:
				return fmt.Sprintf("%s, removed: %d bytes", what, f.OldSize)
			}
			return fmt.Sprintf("%s, %d → %d bytes", what, f.OldSize, f.NewSize)
		}
		switch {
		case f.Same:
			rd.Summary = "the start and the work hold it alike"
		case f.OldMode == 0o160000 || f.NewMode == 0o160000:
			rd.Summary = "a submodule: " + shortOrNone(f.Old, f.OldMode) + " → " + shortOrNone(f.New, f.NewMode)
		case f.OldMode != 0 && f.OldSize < 0 || f.NewMode != 0 && f.NewSize < 0:
			rd.Summary = "its content is not in this clone"
		case !textual(f.OldMode, f.OldSize) || !textual(f.NewMode, f.NewSize):
			rd.Summary = sizes("too large to show")
		default:
			old, new := blobs[0], blobs[1]
			blobs = blobs[2:]
			switch {
			case isBinary(old) || isBinary(new):
				rd.Summary = sizes("binary")
			case bytes.Equal(old, new):
				rd.Summary = fmt.Sprintf("the same content, mode %o → %o", f.OldMode, f.NewMode)
			case budget <= 0:
				rd.Summary = "not shown: the diffs above reached their bound"
			default:
				a, b := "a/"+f.Path, "b/"+f.Path
				if f.OldMode == 0 {
					a = "/dev/null"
				}
				if f.NewMode == 0 {
					b = "/dev/null"
				}
				rd.Lines, rd.More = unifiedDiff(string(old), string(new), min(maxFileDiffLines, budget)-2)
				rd.Lines = append([]string{"--- " + a, "+++ " + b}, rd.Lines...)
				budget -= len(rd.Lines)
			}
		}
		out.Files = append(out.Files, rd)
	}
	return out
}

func shortOrNone(h gitstore.Hash, mode uint32) string {
	if mode == 0 {
		return "none"
	}
	return h.Short()
}
