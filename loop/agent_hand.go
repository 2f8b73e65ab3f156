package loop

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The seeds forbid the agent to stop or resume its own loop. It runs as the
// same user, so the tool cannot make that impossible; it makes the agent's
// hand visible and keeps the operator in charge: stop, kill and resume run
// from inside an agent's process group, session or process tree are
// refused (AgentInside), and the driver watches the operator's markers
// while the agent runs (watchMarkers).

// AgentInside reports the run whose agent this process was started by, when
// there is one among the worktrees of the repository whose common git
// directory is commonDir: this process is in the agent's process group or
// session (the driver starts the agent as the leader of both), or the
// agent's process is among its ancestors; gitDir is the git directory of
// the worktree the run drives. The environment plays no part: an agent can
// unset it.
func AgentInside(commonDir string) (runID string, group int, gitDir string, inside bool) {
	dirs := []string{commonDir}
	if wts, err := filepath.Glob(filepath.Join(commonDir, "worktrees", "*")); err == nil {
		dirs = append(dirs, wts...)
	}
	self := ownProcess()
	for _, dir := range dirs {
		r, err := LoadRunState(dir)
		if err != nil || r == nil || r.AgentGroup <= 0 || !agentAlive(r) {
			continue
		}
		if self.group == r.AgentGroup || self.session == r.AgentGroup || descendsFrom(os.Getpid(), r.AgentGroup) {
			return r.ID, r.AgentGroup, dir, true
		}
	}
	return "", 0, "", false
}

// descendsFrom reports whether process ancestor is among pid's ancestors,
// as /proc tells (false where there is no /proc).
func descendsFrom(pid, ancestor int) bool {
	for i := 0; i < 256 && pid > 1; i++ {
		ppid := procParent(pid)
		if ppid == ancestor {
			return true
		}
		pid = ppid
	}
	return false
}

// procParent is process pid's parent, from /proc/<pid>/stat (0 when it
// cannot be told).
func procParent(pid int) int {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0
	}
	fields := strings.Fields(string(data[i+1:]))
	if len(fields) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(fields[1])
	return ppid
}

// markerWatch watches the operator's markers (STOP, and KILL at each of
// its paths) while an agent runs. A marker that appears is noted; one that
// was there and disappears is put back as it was, unless git evolve resume
// (refused to the agent) lifted it meanwhile.
type markerWatch struct {
	m       Markers
	resumed func() bool // whether a resume was recorded since the watch began
	paths   []string
	mu      sync.Mutex
	last    map[string][]byte // the content last seen, of each marker present
	mtime   map[string]time.Time
	noted   map[string]bool
	// Appeared are the markers that appeared during the turn, Removed
	// those the agent removed (put back), Lifted those removed after a
	// resume was signalled (not put back).
	Appeared, Removed, Lifted []string
	// NotBack are the markers the agent removed that could not be put
	// back (a link on the way, which the put-back does not go through),
	// with why: said, and the run halts all the same.
	NotBack map[string]error
	stop    chan struct{}
	done    chan struct{}
	halted  sync.Once
}

// watchMarkers starts watching, every interval, until end.
func watchMarkers(m Markers, resumed func() bool, every time.Duration) *markerWatch {
	w := &markerWatch{m: m, resumed: resumed, last: map[string][]byte{}, mtime: map[string]time.Time{}, noted: map[string]bool{}, NotBack: map[string]error{},
		stop: make(chan struct{}), done: make(chan struct{})}
	w.paths = append(append(w.paths, m.paths(Stop)...), m.paths(Kill)...)
	for _, p := range w.paths {
		if data, fi, err := readMarker(p); err == nil {
			w.last[p], w.mtime[p] = data, fi.ModTime()
		}
	}
	go func() {
		defer close(w.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-w.stop:
				return
			case <-t.C:
				w.poll()
			}
		}
	}()
	return w
}

