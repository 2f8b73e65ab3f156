package loop

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestMarkersForHonoursXDGConfigHome(t *testing.T) {
	env := map[string]string{"XDG_CONFIG_HOME": "/xdg", "HOME": "/home/ann"}
	m := MarkersFor("/repo", func(k string) string { return env[k] })
	if got, want := m.Path(Kill), filepath.Join("/xdg", "evolve", "KILL"); got != want {
		t.Errorf("KILL with XDG_CONFIG_HOME: %s, want %s", got, want)
	}
	delete(env, "XDG_CONFIG_HOME")
	m = MarkersFor("/repo", func(k string) string { return env[k] })
	if got, want := m.Path(Kill), filepath.Join("/home/ann", ".config", "evolve", "KILL"); got != want {
		t.Errorf("KILL without XDG_CONFIG_HOME: %s, want %s", got, want)
	}
	for _, name := range []string{Stop, Dormant, Handoff} {
		if got, want := m.Path(name), filepath.Join("/repo", ".agents", "evolve", name); got != want {
			t.Errorf("%s: %s, want %s", name, got, want)
		}
	}
}

func TestMarkersWriteReadRemove(t *testing.T) {
	top, cfg := t.TempDir(), t.TempDir()
	m := Markers{Top: top, ConfigDir: cfg}
	now := fxBase()
	for _, name := range []string{Kill, Stop, Dormant, Handoff} {
		if _, ok, err := m.Read(name, now); ok || err != nil {
			t.Fatalf("%s before it is written: found %v, %v", name, ok, err)
		}
		path, err := m.Write(name, "the build is red", 42, "ann", now)
		if err != nil {
			t.Fatal(err)
		}
		if path != m.Path(name) {
			t.Errorf("%s written to %s, want %s", name, path, m.Path(name))
		}
		if fxExists(path + ".tmp") {
			t.Errorf("%s: the temporary file is left behind", name)
		}
		data, _ := os.ReadFile(path)
		for _, line := range []string{"reason: the build is red", "cycle: 42", "by: ann", "time: " + now.Format(time.RFC3339)} {
			if !strings.Contains(string(data), line+"\n") {
				t.Errorf("%s holds %q, want a line %q", name, data, line)
			}
		}
		mk, ok, err := m.Read(name, now.Add(36*time.Hour))
		if err != nil || !ok {
			t.Fatalf("%s: read %v, %v", name, ok, err)
		}
		if mk.Name != name || mk.Path != path || mk.Reason != "the build is red" || mk.Cycle != "42" {
			t.Errorf("%s read back as %+v", name, mk)
		}
		if mk.AgeDays < 1.4 || mk.AgeDays > 1.6 {
			t.Errorf("%s: age %.3f days 36 hours after it was written, want 1.5", name, mk.AgeDays)
		}
		if removed, err := m.Remove(name); len(removed) != 1 || err != nil {
			t.Errorf("%s: Remove = %v, %v", name, removed, err)
		}
		if fxExists(path) {
			t.Errorf("%s is still there after Remove", name)
		}
		if removed, err := m.Remove(name); len(removed) != 0 || err != nil {
			t.Errorf("%s removed twice: %v, %v", name, removed, err)
		}
	}
}

func TestMarkerWithoutReasonSaysSo(t *testing.T) {
	m := Markers{Top: t.TempDir(), ConfigDir: t.TempDir()}
	if _, err := m.Write(Stop, "", 0, "x", fxBase()); err != nil {
		t.Fatal(err)
	}
	mk, _, _ := m.Read(Stop, fxBase())
	if mk.Reason != "(none given)" {
		t.Errorf("reason %q, want (none given)", mk.Reason)
	}
}

// A marker written by hand (or by the seeds' scripts) is a line of text:
// that is its reason.
func TestMarkerWrittenByHand(t *testing.T) {
	m := Markers{Top: t.TempDir(), ConfigDir: t.TempDir()}
	p := m.Path(Stop)
	os.MkdirAll(filepath.Dir(p), 0o755)
	os.WriteFile(p, []byte("\nstop it now\nsecond line\n"), 0o644)
	mk, ok, err := m.Read(Stop, fxBase())
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	if mk.Reason != "stop it now" || mk.Cycle != "" {
		t.Errorf("hand-written marker read as %+v, want reason %q", mk, "stop it now")
	}
	os.WriteFile(p, nil, 0o644)
	if mk, ok, _ := m.Read(Stop, fxBase()); !ok || mk.Reason != "" {
		t.Errorf("an empty marker: found %v, %+v", ok, mk)
	}
}
