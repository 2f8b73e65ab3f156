package goals

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// A continuous goal's value_file is a file its check writes (a Go cover
// profile, a JUnit report), read for the value instead of the check's
// output: what the check prints, the code under test can print too; a file
// the tool writes, the code under test can only forge by writing that file.

// maxValueFile bounds the size of a value file that is read.
const maxValueFile = 4 << 20

// mtimeSlack is how far before the check's start a file's modification time
// may be and the file still count as written by the check: file systems
// stamp files with a clock coarser than time.Now (a tick; a second or two on
// some).
const mtimeSlack = 2 * time.Second

// valueFilePath checks a value_file as written: a path relative to where
// the check runs that does not leave it. It returns the path cleaned, with
// slashes.
func valueFilePath(name string) (string, error) {
	if strings.ContainsRune(name, 0) {
		return "", errors.New("must not contain a NUL byte")
	}
	if path.IsAbs(name) || filepath.IsAbs(name) || filepath.VolumeName(name) != "" || strings.HasPrefix(name, `\`) {
		return "", errors.New("must be a path relative to where the check runs, not an absolute one")
	}
	clean := path.Clean(filepath.ToSlash(name))
	if clean == "." {
		return "", errors.New("names where the check runs, not a file in it")
	}
	if !filepath.IsLocal(filepath.FromSlash(clean)) {
		return "", errors.New("must not leave where the check runs (..)")
	}
	return clean, nil
}

// statValueFile is the value file as it is before the check runs: nil when
// there is none (or it cannot be seen).
func statValueFile(dir, name string) fs.FileInfo {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil
	}
	defer root.Close()
	fi, err := root.Lstat(filepath.FromSlash(name))
	if err != nil {
		return nil
	}
	return fi
}

// readValueFile finds the goal's value in its value file, in dir, once its
// check has run: before is the file as it was before the check ran (nil:
// not there), start when the check started. It returns the value, or ""
// and why there is none, in the words of a result's reason.
func readValueFile(dir string, c *Continuous, before fs.FileInfo, start time.Time) (float64, string) {
	none := func(why string) (float64, string) { return 0, "no value in " + c.ValueFile + " (" + why + ")" }
	root, err := os.OpenRoot(dir)
	if err != nil {
		return none("unreadable: " + plainErr(err))
	}
	defer root.Close()
	name := filepath.FromSlash(c.ValueFile)
	fi, err := root.Lstat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return none("the check wrote no such file")
	case err != nil:
		return none("unreadable: " + plainErr(err))
	case fi.Mode()&fs.ModeSymlink != 0:
		return none("a symbolic link, not a file")
	case !fi.Mode().IsRegular():
		return none("not a regular file")
	case !written(before, fi, start):
		return none("not written by the check")
	case fi.Size() > maxValueFile:
		return none("larger than 4 MiB")
	}
	f, err := root.OpenFile(name, os.O_RDONLY|readFlags, 0)
	if err != nil {
		return none("unreadable: " + plainErr(err))
	}
	defer f.Close()
	if now, err := f.Stat(); err != nil || !os.SameFile(fi, now) || !now.Mode().IsRegular() {
		return none("replaced while it was read")
	}
	data, err := io.ReadAll(io.LimitReader(f, maxValueFile+1))
	switch {
	case err != nil:
		return none("unreadable: " + plainErr(err))
	case len(data) > maxValueFile:
		return none("larger than 4 MiB")
	}
	v, err := FileValue(data, c.Value)
	if err != nil {
		return none(err.Error())
	}
	return v, ""
}

// written reports whether the check wrote the file it left, after is, when
// before is the file as it was before the check ran (nil: not there): the
// file is new, or another, or changed, and its modification time is not
// before the check started (give or take mtimeSlack). A file from an
// earlier run left where the check runs gives no value.
func written(before, after fs.FileInfo, start time.Time) bool {
	if after.ModTime().Before(start.Add(-mtimeSlack)) {
		return false
	}
	return before == nil || !os.SameFile(before, after) || !before.ModTime().Equal(after.ModTime()) || before.Size() != after.Size()
}

// plainErr is an error without the path a file system error repeats.
func plainErr(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// FileValue finds a continuous goal's value in the content of its
// value_file: the first group (or the whole match) of re when there is one,
// as ExtractValue finds it in output. Without re, the file's kind decides:
// a Go cover profile (its first line "mode: set", "count" or "atomic")
// gives the percentage of statements covered, rounded to 0.1 as go tool
// cover prints it; a JUnit XML report (its root <testsuites> or
// <testsuite>) gives the number of test cases that passed (no failure,
// error or skipped in them); any other content, its last number. The error
// says, in words a result's reason can quote, why there is no value.
func FileValue(data []byte, re *regexp.Regexp) (float64, error) {
	if re != nil {
		if v, ok := ExtractValue(string(data), re); ok {
			return v, nil
		}
		return 0, errors.New("value's pattern does not match it")
	}
	if isCoverProfile(data) {
		return coverPercent(data)
	}
	if v, junit, err := junitPassed(data); junit {
		if err != nil {
			return 0, errors.New("a JUnit report that does not parse: " + err.Error())
		}
		return v, nil
	}
	if v, ok := ExtractValue(string(data), nil); ok {
		return v, nil
	}
	return 0, errors.New("no number in it")
}

// isCoverProfile reports whether data starts as a Go cover profile does.
func isCoverProfile(data []byte) bool {
	first, _, _ := bytes.Cut(data, []byte("\n"))
	switch string(bytes.TrimSuffix(first, []byte("\r"))) {
	case "mode: set", "mode: count", "mode: atomic":
		return true
	}
	return false
}

var coverPos = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9]+\.[0-9]+,[0-9]+\.[0-9]+$`) })

