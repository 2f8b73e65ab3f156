//go:build unix

package loop

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A pipe an agent leaves at STOP is a STOP that says nothing: neither the
// halt-check's read nor the watch's waits for a writer. (A read that waits
// never returns: the test then ends at go test's -timeout, its stack
// naming the open that waits.)
func TestMarkerPipeReadWithoutWaiting(t *testing.T) {
	top := t.TempDir()
	m := Markers{Top: top, ConfigDir: filepath.Join(top, "config")}
	stop := m.Path(Stop)
	w := watchMarkers(m, nil, time.Hour)
	if err := os.MkdirAll(filepath.Dir(stop), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(stop, 0o644); err != nil {
		t.Skipf("no pipes here: %v", err)
	}
	notes, _ := w.end(top)
	if len(notes) != 1 || !strings.HasPrefix(notes[0], ".agents/evolve/STOP appeared during the agent's turn") {
		t.Errorf("notes %q", notes)
	}
	if mk, ok, err := m.Read(Stop, time.Now()); err != nil || !ok || mk.Reason != "" {
		t.Errorf("read %+v %v %v", mk, ok, err)
	}
}

// A marker the agent removed is put back in place of the link it left
// there, not through it, and not through a directory it made a link.
func TestMarkerPutBackFollowsNoLink(t *testing.T) {
	for _, tc := range []struct {
		name   string
		attack func(t *testing.T, m Markers, elsewhere string)
		back   bool // the marker is put back
	}{
		{"a link at STOP", func(t *testing.T, m Markers, elsewhere string) {
			must(t, os.Remove(m.Path(Stop)))
			must(t, os.Symlink(filepath.Join(elsewhere, "made"), m.Path(Stop)))
		}, true},
		{"a link in place of .agents", func(t *testing.T, m Markers, elsewhere string) {
			must(t, os.RemoveAll(filepath.Join(m.Top, ".agents")))
			must(t, os.Symlink(elsewhere, filepath.Join(m.Top, ".agents")))
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			top, elsewhere := t.TempDir(), t.TempDir()
			m := Markers{Top: top, ConfigDir: filepath.Join(top, "config")}
			if _, err := m.Write(Stop, "the operator's", 1, "op", time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)); err != nil {
				t.Fatal(err)
			}
			w := watchMarkers(m, nil, time.Hour)
			tc.attack(t, m, elsewhere)
			w.end(top)
			if entries, _ := os.ReadDir(elsewhere); len(entries) != 0 {
				t.Errorf("the put-back wrote where the link leads: %v", entries)
			}
			fi, err := os.Lstat(m.Path(Stop))
			if tc.back {
				if err != nil || !fi.Mode().IsRegular() {
					t.Fatalf("STOP is not put back as a file of its own: %v %v", fi, err)
				}
				if data, _ := os.ReadFile(m.Path(Stop)); !strings.Contains(string(data), "reason: the operator's") {
					t.Errorf("STOP put back says %q", data)
				}
			}
		})
	}
}

