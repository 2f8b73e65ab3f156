package main

import "testing"

func TestShellDenial(t *testing.T) {
	for _, tc := range []struct {
		cmd  string
		deny bool
	}{
		{"git evolve cycle finish", true},
		{"git evolve cycle  abort --reason x", true},
		{"cd sub && git -C .. evolve stop", true},
		{"git-evolve kill now", true},
		{"git evolve -C /r resume", true},
		{"git evolve trust", true},
		{"git evolve record --result improved", true},
		{"git evolve -q cycle finish", true},
		{"git evolve --quiet cycle finish", true},
		{"git evolve --color never stop", true},
		{"git -c user.name=x evolve cycle finish", true},
		{"git --no-pager evolve resume", true},
		{"/usr/local/bin/git-evolve cycle finish", true},
		{"sh -c 'git evolve stop'", true},
		{"bash -c \"git evolve kill\"", true},
		{"git evolve -q status", false},
		{"git evolve log --json | grep stop", false},
		{"git evolve cycle status", false},
		{"git evolve status && git evolve log", false},
		{"git evolve next --json", false},
		{"echo x > .git/hooks/pre-commit", true},
		{"rm -rf .git/evolve", true},
		{"sed -i s/a/b/ .git/config", true},
		{"cat .git/HEAD", false},
		{"git status", false},
		{"ls .github/workflows > list.txt", false},
		{"sed -i 's/weight: 9/weight: 1/' GOALS.yaml", true},
		{"cat GOALS.yaml", false},
		{"printf 'goals: []' | tee GOALS.yaml", true},
		{"go test ./... > out.txt", false},
		{"", false},
	} {
		if got := shellDenial(tc.cmd, "GOALS.yaml"); (got != "") != tc.deny {
			t.Errorf("%q: %q, want denied %t", tc.cmd, got, tc.deny)
		}
	}
}
