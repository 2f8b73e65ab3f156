package gate

import (
	"bytes"
	"encoding/json"
	"path"
	"sort"
	"strings"
	"unicode"
)

// The ruler of a cycle is every file that judges it: the goals file, the
// files its gate and its checks name, the project's tests and their
// configuration by each ecosystem's convention, and the paths of the goals
// file's ruler: key. An agent can edit every file of the working tree, so
// the judge holds the ruler as it was when the cycle started: it judges the
// cycle's other changes with the start's ruler first, and the cycle's own
// ruler after (see the cycle package).

// RulerPart says how much of a file judges: all of it, or a part (the
// scripts of a package.json, the replace directives of a go.mod) that
// the judge holds while the rest of the file is the cycle's.
type RulerPart int

// The parts of a file that can judge.
const (
	NotRuler RulerPart = iota
	// WholeFile: the file judges.
	WholeFile
	// PackageScripts: a package.json's scripts and its test runners'
	// configuration (jest, mocha, nyc, c8, ava); its dependencies are the
	// project's.
	PackageScripts
	// ModReplaces: a go.mod's replace directives, which can swap the code
	// a test imports; its requirements are the project's.
	ModReplaces
	// RustTests: a Rust source file's test modules (#[cfg(test)] mod
	// tests { … }); the rest of the file is the project's. A file the
	// judge cannot read surely has none.
	RustTests
)

// Ruler says which paths of a tree are part of a cycle's ruler.
type Ruler struct {
	// Named are the files a gate command or a goal's check names (slash
	// paths from the top of the tree).
	Named []string
	// Globs are the patterns of the goals file's ruler: key (see Match).
	Globs []string
}

// configFiles are the files, at any depth, that configure a project's
// tests or its coverage, or steer how its test runner runs: they judge as
// a whole. npm and yarn read .npmrc and .yarnrc(.yml) for the shell a
// script runs in and the scripts run before a test; a module named pytest
// (pytest.py), found first on Python's path, is what python3 -m pytest
// runs.
var configFiles = map[string]bool{
	"GOALS.yaml": true, "GOALS.md": true,
	"Makefile": true, "makefile": true, "GNUmakefile": true,
	"pytest.ini": true, "tox.ini": true, "setup.cfg": true, "pyproject.toml": true, "conftest.py": true,
	"pytest.py": true, "noxfile.py": true, ".coveragerc": true,
	".npmrc": true, ".yarnrc": true, ".yarnrc.yml": true,
	"go.work": true,
}

// configPrefixes are the names of test runners' configuration files whose
// extension varies (jest.config.js, vitest.config.ts, .mocharc.yml), and
// of the files they load before every test (jest.setup.js,
// setupTests.ts, vitest.setup.ts) or through which they compile the tests
// (babel.config.js, .babelrc).
var configPrefixes = []string{"jest.config.", "jest.setup.", "jest.preset.", "jest-preset.", "vitest.config.", "vitest.workspace.",
	"vitest.setup.", "setupTests.", ".mocharc.", ".nycrc", "karma.conf.", "playwright.config.", "babel.config.", ".babelrc"}

// cargoConfigs are cargo's configuration files, in a .cargo directory at
// any depth: they can set the runner of every test binary, or an alias
// for cargo test.
var cargoConfigs = map[string]bool{"config": true, "config.toml": true}

// testDirs are directory names whose files are tests, test data or what
// the tests are built on: Go's testdata, Python's and Rust's tests,
// JavaScript's __tests__, the test directory of mocha and others, test
// helpers, fixtures, and jest's snapshots and mocks. A vendor directory
// is not among them: a dependency bump vendors new code beside its
// go.mod, and holding vendor/ would judge the new go.mod with the old
// code.
var testDirs = map[string]bool{"testdata": true, "tests": true, "test": true, "__tests__": true,
	"testutil": true, "testutils": true, "testhelper": true, "testhelpers": true, "fixtures": true,
	"__snapshots__": true, "__mocks__": true}

