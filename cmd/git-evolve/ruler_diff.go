package main

import (
	"bytes"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/sergi/go-diff/diffmatchpatch"
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