func (w *markerWatch) poll() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, p := range w.paths {
		// Read bounded, and never waiting on what is there (readMarker).
		data, fi, err := readMarker(p)
		prev, had := w.last[p]
		switch {
		case err == nil:
			if !had && !w.noted["appeared "+p] {
				w.noted["appeared "+p] = true
				w.Appeared = append(w.Appeared, p)
			}
			// What one that says nothing (no file, or not to be opened)
			// is put back as is what was there before it, if anything.
			if !had || data != nil {
				w.last[p], w.mtime[p] = data, fi.ModTime()
			}
		case (errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)) && had:
			// Gone (a file in place of a directory on its way too).
			if w.resumed != nil && w.resumed() {
				// The operator resumed; or the agent, which can touch
				// the stamp as any process of the user can: said.
				delete(w.last, p)
				delete(w.NotBack, p)
				if !w.noted["lifted "+p] {
					w.noted["lifted "+p] = true
					w.Lifted = append(w.Lifted, p)
				}
				continue
			}
			// Put back as it was, its time too (a KILL's age is read from
			// it): in place of a link the agent left there, never through
			// one. One that cannot be (a link on its way) is tried again
			// at the next look, and said if it never is: the run halts
			// either way.
			if err := putMarkerBack(w.m.Top, p, prev, w.mtime[p]); err != nil {
				w.NotBack[p] = err
				continue
			}
			delete(w.NotBack, p)
			if !w.noted["removed "+p] {
				w.noted["removed "+p] = true
				w.Removed = append(w.Removed, p)
			}
		}
	}
}

// halt stops the watch's looks every interval (end takes the last one).
func (w *markerWatch) halt() {
	w.halted.Do(func() {
		close(w.stop)
		<-w.done
	})
}

// leave has the last look leave alone the markers under top (which no
// longer leads to the working tree the watch began in): none is put back
// or noted there.
func (w *markerWatch) leave(top string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var kept []string
	for _, p := range w.paths {
		if r, err := filepath.Rel(top, p); err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			delete(w.NotBack, p)
			continue
		}
		kept = append(kept, p)
	}
	w.paths = kept
}

// end stops the watch after a last look, and returns what it saw said in
// sentences (paths relative to top where they are inside it).
func (w *markerWatch) end(top string) (notes []string, removed bool) {
	w.halt()
	w.poll()
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, p := range w.Appeared {
		by := ""
		if m := markerBy(w.last[p]); m != "" {
			by = " (it says: " + m + ")"
		}
		notes = append(notes, fmt.Sprintf("%s appeared during the agent's turn%s: honoured at the next halt-check", TopPath(top, p), by))
	}
	for _, p := range w.Removed {
		notes = append(notes, fmt.Sprintf("the agent removed %s during its turn: the driver put it back, and the run halts", TopPath(top, p)))
	}
	for _, p := range w.paths {
		if err, ok := w.NotBack[p]; ok {
			notes = append(notes, fmt.Sprintf("the agent removed %s during its turn: it could not be put back (%v), and the run halts", TopPath(top, p), err))
		}
	}
	for _, p := range w.Lifted {
		notes = append(notes, fmt.Sprintf("%s was removed during the agent's turn after a resume was signalled (the resume stamp touched, or a resume recorded): not put back", TopPath(top, p)))
	}
	return notes, len(w.Removed) > 0 || len(w.NotBack) > 0
}

// markerBy is the reason and author a marker's content names, bounded and
// cleaned: the file is the agent's to write.
func markerBy(data []byte) string {
	var parts []string
	for _, line := range strings.Split(string(data), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if ok && (k == "reason" || k == "by") && strings.TrimSpace(v) != "" {
			parts = append(parts, k+" "+strings.TrimSpace(v))
		}
	}
	s := strings.Join(parts, ", ")
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, s)
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// TopPath shows path relative to the working tree when it is inside.
func TopPath(top, path string) string {
	if r, err := filepath.Rel(top, path); err == nil && !strings.HasPrefix(r, "..") {
		return filepath.ToSlash(r)
	}
	return path
}
