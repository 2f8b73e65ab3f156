package cycletext

import (
	"encoding/json"
	"testing"

	"github.com/git-evolve/git-evolve/ledger"
)

func TestTruncate(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"abc", 3, "abc"},
		{"abcd", 3, "ab…"},
		{"äöüß", 4, "äöüß"},
		{"äöüßx", 4, "äöü…"},
		{"", 3, ""},
	} {
		if got := Truncate(c.in, c.n); got != c.want {
			t.Errorf("Truncate(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}

// A regressed cycle's reason is its first failure, with the line of its
// output that says most (not a test runner's bare summary), and how many
// more failed.
func TestFailureReason(t *testing.T) {
	r := ledger.Record{Result: ledger.Regressed, Extra: map[string]json.RawMessage{
		"failures": json.RawMessage(`[{"what":"gate","name":"go test ./...","reason":"exit status 1","excerpt":"--- FAIL: TestX\nx_test.go:3: want 2\nFAIL\nexit status 1"},{"what":"goal","name":"lint","reason":"fail"}]`),
	}}
	if got, want := FailureReason(&r), "`go test ./...` exit status 1: x_test.go:3: want 2 (and 1 more)"; got != want {
		t.Errorf("FailureReason = %q, want %q", got, want)
	}
	aborted := ledger.Record{Result: ledger.Unchanged, Extra: map[string]json.RawMessage{"aborted": json.RawMessage(`true`), "reason": json.RawMessage(`"the agent exited 3"`)}}
	if got := FailureReason(&aborted); got != "the agent exited 3" {
		t.Errorf("an aborted cycle's reason is %q", got)
	}
	if got := Result(&aborted); got != "aborted" {
		t.Errorf("an aborted cycle's result is shown as %q", got)
	}
	if got := FailureReason(&ledger.Record{Result: ledger.Improved}); got != "" {
		t.Errorf("an improved cycle has the reason %q", got)
	}
}
