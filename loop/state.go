package loop

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/git-evolve/git-evolve/cycle"
	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/goals"
	"github.com/git-evolve/git-evolve/ledger"
	"github.com/git-evolve/git-evolve/queue"
)

// Config is the loop's settings from git config (section evolve).
type Config struct {
	Thresholds Thresholds
	// Governor is the budget command (evolve.governor;
	// GIT_EVOLVE_GOVERNOR_CMD or EVOLVE_GOVERNOR_CMD wins): exit 3 means the
	// budget is burned.
	Governor string
	// RepoName is the name queue items' target_repo is matched with
	// (evolve.repoName, else the origin remote's last path element, else
	// the working tree's directory name).
	RepoName string
	// Lease is how long a claim on a queue item holds (evolve.claimLease,
	// a Go duration such as 2h).
	Lease time.Duration
}

// State is what the loop's rules read, loaded once: the ledger's cycles,
// the control events, the markers, the work queue and the pinned roadmap,
// the goals file.
type State struct {
	Repo   *gitstore.Repo
	Ledger *cycle.Ledger
	Top    string
	Now    time.Time
	Getenv func(string) string
	Config Config
	// All is every cycle the ledger and the journal hold; Events those of
	// this line of history: cycles started on the branch HEAD names (and
	// records that name none, and quarantines). Loops on other branches or
	// worktrees share the ledger; the rules read this line's cycles.
	All      []Event
	Events   []Event
	Branch   string
	Controls []ControlEvent
	Markers  Markers
	Queue    *queue.Queue
	Items    []queue.Item
	// Malformed are the queue file's lines that do not parse (kept as they
	// are when the file is rewritten).
	Malformed []int
	Roadmap   *Roadmap // nil without a pinned roadmap
	// Goals is the goals file of the working tree (nil when there is none
	// or it does not parse: GoalsErr says why).
	Goals    *goals.File
	GoalsErr error
	// GoalsData is the goals file's content as Goals was parsed from (its
	// digest is what trust is given to).
	GoalsData []byte
	// GoalsName is the goals file's name (GOALS.yaml, or GOALS.md when
	// there is no GOALS.yaml); GoalsNotice is set when both exist.
	GoalsName, GoalsNotice string
}

// Roadmap is a pinned roadmap and how far it has been worked.
type Roadmap struct {
	File      string // as given (relative to the top when it is inside)
	Path      string
	Items     []queue.RoadmapItem
	State     *queue.RoadmapState
	StatePath string
}

// LoadOptions change what Load reads.
type LoadOptions struct {
	Now    time.Time
	Getenv func(string) string
	// RoadmapFile is a pinned roadmap to work (--queue); without it, the
	// roadmap the state file names is worked while it has items left.
	RoadmapFile string
	// Recent, when above 0, reads only the last Recent records and the
	// quarantine records (RecentHistory): for an answer about now, such as
	// git evolve status, not for the loop's rules that count over the
	// whole line.
	Recent int
}

// QueueLock is the lock that guards rewrites of the work queue, in the
// common git directory.
func QueueLock(repo *gitstore.Repo) string {
	return filepath.Join(repo.CommonDir(), "evolve", "queue.lock")
}

// OpenQueue opens the work queue of the working tree top.
func OpenQueue(repo *gitstore.Repo, top string, now func() time.Time) *queue.Queue {
	return queue.Open(filepath.Join(top, filepath.FromSlash(queue.Path)), QueueLock(repo), now)
}

