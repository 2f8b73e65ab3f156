package gate

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestRulerPart(t *testing.T) {
	r := Ruler{Named: []string{"scripts/check.sh", "Makefile.ci"}, Globs: []string{"golden/**", "tools/**/verify.sh", "*.snap"}}
	for _, tc := range []struct {
		path string
		want RulerPart
	}{
		{"GOALS.yaml", WholeFile},
		{"GOALS.md", WholeFile},
		{"scripts/check.sh", WholeFile},
		{"scripts/other.sh", NotRuler},
		{"Makefile.ci", WholeFile},
		{"golden/a/b.txt", WholeFile},
		{"tools/x/y/verify.sh", WholeFile},
		{"tools/verify.sh", WholeFile},
		{"tools/verify.go", NotRuler},
		{"ui.snap", WholeFile},
		{"add.go", NotRuler},
		{"add_test.go", WholeFile},
		{"pkg/add_test.go", WholeFile},
		{"pkg/testdata/in.txt", WholeFile},
		{"pkg/testdata", NotRuler}, // a file named so is no directory of test data
		{"src/calc.py", NotRuler},
		{"test_calc.py", WholeFile},
		{"pkg/calc_test.py", WholeFile},
		{"pkg/conftest.py", WholeFile},
		{"tests/helpers.py", WholeFile},
		{"test/run.js", WholeFile},
		{"src/__tests__/a.js", WholeFile},
		{"src/a.test.ts", WholeFile},
		{"src/a.spec.js", WholeFile},
		{"src/contest.js", NotRuler},
		{"pytest.ini", WholeFile},
		{"tox.ini", WholeFile},
		{"setup.cfg", WholeFile},
		{"pyproject.toml", WholeFile},
		{"Makefile", WholeFile},
		{"sub/GNUmakefile", WholeFile},
		{"go.work", WholeFile},
		{"jest.config.js", WholeFile},
		{"vitest.config.ts", WholeFile},
		{".mocharc.yml", WholeFile},
		{".coveragerc", WholeFile},
		{"package.json", PackageScripts},
		{"web/package.json", PackageScripts},
		{"go.mod", ModReplaces},
		{"go.sum", NotRuler},
		{"Cargo.toml", NotRuler},
		{"src/lib.rs", RustTests},
		{"crates/a/src/main.rs", RustTests},
		{"tests/api.rs", WholeFile},
		{"src/tests.rs", WholeFile},
		{"src/testing.go", NotRuler},
		{"latest/x.go", NotRuler},
		// What steers a test runner: it can run other tests, or none.
		{".cargo/config", WholeFile},
		{".cargo/config.toml", WholeFile},
		{"crates/a/.cargo/config.toml", WholeFile},
		{"config.toml", NotRuler},
		{"cargo/config.toml", NotRuler},
		{".npmrc", WholeFile},
		{"web/.yarnrc", WholeFile},
		{".yarnrc.yml", WholeFile},
		{"pytest.py", WholeFile},
		{"src/pytest.py", WholeFile},
		{"src/conftest.py", WholeFile},
		{"jest.setup.js", WholeFile},
		{"jest.preset.js", WholeFile},
		{"jest-preset.json", WholeFile},
		{"src/setupTests.ts", WholeFile},
		{"vitest.setup.ts", WholeFile},
		{"babel.config.js", WholeFile},
		{".babelrc", WholeFile},
		{".babelrc.json", WholeFile},
		{"rules.mk", WholeFile},
		{"build/common.mk", WholeFile},
		{"internal/testutil/fake.go", WholeFile},
		{"pkg/testutils/x.go", WholeFile},
		{"testhelper/h.go", WholeFile},
		{"testhelpers/h.py", WholeFile},
		{"spec/fixtures/users.json", WholeFile},
		{"src/__snapshots__/a.test.js.snap", WholeFile},
		{"src/__mocks__/fs.js", WholeFile},
		// A dependency bump vendors new code beside its go.mod.
		{"vendor/example.com/dep/dep.go", NotRuler},
		{"vendor/modules.txt", NotRuler},
		{"src/babel.js", NotRuler},
		{"fixture.go", NotRuler},
		{"mkdocs.yml", NotRuler},
	} {
		if got, why := r.Part(tc.path); got != tc.want {
			t.Errorf("Part(%q) = %v (%s), want %v", tc.path, got, why, tc.want)
		} else if got != NotRuler && why == "" {
			t.Errorf("Part(%q) says no why", tc.path)
		}
	}
}

