package goals

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCleanText(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"plain\ttext\n", "plain\ttext\n"},
		{"\x1b[31mred\x1b[0m and \x1b[1;32mgreen\x1b[m", "red and green"},
		{"title\x1b]0;window title\x07 after", "title after"},
		{"link \x1b]8;;http://x\x1b\\here\x1b]8;;\x1b\\", "link here"},
		{"\x1b(Bcharset \x1b7saved\x1b8", "charset saved"},
		{"progress 10%\rprogress 50%\rdone\n", "done\n"},
		{"crlf\r\nline\r\n", "crlf\nline\n"},
		{"kept\r", "kept"},
		{"bell\a back\bspace nul\x00 del\x7f", "bell backspace nul del"},
		{"c1 \u009b31m and \u0085", "c1 31m and "},
		{"bad \xff\xfe utf8", "bad \uFFFD utf8"},
		{"unterminated \x1b[31", "unterminated "},
		{"broken \x1b[31\xc3\xa9t\n", "broken ét\n"},
		{"stray \x1b]binary\nthe words\n", "stray \nthe words\n"},
	} {
		if got := CleanText(tt.in); got != tt.want {
			t.Errorf("CleanText(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestExcerpt(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 100; i++ {
		b.WriteString("line ")
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString("\n")
	}
	b.WriteString("FAIL: TestThing\n\n\n")
	got := Excerpt(b.String())
	lines := strings.Split(got, "\n")
	if len(lines) != ExcerptLines || lines[len(lines)-1] != "FAIL: TestThing" {
		t.Errorf("Excerpt kept %d lines ending %q", len(lines), lines[len(lines)-1])
	}
	// Bytes bound the excerpt before lines do, and whole lines are kept.
	wide := strings.Repeat(strings.Repeat("w", 300)+"\n", 30) + "end"
	got = Excerpt(wide)
	if len(got) > ExcerptBytes || !strings.HasSuffix(got, "\nend") || !strings.HasPrefix(got, strings.Repeat("w", 300)) {
		t.Errorf("wide lines: %d bytes, starts %q", len(got), got[:10])
	}
	// One line longer than the bound: its end, cut at a rune.
	long := strings.Repeat("é", 5000) + "tail"
	got = Excerpt(long)
	if len(got) > ExcerptBytes || !strings.HasSuffix(got, "tail") || !strings.HasPrefix(got, "…") || !utf8.ValidString(got) {
		t.Errorf("one long line: %d bytes, valid %v", len(got), utf8.ValidString(got))
	}
	// Megabytes of output: bounded, the end kept, escapes gone.
	huge := strings.Repeat("\x1b[32mok\x1b[0m noise\n", 200000) + "\x1b[31mpanic: boom\x1b[0m\n"
	got = Excerpt(huge)
	if len(got) > ExcerptBytes || !strings.HasSuffix(got, "panic: boom") || strings.ContainsRune(got, 0x1b) {
		t.Errorf("huge output: %d bytes, ends %q", len(got), got[len(got)-20:])
	}
	if Excerpt("\n\n  \n") != "" {
		t.Error("blank output has an excerpt")
	}
	// Binary output: valid UTF-8, no control characters.
	bin := string([]byte{0, 1, 2, 0xff, 0x1b, 'a', 0x80, 'b', '\n', 0xc3})
	got = Excerpt(bin)
	if !utf8.ValidString(got) || strings.ContainsAny(got, "\x00\x01\x02\x1b") {
		t.Errorf("binary output: %q", got)
	}
}

func TestMissingCommand(t *testing.T) {
	// bin holds the commands that are there: present runs, plain does
	// not (not executable); dir holds a script whose interpreter is gone
	bin, dir := t.TempDir(), t.TempDir()
	for name, mode := range map[string]os.FileMode{"present": 0o755, "plain": 0o644} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"), mode); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "check.sh"), []byte("#!/opt/nope/bin/zsh\necho\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "run.sh"), []byte("#!/bin/sh\nfoo\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ out, want string }{
		{"bash: line 1: golangci-lint: command not found", "golangci-lint"},
		{"bash: golangci-lint: command not found\n", "golangci-lint"},
		{"sh: 1: ruff: not found", "ruff"},
		{"/usr/bin/env: 'python4': No such file or directory", "python4"},
		{"/usr/bin/env: ‘python4’: No such file or directory", "python4"},
		{"bash: line 1: ./check.sh: /opt/nope/bin/zsh: bad interpreter: No such file or directory", "/opt/nope/bin/zsh"},
		{"bash: line 1: ./locked.sh: Permission denied", "./locked.sh"},
		// a shell in the user's language: the same shape, other words
		{"bash: Zeile 1: golangci-lint: Befehl nicht gefunden", "golangci-lint"},
		{"bash: Zeile 1: golangci-lint: Kommando nicht gefunden.\n", "golangci-lint"},
		{"bash: ligne 1 : ruff : commande introuvable", "ruff"}, // French spaces before its colons
		{"bash: Zeile 1: ./gone.sh: Datei oder Verzeichnis nicht gefunden", "./gone.sh"},
		{"bash: Zeile 1: ./check.sh: /opt/nope/bin/zsh: Defekter Interpreter: Datei oder Verzeichnis nicht gefunden", "/opt/nope/bin/zsh"},
		{"bash: Zeile 1: " + filepath.Join(bin, "plain") + ": Keine Berechtigung", filepath.Join(bin, "plain")},
		{"/usr/bin/env: „python4“: Datei oder Verzeichnis nicht gefunden", "python4"},
		{"./run.sh: Zeile 2: foo: Kommando nicht gefunden.", "foo"},
		// what runs is not what a message of that shape names
		{"bash: Zeile 1: present: irgendein Fehler", ""},
		{"./run.sh: Zeile 2: present: Fehler", ""},
		{"FEHLER: ein Satz mit Wörtern: nichts", ""},
		{"all good", ""},
		{"", ""},
	} {
		if got := missingCommand(tt.out, dir, bin, ""); got != tt.want {
			t.Errorf("missingCommand(%q) = %q, want %q", tt.out, got, tt.want)
		}
	}
}