// Load reads the loop's state.
func Load(l *cycle.Ledger, o LoadOptions) (*State, error) {
	repo := l.Repo()
	top, err := repo.WorkTree()
	if err != nil {
		return nil, err
	}
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	now := o.Now
	if now.IsZero() {
		now = time.Now()
	}
	s := &State{Repo: repo, Ledger: l, Top: top, Now: now, Getenv: getenv, Markers: MarkersFor(top, getenv)}
	s.Markers.Exclude = ExcludePath(repo)
	if s.Config, err = loadConfig(repo, top, getenv); err != nil {
		return nil, err
	}
	if o.Recent > 0 {
		s.All, err = RecentHistory(l.Ledger, o.Recent)
	} else {
		s.All, err = History(l.Ledger)
	}
	if err != nil {
		return nil, err
	}
	if s.Branch, err = repo.HeadBranch(); err != nil {
		return nil, err
	}
	if s.Events, err = OnHistory(repo, s.All, s.Branch); err != nil {
		return nil, err
	}
	if s.Controls, err = Controls(repo); err != nil {
		return nil, err
	}
	s.Queue = OpenQueue(repo, top, func() time.Time { return now })
	if s.Items, s.Malformed, err = s.Queue.List(); err != nil {
		return nil, err
	}
	if s.Roadmap, err = loadRoadmap(top, o.RoadmapFile, o.Now); err != nil {
		return nil, err
	}
	path, both := goals.Locate(top)
	s.GoalsName = filepath.Base(path)
	if both {
		s.GoalsNotice = goals.BothNotice
	}
	if s.GoalsData, s.GoalsErr = os.ReadFile(path); s.GoalsErr == nil {
		s.Goals, s.GoalsErr = goals.Parse(s.GoalsName, s.GoalsData)
	}
	return s, nil
}

func loadConfig(repo *gitstore.Repo, top string, getenv func(string) string) (Config, error) {
	cfg, err := repo.ConfigSection("evolve")
	if err != nil {
		return Config{}, err
	}
	c := Config{Lease: queue.DefaultLease}
	if c.Thresholds, err = thresholdsFrom(cfg); err != nil {
		return c, err
	}
	last := func(k string) string {
		if v := cfg[k]; len(v) > 0 {
			return v[len(v)-1]
		}
		return ""
	}
	c.Governor = last("evolve.governor")
	if _, g := envAlias(getenv, "GOVERNOR_CMD"); g != "" {
		c.Governor = g
	}
	if v := last("evolve.claimlease"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return c, &RunError{Msg: fmt.Sprintf("git config evolve.claimLease = %q: must be a duration such as 2h", v), Usage: true,
				Hint: "set it with git config evolve.claimLease 2h, or remove it with git config --unset evolve.claimLease"}
		}
		c.Lease = d
	}
	c.RepoName = last("evolve.reponame")
	if c.RepoName == "" {
		if urls, err := repo.ConfigGetAll("remote.origin.url"); err == nil && len(urls) > 0 {
			c.RepoName = repoNameOf(urls[len(urls)-1])
		}
	}
	if c.RepoName == "" {
		c.RepoName = filepath.Base(top)
	}
	return c, nil
}

// repoNameOf is the last path element of a remote URL, without .git.
func repoNameOf(u string) string {
	p := u
	if parsed, err := url.Parse(u); err == nil && parsed.Scheme != "" {
		p = parsed.Path
	} else if _, rest, ok := strings.Cut(u, ":"); ok && !strings.Contains(u[:strings.Index(u, ":")], "/") {
		p = rest // scp-like: host:path
	}
	p = strings.TrimSuffix(strings.TrimRight(filepath.ToSlash(p), "/"), ".git")
	return path.Base(p)
}

// InlineRoadmapPath is where an inline roadmap is written (seed 004: a
// --queue value that is no file is the roadmap itself).
const InlineRoadmapPath = ".agents/evolve/roadmap.md"

// PinRoadmap resolves a --queue value: a file (relative to dir) is itself;
// a value that is no file but holds roadmap items is written to
// .agents/evolve/roadmap.md under top, whose path is returned (wrote says
// so). Anything else is returned as it was, for the reader to refuse.
func PinRoadmap(top, dir, value string) (path string, wrote bool, err error) {
	p := value
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	if _, err := os.Stat(p); err == nil || len(queue.ParseRoadmap([]byte(value))) == 0 {
		return p, false, nil
	}
	dst := filepath.Join(top, filepath.FromSlash(InlineRoadmapPath))
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return "", false, err
	}
	text := strings.TrimRight(value, "\n") + "\n"
	if err := WriteAtomic(dst, []byte(text)); err != nil {
		return "", false, err
	}
	return dst, true, nil
}

