package gitstore

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// deriveIdentity either leaves the identity to git var or gives exactly
// what git var gives, for each environment and config below (git config
// -z --list's answer is what it reads, as Identity gives it).
func TestDeriveIdentityAgreesWithGitVar(t *testing.T) {
	names := map[string]string{"GIT_AUTHOR_NAME": "Ada Lovelace", "GIT_AUTHOR_EMAIL": "ada@example.com",
		"GIT_COMMITTER_NAME": "Cy Young", "GIT_COMMITTER_EMAIL": "cy@example.com"}
	dates := map[string]string{"GIT_AUTHOR_DATE": "@1700000000 +0200", "GIT_COMMITTER_DATE": "@1700003600 -0530"}
	with := func(ms ...map[string]string) map[string]string {
		out := map[string]string{}
		for _, m := range ms {
			for k, v := range m {
				out[k] = v
			}
		}
		return out
	}
	const user = "[user]\n\tname = Gil Global\n\temail = gil@example.com\n"
	tests := []struct {
		name    string
		env     map[string]string // on top of HOME, XDG_CONFIG_HOME, GIT_CONFIG_NOSYSTEM, PATH
		global  string            // ~/.gitconfig
		xdg     string            // $XDG_CONFIG_HOME/git/config
		local   string            // appended to the repository's config
		derived bool              // expected to be made without git var
	}{
		{name: "environment", env: with(names, dates), derived: true},
		{name: "environment, now", env: names, derived: true},
		{name: "environment over config", env: with(names, dates), global: user, derived: true},
		{name: "global config", env: dates, global: user, derived: true},
		{name: "global config, now", global: user, derived: true},
		{name: "xdg config", env: dates, xdg: "[user]\n\tname = Xa Xdg\n\temail = xa@example.com\n", derived: true},
		{name: "local over global", env: dates, global: user, local: "[user]\n\tname = Lo Cal\n", derived: true},
		{name: "last value wins", env: dates, global: user + "[user]\n\temail = second@example.com\n", derived: true},
		{name: "name from the environment, email from config", env: with(dates, map[string]string{"GIT_AUTHOR_NAME": "Env Name", "GIT_COMMITTER_NAME": "Env Name"}), global: user, derived: true},
		{name: "quoted value", env: dates, global: "[user]\n\tname = \"Q Uoted\"\n\temail = q@example.com\n", derived: true},
		{name: "comment after a value", env: dates, global: "[user]\n\tname = Com Ment ; a comment\n\temail = c@example.com\n", derived: true},
		{name: "continued value", env: dates, global: "[user]\n\tname = Con\\\ntinued\n\temail = c@example.com\n", derived: true},
		{name: "include", env: dates, global: "[include]\n\tpath = ~/inc\n", derived: true},
		{name: "-c on the command line", env: with(dates, map[string]string{"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "user.name", "GIT_CONFIG_VALUE_0": "Minus C"}), global: user, derived: true},
		{name: "RFC 3339 dates", env: with(names, map[string]string{"GIT_AUTHOR_DATE": "2026-01-02T03:04:05Z", "GIT_COMMITTER_DATE": "2026-01-02T03:04:05+02:00"}), derived: true},
		{name: "RFC 3339 dates, zone without a colon", env: with(names, map[string]string{"GIT_AUTHOR_DATE": "2005-04-07T22:13:13-0130", "GIT_COMMITTER_DATE": "2005-04-07T22:13:13+1400"}), derived: true},
		{name: "RFC 3339 dates, another local zone", env: with(names, map[string]string{"GIT_AUTHOR_DATE": "2026-07-02T03:04:05Z", "GIT_COMMITTER_DATE": "2026-07-02T03:04:05-07:00", "TZ": "America/New_York"}), derived: true},
		{name: "an odd offset", env: with(names, map[string]string{"GIT_AUTHOR_DATE": "@1700000000 +0290", "GIT_COMMITTER_DATE": "@0 -0000"}), derived: true},
		{name: "the largest zone", env: with(names, map[string]string{"GIT_AUTHOR_DATE": "@1700000000 +9959", "GIT_COMMITTER_DATE": "@1700000000 -9959"}), derived: true},
		{name: "an empty date is now", env: with(names, map[string]string{"GIT_AUTHOR_DATE": "", "GIT_COMMITTER_DATE": ""}), derived: true},
		{name: "non-ASCII names", env: dates, global: "[user]\n\tname = Zoë Ångström\n\temail = zoë@example.com\n", derived: true},

		// left to git var
		{name: "author and committer keys", env: dates, global: user + "[author]\n\tname = Au Thor\n[committer]\n\temail = co@example.com\n"},
		{name: "useConfigOnly", env: dates, global: user + "\tuseConfigOnly = true\n"},
		{name: "EMAIL", env: with(dates, map[string]string{"EMAIL": "env@example.com"}), global: "[user]\n\tname = E Mail\n"},
		{name: "name git cleans", env: dates, global: "[user]\n\tname = Ada.\n\temail = a@example.com\n"},
		{name: "name with angle brackets", env: with(dates, names, map[string]string{"GIT_AUTHOR_NAME": "A <b>"})},
		{name: "email git cleans", env: dates, global: "[user]\n\tname = Ada\n\temail = <a@example.com>\n"},
		{name: "valueless name", env: dates, global: user, local: "[user]\n\tname\n"},
		{name: "empty name", env: with(dates, names, map[string]string{"GIT_COMMITTER_NAME": ""})},
		{name: "date git reads another way", env: with(names, map[string]string{"GIT_AUTHOR_DATE": "yesterday", "GIT_COMMITTER_DATE": "@1 +0000"})},
		{name: "RFC 2822 date", env: with(names, map[string]string{"GIT_AUTHOR_DATE": "Thu, 07 Apr 2005 22:13:13 +0200", "GIT_COMMITTER_DATE": "@1 +0000"})},
		{name: "fraction of a second", env: with(names, map[string]string{"GIT_AUTHOR_DATE": "2026-01-02T03:04:05.5Z", "GIT_COMMITTER_DATE": "@1 +0000"})},
		{name: "a zone of 100 hours or more", env: with(names, map[string]string{"GIT_AUTHOR_DATE": "@1700000000 +9999", "GIT_COMMITTER_DATE": "@1 +0000"})},
		{name: "now with TZ set", env: with(names, map[string]string{"TZ": "Asia/Kolkata"})},
		{name: "GIT_CONFIG", env: with(dates, map[string]string{"GIT_CONFIG": "/dev/null"}), global: user},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			env := map[string]string{"HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, "xdg"),
				"GIT_CONFIG_NOSYSTEM": "1", "PATH": os.Getenv("PATH")}
			for k, v := range tt.env {
				env[k] = v
			}
			write := func(path, content string) {
				if content == "" {
					return
				}
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			write(filepath.Join(home, ".gitconfig"), tt.global)
			write(filepath.Join(home, "xdg", "git", "config"), tt.xdg)
			write(filepath.Join(home, "inc"), user)
			var list []string
			for k, v := range env {
				list = append(list, k+"="+v)
			}
			dir := filepath.Join(t.TempDir(), "repo")
			if _, err := runGitCmd("", "", list, "init", "-q", dir); err != nil {
				t.Fatal(err)
			}
			if tt.local != "" {
				f, err := os.OpenFile(filepath.Join(dir, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
				if err != nil {
					t.Fatal(err)
				}
				f.WriteString(tt.local)
				f.Close()
			}
			lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
			config := func() (map[string][]string, bool) {
				out, err := runGitCmd(dir, "", list, "config", "-z", "--list")
				if err != nil {
					return nil, false
				}
				return parseConfigList([]byte(out)), true
			}
			now := time.Now().In(systemZone(t))
			a, c, ok := deriveIdentity(lookup, config, now)
			if ok != tt.derived {
				t.Fatalf("derived: %v, want %v", ok, tt.derived)
			}
			if !ok {
				return
			}
			for _, role := range []struct {
				v   string
				got Signature
			}{{"GIT_AUTHOR_IDENT", a}, {"GIT_COMMITTER_IDENT", c}} {
				out, err := runGitCmd(dir, "", list, "var", role.v)
				if err != nil {
					t.Fatal(err)
				}
				want, err := parseIdent(strings.TrimSpace(out))
				if err != nil {
					t.Fatal(err)
				}
				got := formatIdent(role.got)
				if got == formatIdent(want) {
					continue
				}
				_, gotOff := role.got.When.Zone()
				_, wantOff := want.When.Zone()
				if v := tt.env[strings.Replace(role.v, "IDENT", "DATE", 1)]; v == "" && role.got.Name == want.Name &&
					role.got.Email == want.Email && gotOff == wantOff && role.got.When.Sub(want.When).Abs() <= 2*time.Second {
					continue // now, a second or two apart
				}
				t.Errorf("%s: derived %q, git var %q", role.v, got, formatIdent(want))
			}
		})
	}
}

// systemZone is the time zone git uses with TZ unset: /etc/localtime's,
// UTC without it (the test's own process may have TZ set).
func systemZone(t *testing.T) *time.Location {
	data, err := os.ReadFile("/etc/localtime")
	if err != nil {
		return time.UTC
	}
	loc, err := time.LoadLocationFromTZData("Local", data)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// A repository whose environment gives the whole identity, with dates git
// reads exactly, resolves it without starting git var or git config.
func TestIdentityFromTheEnvironmentStartsNoGit(t *testing.T) {
	r := newRepo(t)
	setEnv(t)
	repo := r.open()
	a, c, err := repo.Identity()
	if err != nil {
		t.Fatal(err)
	}
	if repo.ident.procs != [2]*proc{} || repo.config.proc != nil || repo.config.done {
		t.Errorf("git started: var %v, config %v", repo.ident.procs, repo.config.done)
	}
	if a.Name != testAuthorName || c.Email != testCommitterEmail {
		t.Errorf("identity %v, %v", a, c)
	}
}
