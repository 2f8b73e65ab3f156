package cycle

import "testing"

func TestParseSize(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true}, {"1024", 1024, true}, {"1k", 1 << 10, true}, {"64m", 64 << 20, true},
		{"64M", 64 << 20, true}, {"2g", 2 << 30, true}, {" 5 ", 5, true},
		{"", 0, false}, {"m", 0, false}, {"-1", 0, false}, {"1.5m", 0, false}, {"1t", 0, false},
		{"99999999999999999999", 0, false}, {"9999999999999g", 0, false},
	} {
		got, ok := parseSize(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("parseSize(%q) = %d, %v; want %d, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

func TestIgnoredLine(t *testing.T) {
	for _, c := range []struct {
		k    *IgnoredKept
		want string
	}{
		{nil, ""},
		{&IgnoredKept{Budget: 0}, "ignored files: none kept (evolve.ignoredBudget is 0)"},
		{&IgnoredKept{Budget: 1, Files: 12, Bytes: 3565158}, "ignored files: 12 kept (3.4 MiB)"},
		{&IgnoredKept{Budget: 1, Files: 12, Bytes: 3565158, LeftTrees: []string{"node_modules/"}, OverFiles: 2},
			"ignored files: 12 kept (3.4 MiB); node_modules/ and 2 files over the budget not kept"},
		{&IgnoredKept{Budget: 1, Files: 1, Bytes: 29, OverFiles: 1}, "ignored files: 1 kept (29 B); 1 file over the budget not kept"},
		{&IgnoredKept{Budget: 1, LeftTrees: []string{"a/", "b/", "c/", "d/", "e/"}, LeftMore: 3},
			"ignored files: 0 kept (0 B); a/, b/, c/ and 5 more directories not kept"},
	} {
		if got := c.k.Line(); got != c.want {
			t.Errorf("Line() = %q, want %q", got, c.want)
		}
	}
}
