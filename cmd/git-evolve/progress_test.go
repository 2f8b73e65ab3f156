package main

import (
	"strings"
	"testing"
	"time"
)

// The meter where stderr is no terminal: quiet for a measure that ends
// within the delay, then a line a tick every ten seconds, and "done".
func TestGoalMeterPipe(t *testing.T) {
	clock := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	now := func() time.Time { return clock }
	var b strings.Builder
	m := newGoalMeter(&b, "measuring goals", 3, false, false, now)
	m.check("a")
	m.check("b")
	m.done("a")
	clock = clock.Add(time.Second)
	m.tick()
	if b.Len() != 0 {
		t.Fatalf("within the delay: %q", b.String())
	}
	clock = clock.Add(time.Second)
	m.tick()
	if got, want := b.String(), "git-evolve: measuring goals: 1/3 done, running b (2.0s)\n"; got != want {
		t.Fatalf("after the delay: %q, want %q", got, want)
	}
	for range 10 {
		clock = clock.Add(time.Second)
		m.check("c") // changes print nothing between the lines
		m.done("c")
		m.tick()
	}
	if n := strings.Count(b.String(), "\n"); n != 2 {
		t.Fatalf("ten seconds on: %d lines, want 2:\n%s", n, b.String())
	}
	m.done("b")
	m.finish()
	if !strings.HasSuffix(b.String(), "git-evolve: measuring goals: 12/12, done (12.0s).\n") {
		t.Fatalf("the end: %q", b.String())
	}

	// A measure that ends within the delay says nothing at all.
	b.Reset()
	m = newGoalMeter(&b, "measuring goals", 1, false, false, now)
	m.check("a")
	m.done("a")
	m.tick()
	m.finish()
	if b.Len() != 0 {
		t.Fatalf("a quick measure: %q", b.String())
	}
}

// On a terminal: one line rewritten in place at every change, ended with
// "done"; running checks are named, the first three of them.
func TestGoalMeterTerminal(t *testing.T) {
	clock := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var b strings.Builder
	m := newGoalMeter(&b, "measuring goals", 5, true, false, func() time.Time { return clock })
	for _, id := range []string{"a", "b", "c", "d\x1b[31m"} {
		m.check(id)
	}
	last := b.String()[strings.LastIndex(b.String(), "\r")+1:]
	if want := `git-evolve: measuring goals: 0/5 done, running a, b, c and 1 more (0.0s)`; last != want {
		t.Fatalf("the line: %q, want %q", last, want)
	}
	m.done("b")
	clock = clock.Add(1500 * time.Millisecond)
	m.tick()
	m.finish()
	end := b.String()[strings.LastIndex(b.String(), "\r")+1:]
	if !strings.HasPrefix(end, "git-evolve: measuring goals: 1/5, done (1.5s).") || strings.TrimRight(end, " \n") != "git-evolve: measuring goals: 1/5, done (1.5s)." {
		t.Fatalf("the end: %q", b.String())
	}
	if strings.Contains(b.String(), "\x1b") {
		t.Fatalf("a goal id's escape reached the terminal: %q", b.String())
	}
}
