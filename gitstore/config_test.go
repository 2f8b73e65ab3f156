package gitstore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestConfig(t *testing.T) {
	r := newRepo(t)
	setEnv(t)
	repo := r.open()

	gitValues := func(key string) []string {
		out, err := r.gitErr("config", "--get-all", key)
		if err != nil {
			return nil
		}
		return strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	}
	same := func(a, b []string) bool { return fmt.Sprintf("%q", a) == fmt.Sprintf("%q", b) }

	t.Run("missing key", func(t *testing.T) {
		vals, err := repo.ConfigGetAll("evolve.nothing")
		if err != nil || len(vals) != 0 {
			t.Errorf("ConfigGetAll of a missing key = %q, %v; want none", vals, err)
		}
	})
	t.Run("add keeps values", func(t *testing.T) {
		key := "remote.origin.fetch"
		r.git("remote", "add", "origin", "https://example.com/repo.git")
		if err := repo.ConfigAdd(key, "+refs/notes/evolve:refs/notes/remotes/origin/evolve"); err != nil {
			t.Fatalf("ConfigAdd: %v", err)
		}
		want := []string{"+refs/heads/*:refs/remotes/origin/*", "+refs/notes/evolve:refs/notes/remotes/origin/evolve"}
		vals, err := repo.ConfigGetAll(key)
		if err != nil || !same(vals, want) {
			t.Errorf("ConfigGetAll = %q, %v; want %q", vals, err, want)
		}
		if g := gitValues(key); !same(g, want) {
			t.Errorf("git config --get-all = %q, want %q", g, want)
		}
	})
	t.Run("odd values round-trip", func(t *testing.T) {
		key := "evolve.odd"
		vals := []string{"a b  c", `quote " and \ backslash`, "# not a comment ; nor this", " leading space", ""}
		for _, v := range vals {
			if err := repo.ConfigAdd(key, v); err != nil {
				t.Fatalf("ConfigAdd(%q): %v", v, err)
			}
		}
		got, err := repo.ConfigGetAll(key)
		if err != nil || !same(got, vals) {
			t.Errorf("ConfigGetAll = %q, %v; want %q", got, err, vals)
		}
		if g := gitValues(key); !same(g, vals) {
			t.Errorf("git config --get-all = %q, want %q", g, vals)
		}
		local, err := r.gitErr("config", "--local", "--get-all", key)
		if err != nil || strings.Count(local, "\n") != len(vals) {
			t.Errorf("the values are not in the local config: %q, %v", local, err)
		}
	})
	t.Run("includes are followed", func(t *testing.T) {
		inc := filepath.Join(t.TempDir(), "included.cfg")
		if err := os.WriteFile(inc, []byte("[evolve]\n\tinc = one\n\tinc = two\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		r.git("config", "include.path", inc)
		vals, err := r.open().ConfigGetAll("evolve.inc") // the config is read once a process
		if want := []string{"one", "two"}; err != nil || !same(vals, want) {
			t.Errorf("ConfigGetAll of an included key = %q, %v; want %q", vals, err, want)
		}
	})
	t.Run("invalid key", func(t *testing.T) {
		for _, key := range []string{"nosection", ".name", "section.", "section.1name", "section.na_me"} {
			if vals, err := repo.ConfigGetAll(key); err == nil {
				t.Errorf("ConfigGetAll of an invalid key %q = %q, nil; want an error", key, vals)
			}
			if _, err := r.gitErr("config", "--get-all", key); err == nil {
				t.Errorf("git config --get-all %q took the key", key)
			}
		}
	})
	t.Run("remotes", func(t *testing.T) {
		r.git("remote", "add", "backup", "/somewhere/else")
		r.git("remote", "add", "a-first", "/x")
		got, err := repo.Remotes()
		if err != nil {
			t.Fatal(err)
		}
		want := strings.Fields(r.git("remote"))
		if len(want) != 3 || !same(got, want) {
			t.Errorf("Remotes = %q, git remote = %q", got, want)
		}
	})
}

func TestRemotesNone(t *testing.T) {
	r := newRepo(t)
	setEnv(t)
	got, err := r.open().Remotes()
	if err != nil || len(got) != 0 {
		t.Errorf("Remotes of a repository without any = %q, %v", got, err)
	}
}

func TestConfigSection(t *testing.T) {
	r := newRepo(t)
	setEnv(t)
	repo := r.open()
	got, err := repo.ConfigSection("evolve")
	if err != nil || len(got) != 0 {
		t.Fatalf("ConfigSection with nothing set = %q, %v; want none", got, err)
	}
	r.git("config", "evolve.breaker.failures", "7")
	r.git("config", "--add", "evolve.breaker.failures", "8")
	r.git("config", "evolve.governor", "echo 'a\nb'")
	r.git("config", "evolvex.other", "no")
	// A key without a value, as a hand-written config file can hold.
	cfg := filepath.Join(r.dir, ".git", "config")
	f, err := os.OpenFile(cfg, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, "[evolve]\n\tbare\n")
	f.Close()
	repo = r.open() // the config is read once a process
	got, err = repo.ConfigSection("Evolve")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"evolve.breaker.failures": {"7", "8"},
		"evolve.governor":         {"echo 'a\nb'"},
		"evolve.bare":             {"true"},
	}
	if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", want) {
		t.Errorf("ConfigSection = %q, want %q", got, want)
	}
}

