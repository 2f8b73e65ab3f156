package queue

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestFindBlocker(t *testing.T) {
	known := func(id string) bool { return id == "auth" || id == "db" }
	tests := []struct {
		output, want string
	}{
		{"", ""},
		{"all fine, nothing to say", ""},
		{"error: this is blocked by rig-8z29, land it first", "rig-8z29"},
		{"Blocked by `schema migration`", ""}, // a space: no id
		{"Blocked by `schema-v2`", "schema-v2"},
		{"blocker: `db`", "db"},
		{"build failed: requires Go 1.22", ""},
		{"this change depends on auth.", "auth"},
		{"Depends on: soc-y5vh.4", "soc-y5vh.4"},
		{"requires rig-1 ... later: blocked by rig-2", "rig-2"},
		{"blocked by item-7 (itself)", ""},
		{"blocked by `" + strings.Repeat("x", 65) + "`", ""},
		{"blocked by `a\x1bb`", ""},
		{"requires rig-9\n" + strings.Repeat("noise\n", MaxBlockerScan/6+10), ""}, // out of the scanned end
	}
	for _, tt := range tests {
		if got := FindBlocker(tt.output, "item-7", known); got != tt.want {
			t.Errorf("FindBlocker(%.60q) = %q, want %q", tt.output, got, tt.want)
		}
	}
}

func FuzzFindBlocker(f *testing.F) {
	for _, s := range []string{"blocked by rig-8z29", "requires `x`", "depends on auth", "blocker: `\xff`", "Blocked By: a-1.2.3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, out string) {
		id := FindBlocker(out, "self", func(s string) bool { return s == "auth" })
		if id == "" {
			return
		}
		if id == "self" || len(id) > maxBlockerID || !utf8.ValidString(id) || strings.ContainsAny(id, " \t\n\r`") {
			t.Fatalf("FindBlocker(%q) = %q: not a usable id", out, id)
		}
		if !strings.Contains(out, id) {
			t.Fatalf("FindBlocker(%q) = %q: not in the output", out, id)
		}
	})
}