// Part says whether path p is part of the ruler, how much of the file is,
// and why, in a few words ("a Go test file", "named by the gate").
func (r Ruler) Part(p string) (RulerPart, string) {
	base := path.Base(p)
	for _, n := range r.Named {
		if n == p {
			return WholeFile, "named by the gate or a check"
		}
	}
	for _, g := range r.Globs {
		if MatchRuler(g, p) {
			return WholeFile, "matched by ruler: " + g
		}
	}
	if Match(".agents/**", p) {
		return NotRuler, "" // the loop's own notes
	}
	switch {
	case base == "package.json":
		return PackageScripts, "a package.json's scripts"
	case base == "go.mod":
		return ModReplaces, "a go.mod's replace directives"
	case base == "pytest.py":
		return WholeFile, "a module named pytest, which python3 -m pytest runs"
	case configFiles[base]:
		return WholeFile, "test configuration"
	case strings.HasSuffix(base, ".mk"):
		return WholeFile, "a makefile, included by another"
	case cargoConfigs[base] && path.Base(path.Dir(p)) == ".cargo":
		return WholeFile, "cargo's configuration"
	case strings.HasSuffix(base, "_test.go"):
		return WholeFile, "a Go test file"
	case strings.HasSuffix(base, ".py") && (strings.HasPrefix(base, "test_") || strings.HasSuffix(base, "_test.py")):
		return WholeFile, "a Python test file"
	case strings.Contains(base, ".test.") || strings.Contains(base, ".spec."):
		return WholeFile, "a JavaScript test file"
	}
	for _, pre := range configPrefixes {
		if strings.HasPrefix(base, pre) {
			return WholeFile, "test configuration"
		}
	}
	dirs := strings.Split(p, "/")
	for _, d := range dirs[:len(dirs)-1] {
		if testDirs[d] {
			return WholeFile, "under a " + d + "/ directory"
		}
	}
	switch {
	case base == "tests.rs":
		return WholeFile, "a Rust test module (#[cfg(test)] mod tests;)"
	case strings.HasSuffix(base, ".rs"):
		return RustTests, "a Rust file's #[cfg(test)] modules"
	}
	return NotRuler, ""
}

// MatchRuler reports whether path p matches a pattern of the ruler: key:
// "dir/**", a path.Match pattern, or one with ** for any number of
// directories.
func MatchRuler(pat, p string) bool { return Match(pat, p) || matchDeep(pat, p) }

// matchDeep is Match for a pattern with ** inside it ("tools/**/check.sh",
// "**/*.golden"): ** matches any number of directories.
func matchDeep(pat, p string) bool {
	if !strings.Contains(pat, "**") {
		return false
	}
	return deepMatch(strings.Split(pat, "/"), strings.Split(p, "/"))
}

func deepMatch(pat, p []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for i := 0; i <= len(p); i++ {
				if deepMatch(pat[1:], p[i:]) {
					return true
				}
			}
			return false
		}
		if len(p) == 0 {
			return false
		}
		if ok, err := path.Match(pat[0], p[0]); err != nil || !ok {
			return false
		}
		pat, p = pat[1:], p[1:]
	}
	return len(p) == 0
}

// interpreters are the programs whose first argument (after their
// options) is the script they run.
var interpreters = map[string]bool{"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true,
	"python": true, "python3": true, "node": true, "ruby": true, "perl": true, "php": true, "deno": true,
	"bun": true, "tsx": true, "ts-node": true, "Rscript": true, "lua": true, "pwsh": true, "source": true, ".": true}

// configOptions are options whose next word names a configuration file,
// whatever the program.
var configOptions = map[string]bool{"--config": true, "--rcfile": true, "--settings": true, "--file": true, "--makefile": true}

// shortConfig are the programs whose short option (-f, -c) names a
// configuration file: elsewhere -f and -c say other things (test -f FILE
// and [ -f FILE ] ask whether FILE is there, cc -c compiles FILE, wc -c
// counts its bytes), and FILE is what the command checks, not how.
var shortConfig = map[string]string{"make": "-f", "gmake": "-f", "bmake": "-f", "just": "-f", "nox": "-f",
	"pytest": "-c", "py.test": "-c", "tox": "-c"}

// configOption says whether option opt of program prog names a
// configuration file in the word after it.
func configOption(prog, opt string) bool {
	return configOptions[opt] || shortConfig[path.Base(prog)] == opt
}

