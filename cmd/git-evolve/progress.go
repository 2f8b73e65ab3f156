package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"
)

// goalMeter reports goals being measured on stderr while they are. On a
// terminal it is one line rewritten in place, as git's progress is, from
// the first check and every second after: how many checks ended of how
// many, which are running, the time so far; finished with "done". Where
// stderr is no terminal (an agent's tool call, a CI log) it stays quiet
// for a command that ends within two seconds, then prints a line every ten
// seconds, so a long measure is never silent; --progress prints those
// lines from the start, --no-progress none.
type goalMeter struct {
	w    io.Writer
	what string
	n    int
	tty  bool
	// forced: --progress, lines at every change where stderr is no terminal
	forced bool
	delay  time.Duration // before the first line, where stderr is no terminal
	every  time.Duration // between lines, where stderr is no terminal
	now    func() time.Time

	mu       sync.Mutex
	t0, last time.Time
	printed  bool
	width    int
	ended    int
	running  []string
	stop     chan struct{}
	stopped  sync.WaitGroup
}

func newGoalMeter(w io.Writer, what string, n int, tty, forced bool, now func() time.Time) *goalMeter {
	m := &goalMeter{w: w, what: what, n: n, tty: tty, delay: 2 * time.Second, every: 10 * time.Second, now: now}
	if forced {
		m.delay, m.forced = 0, true
	}
	m.t0 = now()
	return m
}

// start ticks the meter each second until done.
func (m *goalMeter) start() {
	m.stop = make(chan struct{})
	m.stopped.Add(1)
	go func() {
		defer m.stopped.Done()
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-m.stop:
				return
			case <-t.C:
				m.tick()
			}
		}
	}()
}

func (m *goalMeter) check(id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.running = append(m.running, id)
	if len(m.running)+m.ended > m.n {
		m.n = len(m.running) + m.ended // a goal measured again (a regression is measured twice)
	}
	m.show(false)
}

func (m *goalMeter) done(id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if i := slices.Index(m.running, id); i >= 0 {
		m.running = slices.Delete(m.running, i, i+1)
	}
	m.ended++
	m.show(false)
}

func (m *goalMeter) tick() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.show(true)
}

// show prints the state: on a terminal at every change and tick; else,
// with --progress, at every change, and on a tick once the delay is past
// and the last line is about every old.
func (m *goalMeter) show(tick bool) {
	now := m.now()
	switch {
	case m.tty:
		m.put(m.text(now), "")
	case !tick && m.forced:
		m.put(m.text(now), "\n")
	case tick && now.Sub(m.t0) >= m.delay && (!m.printed || now.Sub(m.last) >= m.every-m.every/20):
		m.put(m.text(now), "\n")
	}
}

func (m *goalMeter) text(now time.Time) string {
	s := fmt.Sprintf("git-evolve: %s: %d/%d done", m.what, m.ended, m.n)
	if len(m.running) > 0 {
		names := m.running
		more := ""
		if len(names) > 3 {
			names, more = names[:3], fmt.Sprintf(" and %d more", len(m.running)-3)
		}
		quoted := make([]string, len(names))
		for i, id := range names {
			quoted[i] = termLine(id)
		}
		s += fmt.Sprintf(", running %s%s", strings.Join(quoted, ", "), more)
	}
	return s + fmt.Sprintf(" (%.1fs)", now.Sub(m.t0).Seconds())
}

func (m *goalMeter) put(s, end string) {
	if m.tty {
		pad := max(0, m.width-len(s))
		m.width = max(m.width, len(s))
		fmt.Fprintf(m.w, "\r%s%s%s", s, strings.Repeat(" ", pad), end)
	} else {
		fmt.Fprintf(m.w, "%s%s", s, end)
	}
	m.printed, m.last = true, m.now()
}

// finish stops the ticks and ends the report: "done" on a terminal, and
// where lines were printed.
func (m *goalMeter) finish() {
	if m.stop != nil {
		close(m.stop)
		m.stopped.Wait()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.printed {
		return
	}
	now := m.now()
	m.put(fmt.Sprintf("git-evolve: %s: %d/%d, done (%.1fs).", m.what, m.ended, m.n, now.Sub(m.t0).Seconds()), "\n")
}
