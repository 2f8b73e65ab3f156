package gate

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestBoundName(t *testing.T) {
	long := strings.Repeat("a", MaxNameBytes-1) + "é" + "tail"
	for _, tt := range []struct{ in, want string }{
		{"short", "short"},
		{strings.Repeat("a", MaxNameBytes), strings.Repeat("a", MaxNameBytes)},
		{long, strings.Repeat("a", MaxNameBytes-1) + "…"},
		{"bad \xff name", "bad \uFFFD name"},
		{strings.Repeat("\xff", MaxNameBytes+1), "\uFFFD…"}, // a run of invalid bytes is one U+FFFD
		{strings.Repeat("a\xff", MaxNameBytes/2), cutRunes(strings.Repeat("a\uFFFD", MaxNameBytes/2), MaxNameBytes) + "…"},
	} {
		got := boundName(tt.in)
		if got != tt.want || !utf8.ValidString(got) || len(got) > MaxNameBytes+len("…") {
			t.Errorf("boundName(%.20q…) = %.20q… (%d bytes), want %.20q… (%d bytes)", tt.in, got, len(got), tt.want, len(tt.want))
		}
	}
}

func TestTallyBounds(t *testing.T) {
	tl := newTally("go")
	for i := range MaxNames + 10 {
		tl.set("n"+strconv.Itoa(i), passed)
	}
	tl.set("failing", failed)
	c := tl.census()
	if len(c.Passed) != MaxNames || !c.Truncated || !slices.Equal(c.Failed, []string{"failing"}) {
		t.Errorf("%d passed, truncated %v, failed %v", len(c.Passed), c.Truncated, c.Failed)
	}
	if c.Summary() != "100000 passed, 1 failed, 0 skipped (truncated)" {
		t.Errorf("summary %q", c.Summary())
	}
}

func TestVanished(t *testing.T) {
	before := &Census{Passed: []string{"a", "b", "c", "d"}, Failed: []string{"e"}}
	after := &Census{Passed: []string{"a", "e", "f"}, Failed: []string{"b"}, Skipped: []string{"c"}}
	if got := before.Vanished(after); !slices.Equal(got, []string{"b", "c", "d"}) {
		t.Errorf("vanished %v", got)
	}
	if !Dropped(before, after) || Dropped(after, before) || Dropped(before, before) {
		t.Error("a drop is fewer passed after than before")
	}
	// A rename vanishes a test without a drop.
	renamed := &Census{Passed: []string{"a", "b", "c", "z"}}
	if Dropped(before, renamed) || !slices.Equal(before.Vanished(renamed), []string{"d"}) {
		t.Errorf("renamed: dropped %v, vanished %v", Dropped(before, renamed), before.Vanished(renamed))
	}
	// Nothing passed where there is no census.
	if !Dropped(before, nil) || Dropped(nil, before) || !slices.Equal(before.Vanished(nil), before.Passed) || (*Census)(nil).Vanished(after) != nil {
		t.Error("nil census")
	}
	// A census read back from JSON is not trusted to be sorted.
	if got := (&Census{Passed: []string{"d", "a", "d"}}).Vanished(after); !slices.Equal(got, []string{"d"}) {
		t.Errorf("unsorted: %v", got)
	}
	if s := before.Summary(); s != "4 passed, 1 failed, 0 skipped" {
		t.Errorf("summary %q", s)
	}
}
