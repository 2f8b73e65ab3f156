package gitstore

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// nativeIdentity either leaves the identity to git var or gives exactly
// what git var gives.
func TestNativeIdentityAgreesWithGitVar(t *testing.T) {
	type setup struct {
		name   string
		env    map[string]string
		global string // ~/.gitconfig
		xdg    string // $XDG_CONFIG_HOME/git/config
		local  string // the repository's config, appended
		native bool   // expected to be resolved without git
	}
	dates := map[string]string{"GIT_AUTHOR_DATE": "@1700000000 +0200", "GIT_COMMITTER_DATE": "2026-01-02T03:04:05Z"}
	with := func(a, b map[string]string) map[string]string {
		m := map[string]string{}
		for k, v := range a {
			m[k] = v
		}
		for k, v := range b {
			m[k] = v
		}
		return m
	}
	tests := []setup{
		{name: "environment", env: with(dates, map[string]string{"GIT_AUTHOR_NAME": "Ada", "GIT_AUTHOR_EMAIL": "ada@x",
			"GIT_COMMITTER_NAME": "Cy", "GIT_COMMITTER_EMAIL": "cy@x"}), native: true},
		{name: "global config", env: dates, global: "[user]\n\tname = Gil Global\n\temail = gil@x\n", native: true},
		{name: "xdg config", env: dates, xdg: "[user]\n\tname = Xa\n\temail = xa@x\n", native: true},
		{name: "local over global", env: dates, global: "[user]\n\tname = G\n\temail = g@x\n", local: "[user]\n\tname = Lo Cal\n", native: true},
		{name: "author and committer keys", env: dates, global: "[user]\n\tname = U\n\temail = u@x\n[author]\n\tname = Au\n[committer]\n\temail = co@x\n", native: true},
		{name: "EMAIL", env: with(dates, map[string]string{"EMAIL": "env@x"}), global: "[user]\n\tname = E\n", native: true},
		{name: "RFC 2822 date", env: map[string]string{"GIT_AUTHOR_DATE": "Mon, 2 Jan 2006 15:04:05 -0700", "GIT_COMMITTER_DATE": "@1 +0000"},
			global: "[user]\n\tname = D\n\temail = d@x\n", native: true},
		{name: "comment after a value", env: dates, global: "[user]\n\tname = Com ; a comment\n\temail = c@x\n", native: true},
		{name: "include", env: dates, global: "[include]\n\tpath = other\n[user]\n\tname = I\n\temail = i@x\n"},
		{name: "quoted value", env: dates, global: "[user]\n\tname = \"Q Uoted\"\n\temail = q@x\n"},
		{name: "name git cleans", env: dates, global: "[user]\n\tname = Ada.\n\temail = a@x\n"},
		{name: "-c settings", env: with(dates, map[string]string{"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "user.name", "GIT_CONFIG_VALUE_0": "Minus C"}),
			global: "[user]\n\tname = G\n\temail = g@x\n"},
		{name: "date git reads another way", env: map[string]string{"GIT_AUTHOR_DATE": "yesterday", "GIT_COMMITTER_DATE": "@1 +0000"},
			global: "[user]\n\tname = Y\n\temail = y@x\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			setEnv(t)
			for _, k := range []string{"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL",
				"GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE", "EMAIL"} {
				t.Setenv(k, "")
				os.Unsetenv(k)
			}
			home := t.TempDir()
			t.Setenv("HOME", home)
			t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "xdg"))
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			if tt.global != "" {
				os.WriteFile(filepath.Join(home, ".gitconfig"), []byte(tt.global), 0o644)
			}
			if tt.xdg != "" {
				os.MkdirAll(filepath.Join(home, "xdg", "git"), 0o755)
				os.WriteFile(filepath.Join(home, "xdg", "git", "config"), []byte(tt.xdg), 0o644)
			}
			dir := filepath.Join(t.TempDir(), "repo")
			if _, err := runGitCmd("", "", nil, "init", "-q", dir); err != nil {
				t.Fatal(err)
			}
			if tt.local != "" {
				f, _ := os.OpenFile(filepath.Join(dir, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
				f.WriteString(tt.local)
				f.Close()
			}
			a, c, ok := nativeIdentity(filepath.Join(dir, ".git"), filepath.Join(dir, ".git"))
			if ok != tt.native {
				t.Fatalf("resolved natively: %v, want %v", ok, tt.native)
			}
			if !ok {
				return
			}
			out, err := runGitCmd(dir, "", os.Environ(), "var", "-l")
			if err != nil {
				t.Fatal(err)
			}
			ga, gc, err := parseVarList([]byte(out))
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range []struct {
				role      string
				got, want Signature
			}{{"author", a, ga}, {"committer", c, gc}} {
				if p.got.Name != p.want.Name || p.got.Email != p.want.Email {
					t.Errorf("%s: native %q <%s>, git %q <%s>", p.role, p.got.Name, p.got.Email, p.want.Name, p.want.Email)
				}
				if formatIdent(p.got)[len(p.got.Name):] != formatIdent(p.want)[len(p.want.Name):] &&
					!(tt.env["GIT_"+strings.ToUpper(p.role)+"_DATE"] == "" && p.got.When.Sub(p.want.When).Abs() < 3*time.Second) {
					t.Errorf("%s: native %q, git %q", p.role, formatIdent(p.got), formatIdent(p.want))
				}
			}
		})
	}
}
