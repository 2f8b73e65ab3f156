package goals

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/git-evolve/git-evolve/redact"
)

// The bounds of an excerpt: its last lines, and at most this many bytes.
const (
	ExcerptLines = 40
	ExcerptBytes = 4 << 10
)

// Excerpt is the end of a command's output as a person would read it on a
// terminal, fit to keep in a record and to print: terminal escape
// sequences and other control characters removed (tabs and newlines stay),
// a line a carriage return rewrote shown as it was left, invalid UTF-8
// replaced, secrets replaced by redact.Marker, trailing blank lines
// dropped, then the last ExcerptLines lines and at most ExcerptBytes bytes
// of them (whole lines, or the end of a single long one). Text read from a
// note or a remote goes through it again before it is printed.
func Excerpt(out string) string {
	// Enough of the end to fill an excerpt once escapes are gone; a line
	// cut at the front is dropped, with the escape it may have cut.
	const window = 8 * ExcerptBytes
	if len(out) > window {
		out = out[len(out)-window:]
		if i := strings.IndexByte(out, '\n'); i >= 0 {
			out = out[i+1:]
		}
	}
	text := strings.TrimRight(redact.String(CleanText(out)), " \t\n")
	if text == "" {
		return ""
	}
	lines := strings.Split(text, "\n")
	if len(lines) > ExcerptLines {
		lines = lines[len(lines)-ExcerptLines:]
	}
	n := 0
	for i := len(lines) - 1; i >= 0; i-- {
		n += len(lines[i]) + 1
		if n > ExcerptBytes {
			if i == len(lines)-1 { // one line longer than the bound: its end
				l := lines[i]
				cut := len(l) - ExcerptBytes + len("…")
				for cut < len(l) && !utf8.RuneStart(l[cut]) {
					cut++
				}
				return "…" + l[cut:]
			}
			lines = lines[i+1:]
			break
		}
	}
	return strings.Join(lines, "\n")
}

// CleanText is s without what a terminal would act on instead of showing:
// escape sequences (CSI, OSC, DCS and two-byte ones), C0 and C1 control
// characters but tab and newline, and backspaces; a carriage return not
// before a newline starts its line again (what follows it is what a
// terminal shows last); invalid UTF-8 becomes U+FFFD.
func CleanText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	b := make([]byte, 0, len(s))
	lineStart := 0 // where the current line starts in b
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == 0x1b:
			i = skipEscape(s, i)
			continue
		case c == '\r':
			// The line is drawn again from its start when something other
			// than a line end follows.
			if i+1 < len(s) && s[i+1] != '\r' && s[i+1] != '\n' {
				b = b[:lineStart]
			}
			i++
			continue
		case c == '\n':
			b = append(b, '\n')
			lineStart = len(b)
			i++
			continue
		case c == '\t':
			b = append(b, c)
			i++
			continue
		case c < 0x20 || c == 0x7f:
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r < 0x80 || r > 0x9f { // not a C1 control
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return string(b)
}

// skipEscape returns the index after the escape sequence at s[i] (ESC).
func skipEscape(s string, i int) int {
	i++
	if i >= len(s) {
		return i
	}
	switch s[i] {
	case '[': // CSI: parameters and intermediates, then a final byte
		for i++; i < len(s) && s[i] >= 0x20 && s[i] <= 0x3f; i++ {
		}
		if i < len(s) && s[i] >= 0x40 && s[i] <= 0x7e {
			i++
		}
		return i // a broken sequence ends where it broke: the text after it stays
	case ']', 'P', 'X', '^', '_': // OSC, DCS, SOS, PM, APC: to BEL or ST
		// Stray binary output starts one that never ends: a line end ends
		// it here, so that the words after it stay.
		for i++; i < len(s) && s[i] != '\n'; i++ {
			if s[i] == 0x07 {
				return i + 1
			}
			if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '\\' {
				return i + 2
			}
		}
		return i
	}
	if s[i] >= 0x20 && s[i] <= 0x2f { // intermediates, then a final byte
		for i++; i < len(s) && s[i] >= 0x20 && s[i] <= 0x2f; i++ {
		}
	}
	if i < len(s) { // the final character, a whole rune
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return i
}

// cannotRun matches what a shell says of a command it could not run: bash's
// "name: command not found", dash's "name: not found", "name: No such file
// or directory" (a script, or env's interpreter), "name: cannot execute…"
// and "name: bad interpreter", "name: Permission denied". The name is the
// last field before the words.
var cannotRun = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?m)(?:^|: )([^:\n]+): (?:command not found|not found|No such file or directory|Permission denied|cannot execute[^\n]*)$|([^:\s]+): bad interpreter`)
})

// missingCommand names the command a check that could not run lacks, from
// its output: the command, or, for a script in dir whose #! interpreter
// is not there, the interpreter. path and home are the PATH and HOME the
// check ran with. "" when the output does not say.
//
// An English shell's words name it (cannotRun). A shell that speaks the
// user's language says it in other words ("bash: Zeile 1: ruff: Befehl
// nicht gefunden") but in the same shape, the name as the last field
// before the message, so on the output's last line that field is taken
// too, when what it names is what such a message says: absent (no file at
// a path, none of the name on path), not executable, or a script whose
// interpreter is absent.
func missingCommand(out, dir, path, home string) string {
	text := CleanText(out)
	ms := cannotRun().FindAllStringSubmatch(text, -1)
	if len(ms) == 0 {
		return unrunnableField(text, dir, path, home)
	}
	m := ms[len(ms)-1]
	name := m[1]
	if name == "" {
		name = m[2]
	}
	if n := nameIn(name); n != "" {
		name = n // "failed to run command 'x'": x
	} else {
		name = unquoted(name)
	}
	if interp := missingInterpreter(name, dir); interp != "" {
		return interp
	}
	return name
}

// unquoted is name without the spaces and the quotation marks a message
// in any language puts around it ('x', `x', „x“, « x », 「x」).
func unquoted(name string) string {
	return strings.TrimFunc(name, func(r rune) bool {
		return unicode.IsSpace(r) || r == '`' || unicode.In(r, unicode.Quotation_Mark, unicode.Pi, unicode.Pf, unicode.Ps, unicode.Pe)
	})
}

