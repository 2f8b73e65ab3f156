package loop

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"github.com/git-evolve/git-evolve/internal/atomicfile"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The markers, at the seeds' paths.
const (
	Kill    = "KILL"    // the operator's, for every loop of the machine: $XDG_CONFIG_HOME/evolve/KILL and ~/.config/evolve/KILL
	Stop    = "STOP"    // the operator's, for this working tree: .agents/evolve/STOP
	Dormant = "DORMANT" // the loop found nothing to do: .agents/evolve/DORMANT
	Handoff = "HANDOFF" // a context hand-off, never sticky: .agents/evolve/HANDOFF
)

// DefaultKillTTL is how long KILL and STOP hold (EVOLVE_KILL_TTL_DAYS).
const DefaultKillTTL = 7 * 24 * time.Hour

// Markers finds the markers of one working tree.
type Markers struct {
	Top       string // the top of the working tree
	ConfigDir string // $XDG_CONFIG_HOME, else $HOME/.config
	// SeedDir is $HOME/.config, where the seeds' scripts write KILL: a KILL
	// there halts too when XDG_CONFIG_HOME points elsewhere (fail closed).
	SeedDir string
	// Exclude is the repository's info/exclude file: markers written are
	// kept out of git there (a marker is local: committed, it would halt
	// every clone's loop). Empty: not done.
	Exclude string
}

// MarkersFor returns the markers of the working tree top, with the
// configuration directory from the environment.
func MarkersFor(top string, getenv func(string) string) Markers {
	dir := getenv("XDG_CONFIG_HOME")
	if dir == "" {
		dir = filepath.Join(getenv("HOME"), ".config")
	}
	seed := ""
	if home := getenv("HOME"); home != "" {
		seed = filepath.Join(home, ".config")
	}
	return Markers{Top: top, ConfigDir: dir, SeedDir: seed}
}

// paths are where marker name is looked for: KILL at the configuration
// directory's path and at the seeds' (when they differ), the others in the
// working tree.
func (m Markers) paths(name string) []string {
	p := m.Path(name)
	if name == Kill && m.SeedDir != "" {
		if seed := filepath.Join(m.SeedDir, "evolve", Kill); filepath.Clean(seed) != filepath.Clean(p) {
			return []string{p, seed}
		}
	}
	return []string{p}
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

// Read returns marker name when it is there (KILL: the first of its paths
// that holds one).
func (m Markers) Read(name string, now time.Time) (*Marker, bool, error) {
	var path string
	var fi os.FileInfo
	var data []byte
	for _, p := range m.paths(name) {
		d, info, err := readMarker(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, false, err
		}
		path, fi, data = p, info, d
		break
	}
	if fi == nil {
		return nil, false, nil
	}
	mk := &Marker{Name: name, Path: path, Time: fi.ModTime().UTC(), AgeDays: now.Sub(fi.ModTime()).Hours() / 24}
	sc := bufio.NewScanner(bytes.NewReader(data))
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
	return mk, true, nil
}

// maxMarkerFile bounds what is read of a marker: the operator's are a few
// lines, and one an agent wrote may be anything.
const maxMarkerFile = 64 << 10

// readMarker reads the marker at path (a link followed): what it says, at
// most maxMarkerFile bytes, and its file's information. A marker that is
// no regular file (a pipe, a device, a directory: what an agent may leave
// there) is there and says nothing: it is not read, so that no read of it
// waits for a writer or never ends. So is one there and not to be opened
// (a socket, no permission): it holds, to the halt-check as to the watch.
// What it says is nil when it was not read, never when it was.
func readMarker(path string) ([]byte, fs.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscallNonBlock, 0)
	if err != nil {
		fi, serr := os.Stat(path)
		if serr != nil {
			return nil, nil, serr
		}
		return nil, fi, nil
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fi, nil
	}
	data, err := io.ReadAll(io.LimitReader(f, maxMarkerFile))
	if data == nil {
		data = []byte{}
	}
	return data, fi, err
}

