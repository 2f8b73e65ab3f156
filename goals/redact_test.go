package goals

import (
	"context"
	"strings"
	"testing"
	"time"
)

// What a check or a gate command prints is kept in snapshots and records
// (its output, shortened, and the excerpt of a failure) with its secrets
// redacted: those of a check that passes too, and one cut in two by the
// shortening.
func TestKeptOutputIsRedacted(t *testing.T) {
	// The token is put together by the shell, so that this file holds no
	// token a scanner would find.
	const token = "ghp_0a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R"
	const print = `printf 'GITHUB_TOKEN=%s%s\n' ghp_ 0a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R`
	pad := func(n int) string { return "printf '%0" + itoa(n) + "d\\n' 0; " }
	dir := t.TempDir()
	f := &File{Goals: []Goal{
		goal("fails", print+"; exit 1", 1),
		goal("passes", print, 1),
		// the token straddles the end of the first half the output keeps,
		// and the start of the last half
		goal("long-head", pad(230)+print+"; "+pad(2000)+"exit 1", 1),
		goal("long-tail", pad(2000)+print+"; "+pad(230)+"exit 1", 1),
	}}
	s := Measure(context.Background(), f, Options{Dir: dir, Parallel: 2})
	for _, r := range s.Goals {
		if strings.Contains(r.Output, token) || strings.Contains(r.Excerpt, token) || strings.Contains(r.Output, token[:20]) || strings.Contains(r.Excerpt, token[:20]) {
			t.Errorf("%s keeps the token: output %q, excerpt %q", r.GoalID, around(r.Output), around(r.Excerpt))
		}
		if !strings.Contains(r.Output, "[REDAC") { // the marker may be cut too
			t.Errorf("%s: output %q", r.GoalID, around(r.Output))
		}
		if r.Result != Pass && !strings.Contains(r.Excerpt, "GITHUB_TOKEN=[REDACTED]") {
			t.Errorf("%s: excerpt %q", r.GoalID, around(r.Excerpt))
		}
	}
	res := RunGate(context.Background(), Gate{Commands: []string{print + "; exit 2"}, Timeout: 5 * time.Second}, dir, nil, nil)
	if r := res[0]; strings.Contains(r.Output+r.Excerpt, token) || !strings.Contains(r.Excerpt, "GITHUB_TOKEN=[REDACTED]") {
		t.Errorf("the gate command keeps the token: %+v", r)
	}
	if got := Excerpt("done\nAuthorization: Bearer " + token[4:] + "\n"); got != "done\nAuthorization: Bearer [REDACTED]" {
		t.Errorf("Excerpt = %q", got)
	}
}

// around is the part of s near GITHUB_TOKEN (or its end), for messages.
func around(s string) string {
	i := strings.Index(s, "GITHUB_TOKEN")
	if i < 0 {
		i = max(0, len(s)-60)
	}
	return s[max(0, i-20):min(len(s), i+60)]
}

func itoa(n int) string {
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}
