package loop

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The markers, at the seeds' paths.
const (
	Kill    = "KILL"    // the operator's, for every loop of the machine: $XDG_CONFIG_HOME/evolve/KILL
	Stop    = "STOP"    // the operator's, for this repository: .agents/evolve/STOP
	Dormant = "DORMANT" // the loop found nothing to do: .agents/evolve/DORMANT
	Handoff = "HANDOFF" // a context hand-off, never sticky: .agents/evolve/HANDOFF
)

// DefaultKillTTL is how long KILL and STOP hold (EVOLVE_KILL_TTL_DAYS).
const DefaultKillTTL = 7 * 24 * time.Hour

// Markers finds the markers of one working tree.
type Markers struct {
	Top       string // the top of the working tree
	ConfigDir string // $XDG_CONFIG_HOME, else $HOME/.config
}

// MarkersFor returns the markers of the working tree top, with the
// configuration directory from the environment.
func MarkersFor(top string, getenv func(string) string) Markers {
	dir := getenv("XDG_CONFIG_HOME")
	if dir == "" {
		dir = filepath.Join(getenv("HOME"), ".config")
	}
	return Markers{Top: top, ConfigDir: dir}
}

// Path is where marker name lives.
func (m Markers) Path(name string) string {
	if name == Kill {
		return filepath.Join(m.ConfigDir, "evolve", Kill)
	}
	return filepath.Join(m.Top, ".agents", "evolve", name)
}

// Marker is a marker found, with what it says.
type Marker struct {
	Name   string    `json:"marker"`
	Path   string    `json:"path"`
	Reason string    `json:"reason,omitempty"`
	Cycle  string    `json:"cycle,omitempty"`
	Time   time.Time `json:"time"`
	// AgeDays is how old it is (from its modification time, as the seeds'
	// halt-check reads it).
	AgeDays float64 `json:"age_days"`
}

// Read returns marker name when it is there.
func (m Markers) Read(name string, now time.Time) (*Marker, bool, error) {
	path := m.Path(name)
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	mk := &Marker{Name: name, Path: path, Time: fi.ModTime().UTC(), AgeDays: now.Sub(fi.ModTime()).Hours() / 24}
	if f, err := os.Open(path); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			k, v, ok := strings.Cut(sc.Text(), ":")
			switch strings.TrimSpace(k) {
			case "reason":
				mk.Reason = strings.TrimSpace(v)
			case "cycle":
				mk.Cycle = strings.TrimSpace(v)
			default:
				if !ok && mk.Reason == "" { // a marker written by hand, or by the seeds' scripts
					mk.Reason = strings.TrimSpace(sc.Text())
				}
			}
		}
		f.Close()
	}
	return mk, true, nil
}

// Write puts marker name down: why, when, at which cycle, by whom.
func (m Markers) Write(name, reason string, cycle int, by string, now time.Time) (string, error) {
	path := m.Path(name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", err
	}
	if reason == "" {
		reason = "(none given)"
	}
	body := fmt.Sprintf("reason: %s\ntime: %s\ncycle: %d\nby: %s\n", reason, now.UTC().Format(time.RFC3339), cycle, by)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(body), 0o644); err != nil {
		return "", err
	}
	return path, os.Rename(tmp, path)
}

// Remove takes marker name away; it reports whether it was there.
func (m Markers) Remove(name string) (bool, error) {
	err := os.Remove(m.Path(name))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}