func TestNamedFiles(t *testing.T) {
	files := map[string]bool{"scripts/check.sh": true, "run-tests": true, "tools/cover.py": true, "cfg/lint.ini": true,
		"Makefile": true, "ci.mk": true, "lib.sh": true, "calc.go": true, "out.txt": true, "in.txt": true, "bin/tool": true,
		"test.sh": true, "greet.sh": true, "index.js": true, "bin/verify": true, "calc.c": true, "cfg/pytest.ini": true}
	exists := func(p string) bool { return files[p] }
	got := NamedFiles([]string{
		"sh test.sh",    // the gate's script, whatever its name
		". lib.sh; run", // ... and what it sources
	}, []string{
		"sh scripts/check.sh && ./run-tests --fast",
		`bash -c 'python3 -u tools/cover.py | tail -1'`,
		"lint --config=cfg/lint.ini ./...",
		"make -f ci.mk test",
		"make test",                  // Makefile is not named: it is configuration by convention
		"grep -q 'func Sub' calc.go", // what a check reads is what it checks
		"test -e out.txt && sort < in.txt > out.txt",
		"test -f calc.go && [ -f out.txt ] && cc -c calc.c -o /dev/null && wc -c in.txt", // -f and -c of programs that check files
		"pytest -c cfg/pytest.ini",
		"sh greet.sh --help | grep -q usage", // the product, run by a check
		"node index.js",
		"CGO_ENABLED=0 bin/tool 2>&1",
		"bin/verify --all",
		"cat $HOME/x /etc/passwd ../outside *.sh",
		"go test ./...",
	}, exists)
	want := []string{"bin/verify", "cfg/lint.ini", "cfg/pytest.ini", "ci.mk", "lib.sh", "run-tests", "scripts/check.sh", "test.sh", "tools/cover.py"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("NamedFiles = %q, want %q", got, want)
	}
}

// A check word names a check at the start of a word of the path, not
// inside another word: ./latest.sh | grep -q v2 runs the product.
func TestCheckPath(t *testing.T) {
	for p, want := range map[string]bool{
		// Check words at the start of a word.
		"check.sh": true, "checks.sh": true, "checker.py": true, "checkMul.sh": true, "my-check.sh": true,
		"test.sh": true, "tests.sh": true, "run_tests.sh": true, "run-tests": true, "RunTests.ps1": true,
		"testing/run.sh": true, "tests/x.sh": true, "bin/verify": true, "verify_all.sh": true,
		"linter.sh": true, "lint_all.sh": true, "coverage.sh": true, "cover.py": true, "bench/x.sh": true,
		"benchmark.sh": true, "gate.sh": true, "score.py": true, "measure.sh": true, "eval.py": true,
		"evaluate.py": true, "e2e_test.sh": true, "smokeTest.sh": true, "runtests.sh": true, "unittest.sh": true,
		"CHECK.SH": true, "über/test.sh": true,
		// Or in a directory of scripts.
		"scripts/deploy.sh": true, "ci/build.sh": true, "hack/x": true, "tools/gen.py": true,
		// Check words inside other words: the product.
		"latest.sh": false, "latest/x.sh": false, "aggregate.sh": false, "discover.py": false,
		"recover.sh": false, "retrieval.py": false, "contest.js": false, "protest.sh": false,
		"attestation.sh": false, "delegate.sh": false, "unchecked.sh": false, "relinting.sh": false,
		"medieval.py": false, "bin/greet": false, "greet.sh": false, "scripts": false,
		// Words that start with one and are no check.
		"checkout.sh": false, "gateway.sh": false, "testimonials.py": false,
	} {
		if got := checkPath(p); got != want {
			t.Errorf("checkPath(%q) = %v, want %v (words %q)", p, got, want, words(p))
		}
	}
}