// The quotation marks coreutils' catalogues put around a name (env, nice,
// timeout), in English and in other languages.
func TestMissingCommandQuoted(t *testing.T) {
	dir := t.TempDir()
	for _, out := range []string{
		"env: `python4': そのようなファイルやディレクトリはありません\n",                          // ja, tr, ko, sk, id, be
		"env: `python4': No such file or directory\n",                       // af, et, eu, ga
		"env: ”python4”: Filen eller katalogen finns inte\n",                // sv, fi, hu
		"env: „python4”: Nie ma takiego pliku ani katalogu\n",               // pl, ro
		"env: “python4”: Arquivo ou diretório inexistente\n",                // pt_BR, vi
		"env: «\u00a0python4\u00a0»: Aucun fichier ou dossier de ce type\n", // fr
		"env: 「python4」: 沒有此一檔案或目錄\n",                                       // zh_TW
	} {
		if got := missingCommand(out, dir, "/usr/bin:/bin", ""); got != "python4" {
			t.Errorf("missingCommand(%q) = %q, want python4", out, got)
		}
	}
}

// bash in Japanese, a script whose #! interpreter is gone: the message's
// words, written without spaces, are no command's name.
func TestMissingCommandWordsWithoutSpaces(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "badi.sh"), []byte("#!/opt/nope/zsh\necho\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	out := "bash: 行 1: ./badi.sh: 実行できません: 必要なファイルがありません\n"
	if got := missingCommand(out, dir, "/usr/bin:/bin", ""); got != "/opt/nope/zsh" {
		t.Errorf("missingCommand(%q) = %q, want /opt/nope/zsh", out, got)
	}
}

// The check's own earlier output is never read for a name: timeout's
// message names what it could not run, in quotation marks, in any
// language; env's "python3 -u" and its -S hint name nothing.
func TestMissingCommandNotFromEarlierLines(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct{ out, want string }{
		{"x_test.go:10: got: 3, want: 4\ntimeout: der Befehl „golangci-lint-nope“ konnte nicht ausgeführt werden: Datei oder Verzeichnis nicht gefunden\n", "golangci-lint-nope"},
		{"x_test.go:10: got: 3, want: 4\ntimeout: failed to run command 'golangci-lint-nope': No such file or directory\n", "golangci-lint-nope"},
		{"Error: ENOENT: no such file or directory, open 'cfg.json'\n/usr/bin/env: „python3 -u“: Datei oder Verzeichnis nicht gefunden\n/usr/bin/env: Verwenden Sie -[v]S, um Optionen in #!-Zeichen zu übergeben\n", ""},
		{"x_test.go:10: got: 3, want: 4\nein Satz: noch einer\n", ""},
	} {
		if got := missingCommand(tt.out, dir, "/usr/bin:/bin", ""); got != tt.want {
			t.Errorf("missingCommand(%q) = %q, want %q", tt.out, got, tt.want)
		}
	}
}

// runnable looks a name up as bash does: ~ in a PATH entry is home, an
// empty PATH (or entry) is the directory the check runs in.
func TestRunnableAsBash(t *testing.T) {
	home, dir := t.TempDir(), t.TempDir()
	for _, p := range []string{filepath.Join(home, "bin", "mytool"), filepath.Join(dir, "dottool")} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		name, path string
		want       bool
	}{
		{"mytool", "~/bin:/usr/bin", true},
		{"mytool", "/usr/bin", false},
		{"dottool", "", true},
		{"dottool", "/usr/bin::/bin", true},
		{"dottool", "/usr/bin", false},
		{"./dottool", "/usr/bin", true},
		{"./gone", "", false},
	} {
		if got := runnable(tt.name, dir, tt.path, home); got != tt.want {
			t.Errorf("runnable(%q, PATH=%q) = %v, want %v", tt.name, tt.path, got, tt.want)
		}
	}
}

func FuzzExcerpt(f *testing.F) {
	for _, s := range []string{"a\x1b[31mb\n", "\r\r\n", "\x1b]0;t\x07", strings.Repeat("x\n", 100), "\xff\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Excerpt(s)
		if len(got) > ExcerptBytes || !utf8.ValidString(got) || strings.Count(got, "\n") >= ExcerptLines {
			t.Fatalf("Excerpt(%q) = %q: out of bounds", s, got)
		}
		for _, r := range got {
			if r != '\n' && r != '\t' && (r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f) {
				t.Fatalf("Excerpt(%q) keeps control character %U", s, r)
			}
		}
	})
}

func FuzzMissingCommand(f *testing.F) {
	for _, s := range []string{"bash: Zeile 1: foo: Befehl nicht gefunden", "sh: 1: ruff: not found", "a: b: c: d", ": : :", "x: \n: y: z"} {
		f.Add(s)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, out string) {
		got := missingCommand(out, dir, dir, dir)
		if strings.ContainsAny(got, "\n\r") || (got != "" && !strings.Contains(CleanText(out), strings.Trim(got, " "))) {
			t.Fatalf("missingCommand(%q) = %q: not a name the output gives", out, got)
		}
	})
}