func loadRoadmap(top, file string, now time.Time) (*Roadmap, error) {
	statePath := filepath.Join(top, filepath.FromSlash(queue.RoadmapStatePath))
	fromState := file == ""
	if fromState {
		// The roadmap a previous run pinned, while its file is there.
		data, err := os.ReadFile(statePath)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		var st queue.RoadmapState
		if json.Unmarshal(data, &st) != nil || st.QueueFile == "" {
			return nil, nil
		}
		file = st.QueueFile
	}
	p := file
	if !filepath.IsAbs(p) {
		p = filepath.Join(top, filepath.FromSlash(p))
	}
	data, err := os.ReadFile(p)
	switch {
	case errors.Is(err, fs.ErrNotExist) && fromState:
		return nil, nil // the roadmap a run pinned is gone: nothing is pinned
	case errors.Is(err, fs.ErrNotExist):
		return nil, &RunError{Msg: fmt.Sprintf("--queue %s: no such file", file), Usage: true,
			Hint: "name a roadmap: an ordered Markdown list, an item a line (1. `id` what to do, blocker: `other-id`)"}
	case err != nil:
		return nil, fmt.Errorf("the pinned roadmap: %w", err)
	}
	rel := file
	if r, err := filepath.Rel(top, p); err == nil && !strings.HasPrefix(r, "..") {
		rel = filepath.ToSlash(r)
	}
	items := queue.ParseRoadmap(data)
	st, err := queue.LoadRoadmapState(statePath, rel)
	if err != nil {
		return nil, err
	}
	if sum := sha256.Sum256(data); st.Digest != hex.EncodeToString(sum[:]) {
		// A new roadmap, or new content: a scope shift, saved by the run's
		// next Take; and the items are walked from the first again (a new
		// list at the same path, or items put before the current one).
		st.Digest, st.PinnedAt = hex.EncodeToString(sum[:]), now.UTC().Format(time.RFC3339)
		st.Rewind(items)
	}
	return &Roadmap{File: rel, Path: p, Items: items, State: st, StatePath: statePath}, nil
}

// GoalDigest names a goal's definition: a quarantine holds until it changes.
func GoalDigest(g goals.Goal) string {
	g.Line = 0 // moving the goal in the file does not change it
	data, _ := json.Marshal(g)
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:8])
}

// digests are the GoalDigest of each goal of f.
func digests(f *goals.File) map[string]string {
	out := map[string]string{}
	if f != nil {
		for _, g := range f.Goals {
			out[g.ID] = GoalDigest(g)
		}
	}
	return out
}

// era is the goals file's era ("" without one).
func (s *State) era() string {
	if s.Goals == nil {
		return ""
	}
	return s.Goals.Era
}

// Quarantined are the goals held in quarantine now.
func (s *State) Quarantined() []string {
	return Quarantined(s.Events, digests(s.Goals), s.era())
}

// LastResume is when the operator last resumed the loop.
func (s *State) LastResume() time.Time { return LastResume(s.Controls) }

// LastFailing is the goals that failed when the ledger last measured them
// (after an improved cycle, before any other: a regressed cycle's work was
// reverted), and whether any cycle measured them.
func (s *State) LastFailing() ([]string, bool) {
	for i := len(s.Events) - 1; i >= 0; i-- {
		e := s.Events[i]
		if !e.HasBefore {
			continue
		}
		if e.Productive() {
			return e.FailingAfter, true
		}
		return e.FailingBefore, true
	}
	return nil, false
}

// OnHistory are the events of the history HEAD reaches: those of cycles
// whose commit (the one its note is on; a journal record's, the one it
// names) HEAD reaches, whatever branch they were made on, and the
// quarantines (a goal's oscillation is the goal's, wherever it showed). A
// record whose commit this clone does not have (the ledger was fetched,
// the commit was not; a shallow clone), or a journal record whose commit
// HEAD does not reach, is taken by the branch it names (OnLine). So a new
// branch starts with its base's cycles, a merge brings the merged
// branch's, and a cycle made on a branch that never reached HEAD is not
// HEAD's.
func OnHistory(repo *gitstore.Repo, events []Event, branch string) ([]Event, error) {
	var commits []gitstore.Hash
	seen := map[gitstore.Hash]bool{}
	for _, e := range events {
		if !e.Commit.IsZero() && !e.Absent && !seen[e.Commit] {
			seen[e.Commit] = true
			commits = append(commits, e.Commit)
		}
	}
	reach, err := repo.Reachable("HEAD", commits)
	if err != nil {
		return nil, err
	}
	out := make([]Event, 0, len(events))
	for _, e := range events {
		switch {
		case e.Result == ledger.Quarantined:
		case reached(reach, e.Commit):
		case e.Commit.IsZero() || e.Absent || e.Journal:
			if !onLine(e, branch) {
				continue
			}
		default:
			continue
		}
		out = append(out, e)
	}
	return out, nil
}

