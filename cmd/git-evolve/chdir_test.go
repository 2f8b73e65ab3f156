package main

import "testing"

// A path given to cycle finish --accept-ruler-change is from the working
// directory, -C's when it is given: as a path from the top of the
// repository.
func TestRepoPathFromWorkingDirectory(t *testing.T) {
	for _, c := range []struct{ top, dir, p, want string }{
		{"/w/repo", "/w/repo/sub", "a_test.go", "sub/a_test.go"},
		{"/w/repo", "/w/repo", "sub/a_test.go", "sub/a_test.go"},
		{"/w/repo", "/w/repo/sub", "../b_test.go", "b_test.go"},
		{"/w/repo", "/w/repo/sub", "/w/repo/c/c_test.go", "c/c_test.go"},
		{"/w/repo", "/elsewhere", "d_test.go", "d_test.go"}, // not inside: as given
		{"", "/w", "./e_test.go", "e_test.go"},
	} {
		if got := repoPath(c.top, c.dir, c.p); got != c.want {
			t.Errorf("repoPath(%q, %q, %q) = %q, want %q", c.top, c.dir, c.p, got, c.want)
		}
	}
}
