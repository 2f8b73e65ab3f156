package gate

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/git-evolve/git-evolve/goals"
)

// Reports jest and vitest wrote of the same tests: two passing, one
// failing, one skipped, one todo, and a file that failed to run.
func TestParseJestJSON(t *testing.T) {
	for _, tc := range []struct {
		fixture, file, failing string
	}{
		{"jest.json", "src", "subtracts"},
		{"vitest.json", "vt", "fails"},
	} {
		t.Run(tc.fixture, func(t *testing.T) {
			ext := ".js"
			if tc.file == "vt" {
				ext = ".mjs"
			}
			add, broken := tc.file+"/add.test"+ext, tc.file+"/broken.test"+ext
			c, err := ParseJestJSON(fixture(t, tc.fixture), "/home/dev/app")
			if err != nil {
				t.Fatal(err)
			}
			checkCensus(t, c)
			want := &Census{
				Runner:  "jest",
				Passed:  []string{add + " > math > adds", add + " > top level"},
				Failed:  []string{add + " > math > nested > " + tc.failing, broken},
				Skipped: []string{add + " > math > later", add + " > math > skipped one"},
				Groups:  []string{broken},
			}
			if !reflect.DeepEqual(c, want) {
				t.Errorf("got %+v\nwant %+v", c, want)
			}
			// Under another root, the paths stay as the runner wrote them.
			c, err = ParseJestJSON(fixture(t, tc.fixture), "/elsewhere")
			if err != nil || !strings.HasPrefix(c.Passed[0], "/home/dev/app/"+add) {
				t.Errorf("another root: %v, %q", err, c.Passed)
			}
		})
	}
}

func TestParseJestJSONErrors(t *testing.T) {
	for _, data := range []string{``, `[]`, `{}`, `{"testResults":3}`, `{"testResults":[{"name":1}]}`, `{"testResults":[` + strings.Repeat("[", 20000)} {
		if c, err := ParseJestJSON([]byte(data), "/"); err == nil || c != nil {
			t.Errorf("%.40q: %+v, %v", data, c, err)
		}
	}
	// A file that failed and whose tests all passed (a hook failed) is a
	// failed group; a test reported twice keeps its failure.
	c, err := ParseJestJSON([]byte(`{"testResults":[
		{"name":"/r/a.test.js","status":"failed","assertionResults":[{"ancestorTitles":[],"title":"t","status":"passed"}]},
		{"name":"/r/b.test.js","status":"passed","assertionResults":[{"title":"u","status":"passed"},{"title":"u","status":"failed"},{"fullName":"by full name","status":"passed"}]}]}`), "/r")
	if err != nil {
		t.Fatal(err)
	}
	want := &Census{Runner: "jest", Passed: []string{"a.test.js > t", "b.test.js > by full name"}, Failed: []string{"a.test.js", "b.test.js > u"}, Groups: []string{"a.test.js"}}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("got %+v\nwant %+v", c, want)
	}
}

// A command that runs jest or vitest writes jest's JSON report, directly
// or through npm's script; one that cannot take arguments at its end, or
// chooses its own report, is left alone.
func TestJSCountArgs(t *testing.T) {
	dir := t.TempDir()
	write := func(scripts string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"scripts":{`+scripts+`}}`), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const jest = " --json --outputFile=/r/j.json"
	const vitest = " --reporter=default --reporter=json --outputFile.json=/r/j.json"
	for _, tc := range []struct{ scripts, command, want string }{
		{``, `jest`, jest},
		{``, `npx jest --ci src/`, jest},
		{``, `CI=1 ./node_modules/.bin/jest`, jest},
		{``, `pnpm exec vitest run`, vitest},
		{``, `yarn vitest`, vitest},
		{``, `vitest bench`, ""},
		{``, `jest --json`, ""},
		{``, `jest --reporters=default --outputFile=x.json`, ""},
		{``, `vitest run --reporter=verbose`, ""},
		{``, `jest | tee log`, ""},
		{``, `jest # comment`, ""},
		{``, `jest && eslint .`, ""},
		{``, `jest $(cat args)`, ""},
		{``, `mocha`, ""},
		{`"test":"jest --ci"`, `npm test`, " --" + jest},
		{`"test":"jest --ci"`, `npm t -- --runInBand`, jest},
		{`"unit":"vitest run"`, `npm run unit`, " --" + vitest},
		{`"test":"vitest run"`, `npm run test`, " --" + vitest},
		{`"test":"jest && eslint ."`, `npm test`, ""},
		{`"test":"node --test"`, `npm test`, ""},
		{`"test":"jest"`, `npm run`, ""},
		{`"test":"jest"`, `npm install`, ""},
		{`"other":"jest"`, `npm test`, ""},
	} {
		write(tc.scripts)
		got, ok := jsCountArgs(tc.command, dir, "/r/j.json")
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("%s with %s: %q, %v; want %q", tc.command, tc.scripts, got, ok, tc.want)
		}
	}
	// No package.json, or one that is not JSON: npm's script is unknown.
	for _, content := range []string{"", "{"} {
		os.Remove(filepath.Join(dir, "package.json"))
		if content != "" {
			os.WriteFile(filepath.Join(dir, "package.json"), []byte(content), 0o644)
		}
		if got, ok := jsCountArgs("npm test", dir, "/r/j.json"); ok {
			t.Errorf("package.json %q: %q", content, got)
		}
	}
}

// The census tap runs jest with its report and reads it after the
// command: a fake jest writes the report it is asked for.
func TestCensusTapJest(t *testing.T) {
	work, bin := t.TempDir(), t.TempDir()
	script := "#!/bin/sh\nfor a; do case $a in --outputFile=*) out=${a#--outputFile=} ;; esac; done\n" +
		"printf '{\"testResults\":[{\"name\":\"%s/a.test.js\",\"status\":\"passed\",\"assertionResults\":[{\"ancestorTitles\":[\"d\"],\"title\":\"t\",\"status\":\"passed\"}]}]}' \"$PWD\" >\"$out\"\n"
	if err := os.WriteFile(filepath.Join(bin, "jest"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	c, res, err := Count(t.Context(), goals.Gate{Commands: []string{"jest --ci"}, Timeout: time.Minute}, work, nil)
	if err != nil || len(res) != 1 || !res[0].Passed {
		t.Fatalf("%v, %+v", err, res)
	}
	if want := (&Census{Runner: "jest", Passed: []string{"a.test.js > d > t"}}); !reflect.DeepEqual(c, want) {
		t.Errorf("got %+v, want %+v", c, want)
	}
}