// OnLine are the events of the line of history of branch by the branch
// each names: those of cycles started on it, those that name no branch,
// and quarantines. A detached HEAD ("") takes them all.
func OnLine(events []Event, branch string) []Event {
	out := make([]Event, 0, len(events))
	for _, e := range events {
		if onLine(e, branch) {
			out = append(out, e)
		}
	}
	return out
}

func reached(reach map[gitstore.Hash]int, c gitstore.Hash) bool {
	_, ok := reach[c]
	return ok
}

func onLine(e Event, branch string) bool {
	return branch == "" || e.Branch == "" || e.Branch == branch || e.Result == ledger.Quarantined
}

// MaxCycle is the highest cycle number the ledger and the journal hold, or
// the open cycle's when it is higher.
func (s *State) MaxCycle() int {
	n := 0
	for _, e := range s.All {
		n = max(n, e.Cycle)
	}
	if c, err := s.Ledger.Current(); err == nil {
		n = max(n, c.Cycle)
	}
	return n
}

// Harvested are the queue's selectable items for this repository, in the
// order the ladder takes them: an exact target_repo first, then "*", then
// the items that name none; higher severity first; the file's order.
// processTypes are the queue item types that are process work (docs,
// research, retrospectives, chores); any other type is concrete
// implementation work, which seed 004 takes first at equal severity.
var processTypes = map[string]bool{"process": true, "docs": true, "doc": true, "documentation": true, "research": true,
	"chore": true, "meta": true, "retro": true, "retrospective": true, "postmortem": true, "post-mortem": true, "learning": true, "knowledge": true}

func (s *State) Harvested() []queue.Item {
	type ranked struct {
		it                  queue.Item
		scope, sev, process int
	}
	var rs []ranked
	for _, it := range s.Items {
		if !it.Selectable() {
			continue
		}
		scope := s.scope(it)
		if scope < 0 {
			continue // another repository's
		}
		process := 0
		if processTypes[strings.ToLower(it.Type)] {
			process = 1
		}
		rs = append(rs, ranked{it, scope, queue.SeverityRank(it.Severity), process})
	}
	slices.SortStableFunc(rs, func(a, b ranked) int {
		if a.scope != b.scope {
			return a.scope - b.scope
		}
		if a.sev != b.sev {
			return a.sev - b.sev // SeverityRank: 0 is the highest
		}
		return a.process - b.process // concrete implementation work before process work
	})
	out := make([]queue.Item, len(rs))
	for i, r := range rs {
		out[i] = r.it
	}
	return out
}

// ReadyWork counts the work the ladder has besides its generators: the
// pinned roadmap's items left, the harvested items, and the goals failing
// when last measured that are not quarantined.
func (s *State) ReadyWork() int {
	n := len(s.Harvested())
	if s.Roadmap != nil {
		if _, _, _, ok := s.Roadmap.State.Next(s.Roadmap.Items); ok {
			n++
		}
	}
	failing, _ := s.LastFailing()
	q := s.Quarantined()
	for _, g := range failing {
		if !contains(q, g) {
			n++
		}
	}
	return n
}

// scope ranks a queue item by the repository it names: 0 this one, 1 any
// ("*"), 2 none; -1 another repository's (no work of this loop).
func (s *State) scope(it queue.Item) int {
	switch it.TargetRepo {
	case s.Config.RepoName:
		return 0
	case "*":
		return 1
	case "":
		return 2
	}
	return -1
}

// ExcludePath is the repository's info/exclude file (shared by its
// worktrees).
func ExcludePath(repo *gitstore.Repo) string {
	return filepath.Join(repo.CommonDir(), "info", "exclude")
}

func contains(list []string, s string) bool { return slices.Contains(list, s) }