// NamedFiles are the files of a tree that the gate's commands and the
// goals' checks run or are configured by, each taken when it is a file of
// the tree, as exists says:
//   - an option's value (--config=lint.ini, make -f ci.mk, pytest -c
//     ci.ini; -f and -c only for the programs whose option names a
//     configuration: not test -f FILE), in both;
//   - the program of a simple command when it is a path (./run-tests), and
//     the script an interpreter runs (sh test.sh, python3 tools/cover.py,
//     . lib.sh; sh -c's command is read in turn): every one the gate runs,
//     and those a check runs whose path says it checks (a word of a
//     directory or of the name starts with check, test, verify, lint,
//     cover, bench, gate, score, measure or eval: run_tests.sh,
//     checkMul.sh, coverage/, not latest.sh; or a scripts/, tools/, ci/ or
//     hack/ directory; see checkPath). A check that runs the product (sh
//     greet.sh --help | grep usage) checks it: the product is no ruler,
//     and a cycle that changes it must not count as one that changed only
//     its ruler.
//
// The files a command only reads (grep x calc.go, test -f out) are not
// taken: they are what it checks, not how; nor are directories, words with
// shell expansions, and absolute paths.
func NamedFiles(gate, checks []string, exists func(p string) bool) []string {
	seen := map[string]bool{}
	take := func(w string, script, all bool) {
		if w == "" || strings.HasPrefix(w, "-") || strings.HasPrefix(w, "/") || strings.HasPrefix(w, "~") ||
			strings.ContainsAny(w, "$*?[`{") {
			return
		}
		p := path.Clean(w)
		if p == "." || p == ".." || strings.HasPrefix(p, "../") || seen[p] {
			return
		}
		if script && !all && !checkPath(p) {
			return
		}
		if exists(p) {
			seen[p] = true
		}
	}
	var walk func(command string, all bool, depth int)
	walk = func(command string, all bool, depth int) {
		if depth > 4 {
			return
		}
		for _, words := range simpleCommands(command) {
			for len(words) > 0 && isAssignment(words[0]) {
				words = words[1:] // FOO=bar cmd
			}
			if len(words) == 0 {
				continue
			}
			prog := words[0]
			interp := interpreters[path.Base(prog)]
			if strings.Contains(prog, "/") {
				take(prog, true, all)
			}
			script := !interp // the interpreter's script is still to find
			for i := 1; i < len(words); i++ {
				w := words[i]
				if name, v, ok := strings.Cut(w, "="); ok && strings.HasPrefix(name, "-") {
					take(v, false, all)
					continue
				}
				if w == "-c" && interp && i+1 < len(words) {
					walk(words[i+1], all, depth+1) // sh -c 'command'
					script = true
					i++
					continue
				}
				if configOption(prog, w) && i+1 < len(words) {
					take(words[i+1], false, all)
					i++
					continue
				}
				if !script && !strings.HasPrefix(w, "-") {
					take(w, true, all)
					script = true
				}
			}
		}
	}
	for _, c := range gate {
		walk(c, true, 0)
	}
	for _, c := range checks {
		walk(c, false, 0)
	}
	out := make([]string, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// checkWords are what the path of a script that checks says, at the start
// of one of its words (check, checks, checker, checkMul; test, tests,
// testing; coverage; evaluate), and the few words that start with a test
// (runtests, unittest, smoketest).
var checkWords = []string{"check", "test", "verify", "lint", "cover", "bench", "gate", "score", "measure", "eval",
	"runtest", "unittest", "smoketest", "selftest", "pytest", "doctest"}

// notCheckWords are words that start with a check word and say no check:
// a checkout, a gateway, a testament or testimony.
var notCheckWords = []string{"checkout", "gateway", "testament", "testimon"}

// checkDirs are the directories scripts that check live in.
var checkDirs = map[string]bool{"scripts": true, "tools": true, "ci": true, "hack": true}

// checkPath says whether a script's path says it checks (see NamedFiles):
// a directory of checkDirs holds it, or a word of a directory or of its
// name starts with a check word. A word is a run of letters, cut where a
// lower-case letter is followed by an upper-case one: run_tests.sh is
// run, tests and sh; checkMul.sh is check, Mul and sh. A check word inside
// a word (latest, aggregate, discover, retrieval) says nothing.
func checkPath(p string) bool {
	segs := strings.Split(p, "/")
	for i, seg := range segs {
		if i < len(segs)-1 && checkDirs[strings.ToLower(seg)] {
			return true
		}
		for _, w := range words(seg) {
			if checkWord(strings.ToLower(w)) {
				return true
			}
		}
	}
	return false
}

// checkWord says whether a word, in lower case, starts with a check word.
func checkWord(w string) bool {
	for _, no := range notCheckWords {
		if strings.HasPrefix(w, no) {
			return false
		}
	}
	for _, c := range checkWords {
		if strings.HasPrefix(w, c) {
			return true
		}
	}
	return false
}

// words splits s into its words: runs of letters, cut too where a
// lower-case letter is followed by an upper-case one.
func words(s string) []string {
	var out []string
	start := -1
	var prev rune
	for i, r := range s {
		letter := unicode.IsLetter(r)
		switch {
		case !letter:
			if start >= 0 {
				out = append(out, s[start:i])
				start = -1
			}
		case start < 0:
			start = i
		case unicode.IsLower(prev) && unicode.IsUpper(r):
			out = append(out, s[start:i])
			start = i
		}
		prev = r
	}
	if start >= 0 {
		out = append(out, s[start:])
	}
	return out
}

// isAssignment says whether a word is a variable assignment (NAME=value)
// before a command.
func isAssignment(w string) bool {
	name, _, ok := strings.Cut(w, "=")
	if !ok || name == "" {
		return false
	}
	for i, r := range name {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// simpleCommands splits a shell command into its simple commands, each as
// words, the way a reader would: at ; & | ( ) and newlines, with quotes
// removed (a quoted word is kept whole, so that sh -c's command stays one
// word) and redirections dropped. It is no shell: it only finds the words
// that may be paths.
func simpleCommands(s string) [][]string {
	var out [][]string
	var cmd []string
	var w strings.Builder
	inWord := false
	flushWord := func() {
		if inWord {
			cmd = append(cmd, w.String())
			w.Reset()
			inWord = false
		}
	}
	flushCmd := func() {
		flushWord()
		if len(cmd) > 0 {
			out = append(out, cmd)
			cmd = nil
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s):
			w.WriteByte(s[i+1])
			inWord = true
			i++
		case c == '\'' || c == '"':
			j := strings.IndexByte(s[i+1:], c)
			if j < 0 {
				j = len(s) - i - 1
			}
			w.WriteString(s[i+1 : i+1+j])
			inWord = true
			i += j + 1
		case c == ' ' || c == '\t':
			flushWord()
		case c == '<' || c == '>':
			// A redirection's file is what the command reads or writes.
			flushWord()
			for i+1 < len(s) && (s[i+1] == '>' || s[i+1] == '&' || s[i+1] == ' ' || s[i+1] == '\t') {
				i++
			}
			for i+1 < len(s) && strings.IndexByte(" \t;&|()\n", s[i+1]) < 0 {
				i++
			}
		case strings.IndexByte(";&|()\n", c) >= 0:
			flushCmd()
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	flushCmd()
	return out
}

// packageRulerKeys are the members of a package.json that judge: how its
// tests run, and the configuration of its test runners and coverage.
var packageRulerKeys = map[string]bool{"scripts": true, "jest": true, "mocha": true, "nyc": true, "c8": true, "ava": true}

// MaxRulerPart bounds the files whose part is held apart (a package.json,
// a go.mod): a larger one is held whole, by HeldPart and by whoever reads
// the file to hold its part.
const MaxRulerPart = 1 << 20

// HeldPart is the file that judges a cycle whose ruler is held, for a file
// whose part is held (PackageScripts, ModReplaces, RustTests): the
// cycle's file with the start's part in place of its own. changed says
// whether the two parts differ. A package.json or go.mod too large or
// that does not parse is held whole: the start's file, changed unless
// both are the same. A Rust file too large or that either file cannot
// read surely is not held: the cycle's file, unchanged (see
// rustTestsHeld). A start of nil is a file the cycle added.
func HeldPart(part RulerPart, start, cycle []byte) (held []byte, changed bool) {
	if part == RustTests {
		return rustTestsHeld(start, cycle)
	}
	whole := func() ([]byte, bool) { return start, !bytes.Equal(start, cycle) }
	if len(start) > MaxRulerPart || len(cycle) > MaxRulerPart {
		return whole()
	}
	switch part {
	case PackageScripts:
		s, ok1 := jsonMembers(start)
		c, ok2 := jsonMembers(cycle)
		if !ok1 || !ok2 {
			return whole()
		}
		return heldPackage(s, c)
	case ModReplaces:
		return heldMod(start, cycle)
	}
	return whole()
}

// RestChanged reports whether the rest of a file whose part is held (all
// but the part HeldPart holds) differs between start and cycle: a cycle
// that changed it changed the project too, not only its ruler. The rest
// is compared as it reads: a package.json's other members whatever their
// order and spacing, a go.mod without its replace directives, a Rust
// file's tokens outside its test modules (white space and comments
// aside). A file held whole (WholeFile, or one too large or that does not
// parse) has no rest: false. A start of nil is a file the cycle added.
func RestChanged(part RulerPart, start, cycle []byte) bool {
	switch part {
	case RustTests:
		return rustRestChanged(start, cycle)
	case PackageScripts, ModReplaces:
		if len(start) > MaxRulerPart || len(cycle) > MaxRulerPart {
			return false
		}
	}
	switch part {
	case PackageScripts:
		s, ok1 := jsonMembers(start)
		c, ok2 := jsonMembers(cycle)
		if !ok1 || !ok2 {
			return false
		}
		rest := func(ms []member) map[string]json.RawMessage {
			out := map[string]json.RawMessage{}
			for _, m := range ms {
				if !packageRulerKeys[m.key] {
					out[m.key] = m.raw
				}
			}
			return out
		}
		sr, cr := rest(s), rest(c)
		if len(sr) != len(cr) {
			return true
		}
		for k, v := range sr {
			if w, ok := cr[k]; !ok || !sameJSON(v, w) {
				return true
			}
		}
		return false
	case ModReplaces:
		_, s := splitReplaces(start)
		_, c := splitReplaces(cycle)
		return !bytes.Equal(bytes.TrimSpace(s), bytes.TrimSpace(c))
	}
	return false
}

type member struct {
	key string
	raw json.RawMessage
}

// jsonMembers reads the members of a JSON object, in order, each value as
// written.
func jsonMembers(data []byte) ([]member, bool) {
	var obj map[string]json.RawMessage
	if json.Unmarshal(data, &obj) != nil || obj == nil {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	var out []member
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, false
		}
		key, ok := t.(string)
		if !ok {
			return nil, false
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, false
		}
		out = append(out, member{key, raw})
	}
	return out, true
}

func heldPackage(start, cycle []member) ([]byte, bool) {
	startKeys := map[string]json.RawMessage{}
	for _, m := range start {
		if packageRulerKeys[m.key] {
			startKeys[m.key] = m.raw
		}
	}
	changed := false
	var out []member
	seen := map[string]bool{}
	for _, m := range cycle {
		if !packageRulerKeys[m.key] {
			out = append(out, m)
			continue
		}
		seen[m.key] = true
		s, ok := startKeys[m.key]
		if !ok {
			changed = true // the cycle added it: left out
			continue
		}
		if !sameJSON(s, m.raw) {
			changed = true
		}
		out = append(out, member{m.key, s})
	}
	for _, m := range start {
		if packageRulerKeys[m.key] && !seen[m.key] {
			changed = true // the cycle removed it: put back
			out = append(out, m)
		}
	}
	var b bytes.Buffer
	b.WriteString("{")
	for i, m := range out {
		if i > 0 {
			b.WriteString(",")
		}
		key, _ := json.Marshal(m.key)
		b.WriteString("\n  ")
		b.Write(key)
		b.WriteString(": ")
		b.Write(m.raw)
	}
	b.WriteString("\n}\n")
	return b.Bytes(), changed
}

func sameJSON(a, b json.RawMessage) bool {
	var x, y bytes.Buffer
	if json.Compact(&x, a) != nil || json.Compact(&y, b) != nil {
		return bytes.Equal(a, b)
	}
	return bytes.Equal(x.Bytes(), y.Bytes())
}

// heldMod is the cycle's go.mod with the start's replace directives in
// place of its own.
func heldMod(start, cycle []byte) ([]byte, bool) {
	sRep, _ := splitReplaces(start)
	cRep, rest := splitReplaces(cycle)
	if strings.Join(sRep, "\n") == strings.Join(cRep, "\n") {
		return cycle, false
	}
	out := bytes.TrimRight(rest, "\n")
	if len(sRep) > 0 {
		out = append(out, "\n\nreplace (\n"...)
		for _, r := range sRep {
			out = append(out, '\t')
			out = append(out, r...)
			out = append(out, '\n')
		}
		out = append(out, ")"...)
	}
	return append(out, '\n'), true
}

// splitReplaces takes the replace directives out of a go.mod: each one
// normalised ("old [v] => new [v]", comments and spacing dropped), sorted,
// and the file without them.
func splitReplaces(data []byte) (replaces []string, rest []byte) {
	lines := strings.Split(string(data), "\n")
	var keep []string
	inBlock := false
	for _, line := range lines {
		t := strings.TrimSpace(line)
		if i := strings.Index(t, "//"); i >= 0 {
			t = strings.TrimSpace(t[:i])
		}
		switch {
		case inBlock && t == ")":
			inBlock = false
		case inBlock:
			if t != "" {
				replaces = append(replaces, strings.Join(strings.Fields(t), " "))
			}
		case t == "replace (" || (strings.HasPrefix(t, "replace") && strings.TrimSpace(strings.TrimPrefix(t, "replace")) == "("):
			inBlock = true
		case strings.HasPrefix(t, "replace ") || strings.HasPrefix(t, "replace\t"):
			replaces = append(replaces, strings.Join(strings.Fields(strings.TrimPrefix(t, "replace")), " "))
		default:
			keep = append(keep, line)
		}
	}
	sort.Strings(replaces)
	return replaces, []byte(strings.Join(keep, "\n"))
}