// putMarkerBack writes the marker at path again, with data and its time
// mtime (zero: now), as a file of its own put in place by a rename: what
// is at path (a link left there) is replaced, never followed. Under top,
// the directories on its way are made one by one and none that is a link
// is gone through (realDirs); elsewhere (KILL's), its own directory must
// be one.
func putMarkerBack(top, path string, data []byte, mtime time.Time) error {
	dir := filepath.Dir(path)
	if err := realDirs(top, dir); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, filepath.Base(path)+"-*.tmp")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Chmod(0o644) // as Write makes a marker, not a temporary file's 0600
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil && !mtime.IsZero() {
		err = os.Chtimes(tmp.Name(), mtime, mtime)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// realDirs makes dir a directory of its own (atomicfile.OwnDirs): under
// top, each directory between top and it is made when missing and must be
// no link; elsewhere, dir is made as os.MkdirAll makes it and must be no
// link itself.
func realDirs(top, dir string) error {
	base, names := filepath.Dir(dir), []string{filepath.Base(dir)}
	if rel, err := filepath.Rel(top, dir); err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		base, names = top, strings.Split(rel, string(filepath.Separator))
	}
	_, err := atomicfile.OwnDirs(base, 0o755, names...)
	var nd *atomicfile.NotDirError
	if errors.As(err, &nd) {
		// Named from top: said in the cycle's record.
		return fmt.Errorf("%s is no directory of its own (a link, or a file)", TopPath(top, nd.Path))
	}
	return err
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
	if name != Kill && m.Exclude != "" {
		if _, err := ExcludeMarkers(m.Exclude); err != nil {
			return "", err
		}
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(body), 0o644); err != nil {
		return "", err
	}
	// Its age is read from its modification time (as the seeds do, so that
	// markers written by hand count): the same clock as its time line.
	if err := os.Chtimes(tmp, now, now); err != nil {
		os.Remove(tmp)
		return "", err
	}
	return path, os.Rename(tmp, path)
}

// markerPatterns are the working tree's markers, as info/exclude patterns,
// and the seeds' files git-evolve keeps from the ledger (package mirror):
// kept out of git before any agent's turn, whatever writes them during it.
var markerPatterns = []string{"/.agents/evolve/STOP", "/.agents/evolve/DORMANT", "/.agents/evolve/HANDOFF", "/.agents/evolve/*.tmp",
	"/" + CommitMsgFile, "/" + VerdictsFile, "/" + NewHypothesesFile,
	"/.agents/evolve/cycle-history.jsonl", "/.agents/evolve/fitness-latest.json", "/.agents/evolve/fitness-0-baseline.json",
	"/.agents/evolve/session-convergence.json"}

// The files an agent of a run writes for the driver, in the working tree
// (an agent's sandbox may keep .git read-only): the improved commit's
// message ($EVOLVE_COMMIT_MSG), the verdicts of the hypotheses due
// ($EVOLVE_VERDICTS) and the hypotheses it adds ($EVOLVE_HYPOTHESES).
// Local, never committed.
const (
	CommitMsgFile     = ".agents/evolve/commit-msg"
	VerdictsFile      = ".agents/evolve/verdicts.jsonl"
	NewHypothesesFile = ".agents/evolve/new-hypotheses.jsonl"
)

// ExcludeMarkers adds the markers' patterns that the info/exclude file at
// path lacks, so that git (and a cycle's finish, which takes what git add
// -A would) leaves them untracked. It reports whether it added any.
func ExcludeMarkers(path string) (bool, error) {
	return atomicfile.AddLines(path, "# git evolve: the loop's markers are local to this clone", markerPatterns)
}

// Remove takes marker name away (KILL from each of its paths); it
// reports where it was.
func (m Markers) Remove(name string) ([]string, error) {
	var removed []string
	for _, p := range m.paths(name) {
		err := os.Remove(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return removed, err
		}
		removed = append(removed, p)
	}
	return removed, nil
}

// ResumeStamp is the file git evolve resume touches, beside the machine's
// KILL, before it removes markers: a run in any repository of this machine
// whose agent is working learns from it that the operator lifted KILL.
func (m Markers) ResumeStamp() string { return filepath.Join(m.ConfigDir, "evolve", "resumed") }

// StampResume touches the resume stamp.
func (m Markers) StampResume() error {
	p := m.ResumeStamp()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	now := time.Now()
	if err := os.WriteFile(p, []byte(now.UTC().Format(time.RFC3339Nano)+"\n"), 0o644); err != nil {
		return err
	}
	return os.Chtimes(p, now, now)
}
