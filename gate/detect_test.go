package gate

import "testing"

func TestDetectTests(t *testing.T) {
	for _, tt := range []struct {
		name  string
		files map[string]string
		want  string
		from  string
	}{
		{"nothing", map[string]string{"README.md": "hi"}, "", ""},
		{"go", map[string]string{"go.mod": "module x\n", "Makefile": "test:\n\tgo test -race ./...\n"}, "go test ./...", "go.mod"},
		{"make", map[string]string{"Makefile": "all: build\n\n.PHONY: test lint\ntest lint: build\n\t./run-tests\n"}, "make test", "Makefile"},
		{"make, no test target", map[string]string{"Makefile": ".PHONY: test\nTEST := x\ntest_all:\n\techo\n# test: no\n\ttest: a recipe\n", "Cargo.toml": ""}, "cargo test", "Cargo.toml"},
		{"GNUmakefile first", map[string]string{"GNUmakefile": "build:\n", "Makefile": "test:\n"}, "", ""},
		{"make rule with ::", map[string]string{"makefile": "test:: a\n"}, "make test", "makefile"},
		{"make assignment", map[string]string{"Makefile": "test ::= value\ntest = x\n"}, "", ""},
		{"npm", map[string]string{"package.json": `{"scripts": {"test": "vitest run"}}`}, "npm test", "package.json"},
		{"npm's default test", map[string]string{"package.json": `{"scripts": {"test": "echo \"Error: no test specified\" && exit 1"}}`}, "", ""},
		{"npm, no test", map[string]string{"package.json": `{"scripts": {"build": "tsc"}}`, "pytest.ini": ""}, "python3 -m pytest", "pytest.ini"},
		{"npm, bad json", map[string]string{"package.json": `{`}, "", ""},
		{"cargo", map[string]string{"Cargo.toml": "[package]\n"}, "cargo test", "Cargo.toml"},
		{"python", map[string]string{"setup.cfg": "[metadata]\n", "pyproject.toml": ""}, "python3 -m pytest", "pyproject.toml"},
	} {
		d, ok := DetectTests(func(name string) ([]byte, bool) {
			s, ok := tt.files[name]
			return []byte(s), ok
		})
		if d.Command != tt.want || d.From != tt.from || ok != (tt.want != "") {
			t.Errorf("%s: detected %+v, %v; want %q from %q", tt.name, d, ok, tt.want, tt.from)
		}
	}
}

func TestDetectedTrustDigest(t *testing.T) {
	a, b := Detected{Command: "go test ./..."}, Detected{Command: "make test"}
	if a.TrustDigest() == b.TrustDigest() || len(a.TrustDigest()) != 64 {
		t.Errorf("digests %q %q", a.TrustDigest(), b.TrustDigest())
	}
}