// unrunnableField is what missingCommand takes from a shell's message in
// words it does not know: on the last line of out, the field before the
// message (the fields are what ": " parts), or, when that field is words
// (a bad interpreter's "Defekter Interpreter"), the nearest before it that
// can be a command's name, when it names what cannot run (runnable). The
// lines before are the check's own output, never taken.
func unrunnableField(out, dir, path, home string) string {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	fields := strings.Split(lines[len(lines)-1], ": ")
	for j := len(fields) - 2; j >= 1; j-- {
		name := nameIn(fields[j])
		if name == "" {
			continue
		}
		if interp := missingInterpreter(name, dir); interp != "" {
			return interp
		}
		if !runnable(name, dir, path, home) {
			return name
		}
		break // the one that runs is no missing command
	}
	return ""
}

// nameIn is the name field gives: the field itself, quoted or not, when
// it can be a command's name, else the last part of it in quotation marks
// that can ("der Befehl „x“ konnte nicht ausgeführt werden": x); "" when
// none can.
func nameIn(field string) string {
	if name := unquoted(field); commandLike(name) {
		return name
	}
	parts := strings.FieldsFunc(field, func(r rune) bool {
		return r == '`' || unicode.In(r, unicode.Quotation_Mark, unicode.Pi, unicode.Pf)
	})
	for i := len(parts) - 1; i >= 0; i-- {
		if name := unquoted(parts[i]); commandLike(name) && parts[i] == strings.TrimSpace(parts[i]) {
			return name
		}
	}
	return ""
}

// commandLike says whether s can be the name of a command as a shell's
// message gives it: one word of printable ASCII (a message's words in a
// language written without spaces are not one).
func commandLike(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c >= 0x7f || c == ':' {
			return false
		}
	}
	return true
}

// runnable says whether the shell could run name in dir with path and
// home, as bash looks it up: a name with a slash is that file, else the
// first of that name in the directories of path (an empty entry, or an
// empty path, is dir; a leading ~ is home), executable either way.
func runnable(name, dir, path, home string) bool {
	executable := func(p string) bool {
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		// LookPath of a path checks that file as exec does: a regular
		// file this process may execute
		_, err := exec.LookPath(p)
		return err == nil
	}
	if strings.Contains(name, "/") {
		return executable(name)
	}
	for _, d := range strings.Split(path, ":") {
		switch {
		case d == "":
			d = "."
		case d == "~" || strings.HasPrefix(d, "~/"):
			d = home + d[1:]
		}
		if executable(filepath.Join(d, name)) {
			return true
		}
	}
	return false
}

// missingInterpreter is the interpreter the #! line of the script at name
// (relative to dir) names when it is not there; "" otherwise.
func missingInterpreter(name, dir string) string {
	p := name
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	f, err := os.Open(p)
	if err != nil {
		return ""
	}
	defer f.Close()
	head := make([]byte, 256)
	n, _ := io.ReadFull(f, head)
	line, _, _ := strings.Cut(string(head[:n]), "\n")
	rest, ok := strings.CutPrefix(line, "#!")
	if !ok {
		return ""
	}
	fields := strings.Fields(rest)
	if len(fields) == 0 {
		return ""
	}
	if _, err := os.Stat(fields[0]); err != nil {
		return fields[0]
	}
	if filepath.Base(fields[0]) == "env" && len(fields) > 1 {
		if _, err := exec.LookPath(fields[len(fields)-1]); err != nil {
			return fields[len(fields)-1]
		}
	}
	return ""
}