func TestHeldPackageJSON(t *testing.T) {
	start := []byte(`{
  "name": "calc",
  "scripts": {"test": "node --test"},
  "dependencies": {"a": "1"}
}
`)
	// The cycle adds a dependency and turns the test script into an echo,
	// adds a jest key and moves the members about.
	cycle := []byte(`{"dependencies": {"a": "1", "b": "2"}, "scripts": {"test": "echo PASS"}, "name": "calc", "jest": {"bail": true}}`)
	held, changed := HeldPart(PackageScripts, start, cycle)
	if !changed {
		t.Fatal("a changed test script is not a change of the ruler")
	}
	var got map[string]any
	if err := json.Unmarshal(held, &got); err != nil {
		t.Fatalf("the held package.json does not parse: %v\n%s", err, held)
	}
	want := map[string]any{"name": "calc", "scripts": map[string]any{"test": "node --test"},
		"dependencies": map[string]any{"a": "1", "b": "2"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("held = %s", held)
	}
	// A change of the dependencies alone, or of spacing, is no change of
	// the ruler.
	same := []byte(`{"name":"calc","scripts":{ "test" : "node --test" },"dependencies":{"a":"2"}}`)
	if held, changed := HeldPart(PackageScripts, start, same); changed || !bytes.Contains(held, []byte(`"a":"2"`)) {
		t.Fatalf("changed = %v, held = %s", changed, held)
	}
	// A removed scripts key is put back; one that does not parse is held
	// whole.
	if held, changed := HeldPart(PackageScripts, start, []byte(`{"name":"calc"}`)); !changed || !bytes.Contains(held, []byte(`node --test`)) {
		t.Fatalf("removed scripts: changed = %v, held = %s", changed, held)
	}
	if held, changed := HeldPart(PackageScripts, start, []byte(`{"name":`)); !changed || !bytes.Equal(held, start) {
		t.Fatalf("broken cycle file: changed = %v, held = %s", changed, held)
	}
}

func TestHeldGoMod(t *testing.T) {
	start := []byte("module example.com/m\n\ngo 1.22\n\nrequire example.com/dep v1.0.0\n\nreplace example.com/dep => ../dep // local\n")
	// A new requirement is the project's; a replace pointing the tests'
	// import at another copy is the ruler's.
	cycle := []byte("module example.com/m\n\ngo 1.22\n\nrequire (\n\texample.com/dep v1.0.0\n\texample.com/new v1.2.0\n)\n\nreplace (\n\texample.com/dep => ./fake\n)\n")
	held, changed := HeldPart(ModReplaces, start, cycle)
	if !changed {
		t.Fatal("a changed replace is not a change of the ruler")
	}
	if !bytes.Contains(held, []byte("example.com/new v1.2.0")) || !bytes.Contains(held, []byte("example.com/dep => ../dep")) || bytes.Contains(held, []byte("./fake")) {
		t.Fatalf("held:\n%s", held)
	}
	// One too large to read apart is held whole.
	huge := append(bytes.Repeat([]byte("// padding\n"), MaxRulerPart/10), cycle...)
	if held, changed := HeldPart(ModReplaces, start, huge); !changed || !bytes.Equal(held, start) {
		t.Fatalf("a go.mod over %d bytes: changed = %v, held %d bytes", MaxRulerPart, changed, len(held))
	}
	onlyRequire := []byte("module example.com/m\n\ngo 1.22\n\nrequire example.com/dep v1.1.0\n\nreplace example.com/dep   =>   ../dep\n")
	if held, changed := HeldPart(ModReplaces, start, onlyRequire); changed || !bytes.Equal(held, onlyRequire) {
		t.Fatalf("changed = %v, held:\n%s", changed, held)
	}
}

func FuzzHeldPart(f *testing.F) {
	f.Add(`{"scripts":{"test":"x"}}`, `{"scripts":{"test":"y"},"a":1}`, true)
	f.Add("module m\nreplace a => b\n", "module m\nreplace (\n a => c\n)\n", false)
	f.Fuzz(func(t *testing.T, start, cycle string, pkg bool) {
		part := ModReplaces
		if pkg {
			part = PackageScripts
		}
		held, changed := HeldPart(part, []byte(start), []byte(cycle))
		if start == cycle && changed {
			t.Fatalf("the same file is a change")
		}
		// Held again, the held file has the start's part already.
		if again, more := HeldPart(part, []byte(start), held); more {
			t.Fatalf("the held file still differs in its part:\nstart %q\ncycle %q\nheld %q\nagain %q", start, cycle, held, again)
		}
	})
}

func FuzzSimpleCommands(f *testing.F) {
	f.Add(`sh -c 'a b' "c d" e;f|g 2>&1 > out`)
	f.Add(`'unclosed`)
	f.Add(`a\`)
	f.Fuzz(func(t *testing.T, s string) {
		for _, cmd := range simpleCommands(s) {
			if len(cmd) == 0 {
				t.Fatalf("an empty command from %q", s)
			}
			for _, w := range cmd {
				if !strings.ContainsAny(s, `'"\`) && strings.ContainsAny(w, " \t\n;|&") {
					t.Fatalf("word %q from %q", w, s)
				}
			}
		}
		NamedFiles([]string{s}, []string{s}, func(string) bool { return true })
	})
}