// coverPercent is the percentage of statements a Go cover profile covers:
// each block ("file:line.col,line.col statements count") counted once,
// covered when it ran. go test -coverprofile over several packages may
// list a block more than once: the largest count is its count (as go tool
// cover merges them, only whether it ran matters here). The percentage is
// rounded to 0.1 as go tool cover prints it; a profile of no statements
// gives none.
func coverPercent(data []byte) (float64, error) {
	type block struct {
		stmts int64
		count int64
	}
	blocks := map[string]block{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, maxValueFile+1)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSuffix(sc.Text(), "\r")
		if n == 1 || strings.TrimSpace(line) == "" || strings.HasPrefix(line, "mode: ") {
			continue
		}
		rest, count, ok1 := cutLast(line, ' ')
		rest, stmts, ok2 := cutLast(rest, ' ')
		file, pos, ok3 := cutLast(rest, ':')
		s, err1 := strconv.ParseInt(stmts, 10, 32)
		c, err2 := strconv.ParseInt(count, 10, 64)
		if !ok1 || !ok2 || !ok3 || file == "" || !coverPos().MatchString(pos) || err1 != nil || err2 != nil || s < 0 || c < 0 {
			return 0, fmt.Errorf("a cover profile whose line %d is not file:line.col,line.col statements count", n)
		}
		key := rest // file:line.col,line.col
		if b, seen := blocks[key]; seen {
			if b.stmts != s {
				return 0, fmt.Errorf("a cover profile whose line %d gives its block %d statements, not %d", n, s, b.stmts)
			}
			b.count = max(b.count, c)
			blocks[key] = b
			continue
		}
		blocks[key] = block{s, c}
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("a cover profile that cannot be read: %v", err)
	}
	var total, covered int64
	for _, b := range blocks {
		total += b.stmts
		if b.count > 0 {
			covered += b.stmts
		}
	}
	if total == 0 {
		// What go test says of a package without statements: no
		// percentage (a test binary that exited before its tests ran
		// leaves a profile of no blocks).
		return 0, errors.New("a cover profile of no statements")
	}
	v, _ := strconv.ParseFloat(strconv.FormatFloat(100*float64(covered)/float64(total), 'f', 1, 64), 64)
	return v, nil
}

// cutLast cuts s around its last sep.
func cutLast(s string, sep byte) (before, after string, found bool) {
	if i := strings.LastIndexByte(s, sep); i >= 0 {
		return s[:i], s[i+1:], true
	}
	return s, "", false
}

// junitPassed counts the test cases of a JUnit XML report that passed: a
// <testcase> with no <failure>, <error> or <skipped> in it (see
// JUnitCases), each one whatever its name. junit is false when data is not
// such a report (ErrNotJUnit); err says why a report does not parse.
func junitPassed(data []byte) (v float64, junit bool, err error) {
	passed := 0
	err = JUnitCases(data, func(_, _, outcome string) {
		if outcome == Pass {
			passed++
		}
	})
	switch {
	case errors.Is(err, ErrNotJUnit):
		return 0, false, nil
	case err != nil:
		return 0, true, err
	}
	return float64(passed), true, nil
}
