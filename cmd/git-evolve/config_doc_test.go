package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Every git config key under evolve.* and every environment variable the
// code reads is listed in docs/config.md.
func TestConfigDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/config.md")
	if err != nil {
		t.Fatal(err)
	}
	listed := strings.ToLower(string(doc))
	keys := regexp.MustCompile(`"(evolve\.[a-zA-Z.]+)"`)
	envs := regexp.MustCompile(`(?:[Gg]etenv|LookupEnv)\("([A-Z][A-Z0-9_]*)"\)`)
	read := map[string]string{}
	err = filepath.WalkDir("../..", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && path != "../.." || filepath.ToSlash(path) == "../../internal/testenv") {
			return filepath.SkipDir // (testenv is the tests' environment, not the program's)
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range keys.FindAllStringSubmatch(string(src), -1) {
			read[m[1]] = path
		}
		for _, m := range envs.FindAllStringSubmatch(string(src), -1) {
			read[m[1]] = path
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(read) < 10 {
		t.Fatalf("found only %d keys and variables read: the scan is broken", len(read))
	}
	for name, where := range read {
		if !strings.Contains(listed, "`"+strings.ToLower(name)+"`") {
			t.Errorf("%s reads %s, which docs/config.md does not list", where, name)
		}
	}
}