// What is read of a marker is bounded, whatever the agent writes there.
func TestMarkerReadBounded(t *testing.T) {
	top := t.TempDir()
	m := Markers{Top: top, ConfigDir: filepath.Join(top, "config")}
	w := watchMarkers(m, nil, time.Hour)
	must(t, os.MkdirAll(filepath.Dir(m.Path(Stop)), 0o755))
	big := "reason: mine\n" + strings.Repeat("x", 4*maxMarkerFile)
	must(t, os.WriteFile(m.Path(Stop), []byte(big), 0o644))
	w.end(top)
	if n := len(w.last[m.Path(Stop)]); n != maxMarkerFile {
		t.Errorf("the watch holds %d bytes of the marker", n)
	}
	if mk, ok, err := m.Read(Stop, time.Now()); err != nil || !ok || mk.Reason != "mine" {
		t.Errorf("read %+v %v %v", mk, ok, err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// A marker the agent removed that cannot be put back (a link in place of
// a directory on its way, which the put-back does not go through) is
// said, and the run halts: the halt-check, reading through the link,
// finds no marker there.
func TestMarkerNotPutBackHalts(t *testing.T) {
	for _, tc := range []struct {
		name, marker string
		attack       func(t *testing.T, m Markers, elsewhere string)
	}{
		{"STOP, .agents a link", Stop, func(t *testing.T, m Markers, elsewhere string) {
			must(t, os.RemoveAll(filepath.Join(m.Top, ".agents")))
			must(t, os.Symlink(elsewhere, filepath.Join(m.Top, ".agents")))
		}},
		{"STOP, .agents a dangling link", Stop, func(t *testing.T, m Markers, elsewhere string) {
			must(t, os.RemoveAll(filepath.Join(m.Top, ".agents")))
			must(t, os.Symlink(filepath.Join(elsewhere, "none"), filepath.Join(m.Top, ".agents")))
		}},
		{"STOP, .agents/evolve a file", Stop, func(t *testing.T, m Markers, elsewhere string) {
			must(t, os.RemoveAll(filepath.Dir(m.Path(Stop))))
			must(t, os.WriteFile(filepath.Dir(m.Path(Stop)), nil, 0o644))
		}},
		{"KILL, its directory a link", Kill, func(t *testing.T, m Markers, elsewhere string) {
			must(t, os.RemoveAll(filepath.Dir(m.Path(Kill))))
			must(t, os.Symlink(elsewhere, filepath.Dir(m.Path(Kill))))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			top, elsewhere := t.TempDir(), t.TempDir()
			m := Markers{Top: top, ConfigDir: filepath.Join(top, "config")}
			if _, err := m.Write(tc.marker, "the operator's", 1, "op", time.Now()); err != nil {
				t.Fatal(err)
			}
			w := watchMarkers(m, nil, time.Hour)
			tc.attack(t, m, elsewhere)
			notes, removed := w.end(top)
			if _, ok, err := m.Read(tc.marker, time.Now()); ok || err != nil && !errors.Is(err, syscall.ENOTDIR) {
				t.Fatalf("the marker is still found (%v): the attack did nothing", err)
			}
			if !removed || len(notes) != 1 || !strings.Contains(notes[0], "the agent removed "+TopPath(top, m.Path(tc.marker))+" during its turn: it could not be put back") {
				t.Errorf("a marker removed and not put back: notes %q, removed %v", notes, removed)
			}
			if entries, _ := os.ReadDir(elsewhere); len(entries) != 0 {
				t.Errorf("written where the link leads: %v", entries)
			}
		})
	}
}

// A socket an agent leaves at STOP is a STOP that says nothing, to the
// watch as to the halt-check (it cannot be opened): its appearing is said.
func TestMarkerSocketAppears(t *testing.T) {
	top := t.TempDir()
	m := Markers{Top: top, ConfigDir: filepath.Join(top, "config")}
	stop := m.Path(Stop)
	w := watchMarkers(m, nil, time.Hour)
	must(t, os.MkdirAll(filepath.Dir(stop), 0o755))
	l, err := net.Listen("unix", stop)
	if err != nil {
		t.Skipf("no sockets here: %v", err)
	}
	defer l.Close()
	if _, ok, err := m.Read(Stop, time.Now()); err != nil || !ok {
		t.Fatalf("the halt-check's read: %v %v", ok, err)
	}
	notes, _ := w.end(top)
	if len(notes) != 1 || !strings.HasPrefix(notes[0], ".agents/evolve/STOP appeared during the agent's turn") {
		t.Errorf("notes %q", notes)
	}
}

// The operator's STOP the agent replaces with what says nothing (a pipe),
// then removes, is put back as the operator wrote it.
func TestMarkerPutBackAsTheOperatorWroteIt(t *testing.T) {
	top := t.TempDir()
	m := Markers{Top: top, ConfigDir: filepath.Join(top, "config")}
	stop := m.Path(Stop)
	if _, err := m.Write(Stop, "the operator's", 1, "op", time.Now()); err != nil {
		t.Fatal(err)
	}
	w := watchMarkers(m, nil, time.Hour)
	must(t, os.Remove(stop))
	if err := syscall.Mkfifo(stop, 0o644); err != nil {
		t.Skipf("no pipes here: %v", err)
	}
	w.poll()
	must(t, os.Remove(stop))
	if _, removed := w.end(top); !removed {
		t.Error("not said removed")
	}
	if data, err := os.ReadFile(stop); err != nil || !strings.Contains(string(data), "reason: the operator's") {
		t.Errorf("STOP put back says %q (%v)", data, err)
	}
}