// ConfigGetAll answers as git config --get-all does: section and name in
// any case, a subsection as it is, includes followed, -c settings too.
func TestConfigGetAllAsGit(t *testing.T) {
	r := newRepo(t)
	inc := filepath.Join(t.TempDir(), "inc")
	if err := os.WriteFile(inc, []byte("[remote \"origin\"]\n\turl = from-include\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r.git("config", "remote.origin.url", "first")
	r.git("config", "include.path", inc)
	r.git("config", "--add", "remote.origin.url", "last")
	r.git("config", "branch.Main.remote", "upper")
	r.git("config", "branch.main.remote", "lower")
	r.git("config", "evolve.multi.line", "a\nb")
	// a key without a value, as a hand-written config file can hold
	f, err := os.OpenFile(filepath.Join(r.dir, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, "[evolve]\n\tbare\n")
	f.Close()
	setEnv(t)
	t.Setenv("GIT_CONFIG_COUNT", "1")
	t.Setenv("GIT_CONFIG_KEY_0", "Evolve.Agentpreset")
	t.Setenv("GIT_CONFIG_VALUE_0", "from-env")
	repo := r.open()
	for _, key := range []string{"remote.origin.url", "Remote.origin.URL", "remote.Origin.url", "branch.Main.remote", "branch.main.remote",
		"BRANCH.main.REMOTE", "evolve.multi.line", "evolve.bare", "evolve.agentPreset", "evolve.none", "user.name", "core.bare"} {
		var want []string
		out, err := runGitCmd(r.dir, "", gitEnv("GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=Evolve.Agentpreset", "GIT_CONFIG_VALUE_0=from-env"),
			"config", "-z", "--get-all", key)
		if err == nil {
			want = strings.Split(strings.TrimSuffix(out, "\x00"), "\x00")
		}
		got, gerr := repo.ConfigGetAll(key)
		if gerr != nil || fmt.Sprintf("%q", got) != fmt.Sprintf("%q", want) {
			t.Errorf("ConfigGetAll(%s) = %q, %v; git says %q", key, got, gerr, want)
		}
	}
	// What ConfigAdd writes is read back.
	if err := repo.ConfigAdd("remote.origin.fetch", "+refs/x:refs/y"); err != nil {
		t.Fatal(err)
	}
	if got, err := repo.ConfigGetAll("remote.origin.fetch"); err != nil || len(got) != 1 || got[0] != "+refs/x:refs/y" {
		t.Errorf("after ConfigAdd: %q, %v", got, err)
	}
}

func TestParseConfigFile(t *testing.T) {
	r := newRepo(t)
	setEnv(t)
	repo := r.open()
	got, err := repo.ParseConfigFile([]byte("[core]\n\tHooksPath = /dev/null\n\tbare\n[remote \"Up\"]\n\tfetch = a\n\tfetch = b\n[include]\n\tpath = elsewhere\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"core.hookspath": {"/dev/null"}, "core.bare": {""}, "remote.Up.fetch": {"a", "b"}, "include.path": {"elsewhere"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ParseConfigFile = %q, want %q", got, want)
	}
	if got, err := repo.ParseConfigFile(nil); err != nil || len(got) != 0 {
		t.Errorf("ParseConfigFile of nothing = %q, %v", got, err)
	}
	var ge *GitError
	if _, err := repo.ParseConfigFile([]byte("[core\n")); !errors.As(err, &ge) {
		t.Errorf("ParseConfigFile of a broken file = %v, want a *GitError", err)
	}
}
