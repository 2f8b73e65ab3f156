package goals

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

const valid = `version: 3
mission: ship
goals:
  - id: api-latency
    description: p99 under 200ms
    check: "echo 0.15"
    weight: 7
    type: health
    pillar: reliability
    tags: [slo, production]
    continuous:
      metric: api_latency_p99
      threshold: 0.2
      direction: lower
      tolerance: 0.01
  - id: docs
    description: docs build
    check: make docs
    weight: 2
    timeout: 90s
gate:
  commands: [go test ./..., go vet ./...]
  timeout: 10m
`

func TestParseValid(t *testing.T) {
	f, err := Parse("GOALS.yaml", []byte(valid))
	if err != nil {
		t.Fatal(err)
	}
	if f.Version != 3 || f.Mission != "ship" || len(f.Goals) != 2 {
		t.Fatalf("parsed %+v", f)
	}
	g := f.Goals[0]
	if g.ID != "api-latency" || g.Weight != 7 || g.Pillar != "reliability" || strings.Join(g.Tags, ",") != "slo,production" ||
		g.Timeout != DefaultTimeout || g.Continuous == nil || g.Continuous.Threshold != 0.2 ||
		g.Continuous.Direction != "lower" || g.Continuous.Tolerance != 0.01 || g.Line != 4 {
		t.Errorf("goal 1 = %+v, continuous %+v", g, g.Continuous)
	}
	if d := f.Goals[1]; d.Timeout != 90*time.Second || d.Type != "health" {
		t.Errorf("goal 2 = %+v", d)
	}
	if strings.Join(f.Gate.Commands, "|") != "go test ./...|go vet ./..." || f.Gate.Timeout != 10*time.Minute {
		t.Errorf("gate = %+v", f.Gate)
	}
	if !regexp.MustCompile(`^goals-[0-9a-f]{12}$`).MatchString(f.Era) {
		t.Errorf("era = %q", f.Era)
	}
	if f2, _ := Parse("GOALS.yaml", []byte(valid+"\n")); f2.Era == f.Era {
		t.Error("a different content has the same era")
	}
}

// Every problem is reported, each where it is.
func TestParseProblems(t *testing.T) {
	tests := []struct {
		name, doc string
		want      []string // "line:col: substring"
	}{
		{"empty", ``, []string{"0:0: no goals to measure"}},
		{"not yaml", "version: [\n", []string{"1:1: did not find expected node content"}},
		{"no goals", "version: 3\n", []string{"1:1: goals is missing"}},
		{"empty goals", "version: 3\ngoals: []\n", []string{"2:8: goals is empty"}},
		{"version", "version: 4\ngoals:\n  - {id: a, description: d, check: c, weight: 1}\n", []string{"1:10: version must be from 1 to 3, not 4"}},
		{"no version", "goals:\n  - {id: a, description: d, check: c, weight: 1}\n", []string{"1:1: version is missing"}},
		{"goal fields", "version: 3\ngoals:\n  - id: Not_Kebab\n    check: ''\n    weight: 0\n    type: other\n    wieght: 3\n",
			[]string{`3:9: id "Not_Kebab" must be kebab-case`, "5:13: weight must be from 1 to 10, not 0", `6:11: type "other"`,
				"3:5: goal description is missing", "3:5: goal check is empty"}},
		{"duplicate id", "version: 3\ngoals:\n  - {id: a, description: d, check: c, weight: 1}\n  - {id: a, description: d, check: c, weight: 1}\n",
			[]string{`4:10: goal id "a" is also used at line 3`}},
		{"continuous", "version: 3\ngoals:\n  - id: a\n    description: d\n    check: c\n    weight: 1\n    continuous: {threshold: x, direction: up, tolerance: -1, value: '(', colour: red}\n",
			[]string{"7:29: threshold must be a number", `7:43: direction "up"`, "7:58: tolerance must not be negative",
				"7:69: value is not a regular expression", "7:17: continuous metric is missing"}},
		{"timeout", "version: 3\ngoals:\n  - {id: a, description: d, check: c, weight: 1, timeout: soon}\n", []string{"3:59: timeout must be a duration"}},
		{"gate", "version: 3\ngate: {commands: go test, retries: 2}\ngoals:\n  - {id: a, description: d, check: c, weight: 1}\n",
			[]string{"2:18: gate commands must be a list"}},
		{"empty gate", "version: 3\ngate: ' '\ngoals:\n  - {id: a, description: d, check: c, weight: 1}\n",
			[]string{"2:7: gate is empty (gate: [] runs no command)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("G.yaml", []byte(tt.doc))
			var ps Problems
			if !errors.As(err, &ps) {
				t.Fatalf("Parse = %v, want Problems", err)
			}
			if ps.Errors() != len(tt.want) {
				t.Errorf("%d errors, want %d:\n%v", ps.Errors(), len(tt.want), ps)
			}
			for _, p := range ps {
				if p.Warning != strings.Contains(p.Msg, "unknown") {
					t.Errorf("%v: warning %v", p, p.Warning)
				}
			}
			for _, w := range tt.want {
				found := false
				for _, p := range ps {
					if strings.Contains(strings.TrimPrefix(p.Error(), "G.yaml:"), w) || w[:4] == "0:0:" && p.Line == 0 && strings.Contains(p.Msg, w[5:]) {
						found = true
					}
				}
				if !found {
					t.Errorf("no problem %q in:\n%v", w, ps)
				}
			}
		})
	}
}

func goal(id, check string, weight int) Goal {
	return Goal{ID: id, Description: id, Check: check, Weight: weight, Type: "health", Timeout: 10 * time.Second}
}

func TestMeasure(t *testing.T) {
	dir := t.TempDir()
	f := &File{Era: "goals-x", Goals: []Goal{
		goal("pass", "test -d .", 5),
		goal("fail", "echo broken >&2; exit 3", 3),
		goal("skip", "exit 77", 2),
		{ID: "hang", Check: "sleep 30 & sleep 30", Weight: 1, Timeout: 200 * time.Millisecond},
		{ID: "cov", Check: "echo 'coverage: 83.5% of statements (12 pkgs)'", Weight: 4, Timeout: 5 * time.Second,
			Continuous: &Continuous{Threshold: 80, Direction: "higher", Value: regexp.MustCompile(`coverage: ([0-9.]+)%`)}},
		{ID: "latency", Check: "echo p99 250ms; echo 0.25", Weight: 4, Timeout: 5 * time.Second,
			Continuous: &Continuous{Threshold: 0.2, Direction: "lower"}},
		{ID: "no-number", Check: "echo none", Weight: 1, Timeout: 5 * time.Second, Continuous: &Continuous{Threshold: 1, Direction: "higher"}},
		{ID: "env", Check: `test "$EVOLVE_GOAL_ID" = env`, Weight: 1, Timeout: 5 * time.Second},
		goal("no-tool", "echo checking; no-such-tool-here --strict", 6),
		goal("no-exec", "printf 'echo hi\\n' > notexec.sh; chmod -x notexec.sh; ./notexec.sh", 2),
		goal("no-interp", "printf '#!/no/such/interp\\necho hi\\n' > interp.sh; chmod +x interp.sh; ./interp.sh", 2),
	}}
	start := time.Now()
	s := Measure(context.Background(), f, Options{Dir: dir, Parallel: 4, Now: func() time.Time { return time.Unix(1700000000, 0) }})
	if time.Since(start) > 20*time.Second {
		t.Fatalf("measure took %v: the timed-out check's children kept it waiting", time.Since(start))
	}
	want := map[string]string{"pass": Pass, "fail": Fail, "skip": Skip, "hang": Timeout, "cov": Pass, "latency": Fail, "no-number": Fail, "env": Pass,
		"no-tool": Error, "no-exec": Error, "no-interp": Error}
	for _, r := range s.Goals {
		if r.Result != want[r.GoalID] {
			t.Errorf("%s: %s (%s, exit %d, %q), want %s", r.GoalID, r.Result, r.Reason, r.ExitCode, r.Output, want[r.GoalID])
		}
	}
	byID := map[string]Result{}
	for _, r := range s.Goals {
		byID[r.GoalID] = r
	}
	if r := byID["cov"]; r.Value == nil || *r.Value != 83.5 || r.Threshold == nil || *r.Threshold != 80 {
		t.Errorf("cov value %v threshold %v", r.Value, r.Threshold)
	}
	if r := byID["latency"]; r.Value == nil || *r.Value != 0.25 || !strings.Contains(r.Reason, "wrong side") {
		t.Errorf("latency: %+v", r)
	}
	if r := byID["hang"]; r.Limit != 0.2 || r.Reason != "timed out after 200ms" {
		t.Errorf("hang: %+v", r)
	}
	if r := byID["fail"]; r.ExitCode != 3 || !strings.Contains(r.Output, "broken") || r.Excerpt != "broken" {
		t.Errorf("fail: %+v", r)
	}
	if r := byID["pass"]; r.Excerpt != "" {
		t.Errorf("a pass keeps no excerpt: %+v", r)
	}
	for id, missing := range map[string]string{"no-tool": "no-such-tool-here", "no-exec": "./notexec.sh", "no-interp": "/no/such/interp"} {
		if r := byID[id]; r.Missing != missing || !strings.HasPrefix(r.Reason, "cannot run: "+missing) {
			t.Errorf("%s: missing %q, reason %q; want %q named", id, r.Missing, r.Reason, missing)
		}
	}
	// Weighted score: passing 5+4+1 of counted 5+3+1+4+4+1+1 (the timeout
	// counts against it; skips and checks that cannot run do not count).
	if sum := s.Summary; sum.Total != 11 || sum.Passing != 3 || sum.Failing != 3 || sum.Skipped != 1 || sum.TimedOut != 1 || sum.Errors != 3 || sum.Score != 52.6 {
		t.Errorf("summary %+v", sum)
	}
	var ids []string
	for _, r := range s.FailingByWeight() {
		ids = append(ids, r.GoalID)
	}
	if strings.Join(ids, ",") != "latency,fail,hang,no-number" {
		t.Errorf("FailingByWeight = %v: the goals to work on, failing or timed out, not those that cannot run", ids)
	}
	if n := len(s.CannotRun()); n != 3 {
		t.Errorf("CannotRun has %d goals, want 3", n)
	}
	if s.Timestamp != "2023-11-14T22:13:20Z" || s.Era != "goals-x" {
		t.Errorf("snapshot %s %s", s.Timestamp, s.Era)
	}
	only := Measure(context.Background(), f, Options{Dir: dir, Only: []string{"pass", "skip"}})
	if len(only.Goals) != 2 {
		t.Errorf("Only measured %d goals", len(only.Goals))
	}
}

func TestExtractValueAndShorten(t *testing.T) {
	for _, tt := range []struct {
		out  string
		re   string
		want float64
		ok   bool
	}{
		{"42\n", "", 42, true}, {"took 1.5s, score 0.93", "", 0.93, true}, {"-3e2 units", "", -300, true},
		{"nothing", "", 0, false}, {"p99=210ms p50=20ms", `p99=(\d+)ms`, 210, true}, {"p50=20ms", `p99=(\d+)ms`, 0, false},
	} {
		var re *regexp.Regexp
		if tt.re != "" {
			re = regexp.MustCompile(tt.re)
		}
		v, ok := ExtractValue(tt.out, re)
		if ok != tt.ok || v != tt.want {
			t.Errorf("ExtractValue(%q, %q) = %v, %v; want %v, %v", tt.out, tt.re, v, ok, tt.want, tt.ok)
		}
	}
	long := strings.Repeat("a", 300) + strings.Repeat("z", 300)
	s := shorten(long)
	if !strings.HasPrefix(s, strings.Repeat("a", 250)) || !strings.HasSuffix(s, strings.Repeat("z", 250)) || len(s) > 520 {
		t.Errorf("shorten kept %d bytes", len(s))
	}
}

func TestTrust(t *testing.T) {
	dir := t.TempDir()
	tr := TrustAt(dir)
	d := Digest([]byte(valid))
	if ok, err := tr.Trusted(d); ok || err != nil {
		t.Fatalf("trusted before Add: %v %v", ok, err)
	}
	if err := tr.Add(d, "GOALS.yaml"); err != nil {
		t.Fatal(err)
	}
	if err := tr.Add(d, "GOALS.yaml"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := tr.Trusted(d); !ok {
		t.Error("not trusted after Add")
	}
	if ok, _ := tr.Trusted(Digest([]byte(valid + "x"))); ok {
		t.Error("changed content is trusted")
	}
	data, _ := os.ReadFile(filepath.Join(dir, "trusted-goals"))
	if strings.Count(string(data), d) != 1 {
		t.Errorf("trust file holds the digest %d times", strings.Count(string(data), d))
	}
}

// A check's children do not hold the measure hostage: one left running by a
// passing check does not make it time out, one that escapes the process
// group does not keep measure waiting, and endless output stays bounded.
func TestMeasureChildrenAndOutput(t *testing.T) {
	dir := t.TempDir()
	f := &File{Goals: []Goal{
		{ID: "bg", Check: "sleep 30 & echo ok", Weight: 1, Timeout: 5 * time.Second},
		{ID: "escapes", Check: "setsid sleep 30 & echo done", Weight: 1, Timeout: 5 * time.Second},
		{ID: "noisy", Check: "yes", Weight: 1, Timeout: time.Second},
	}}
	start := time.Now()
	s := Measure(context.Background(), f, Options{Dir: dir, Parallel: 3})
	if d := time.Since(start); d > 15*time.Second {
		t.Fatalf("measure took %v", d)
	}
	byID := map[string]Result{}
	for _, r := range s.Goals {
		byID[r.GoalID] = r
	}
	if r := byID["bg"]; r.Result != Pass {
		t.Errorf("a passing check with a background child: %+v", r)
	}
	if r := byID["escapes"]; r.Result != Pass {
		t.Errorf("a check whose child escaped the group: %+v", r)
	}
	if r := byID["noisy"]; r.Result != Timeout || len(r.Output) > 600*4 || len(r.Excerpt) > ExcerptBytes {
		t.Errorf("noisy: %s, %d bytes of output and %d of excerpt kept", r.Result, len(r.Output), len(r.Excerpt))
	}
	c := &capture{limit: 10}
	for i := 0; i < 1000; i++ {
		c.Write([]byte("0123456789"))
	}
	if got := c.String(); len(got) > 30 || !strings.HasPrefix(got, "0123456789") || !strings.HasSuffix(got, "0123456789") {
		t.Errorf("capture kept %q", got)
	}
}

// An interrupt (a cancelled context) ends running checks at once.
func TestMeasureInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(300 * time.Millisecond); cancel() }()
	start := time.Now()
	s := Measure(ctx, &File{Goals: []Goal{{ID: "long", Check: "sleep 30", Weight: 1, Timeout: time.Minute}}}, Options{Dir: t.TempDir()})
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("an interrupted measure took %v", d)
	}
	if s.Goals[0].Result == Pass {
		t.Errorf("an interrupted check passed: %+v", s.Goals[0])
	}
}

// Keys the schema does not know are warnings: the existing tools read such
// files, so they still load; each warning says where the key is.
func TestParseWarnings(t *testing.T) {
	doc := "version: 3\ngaols: []\ngate: {commands: [x], retries: 2}\ngoals:\n  - id: a\n    description: d\n    check: c\n    weight: 1\n    wieght: 3\n    continuous: {metric: m, threshold: 1, colour: red}\n"
	f, err := Parse("G.yaml", []byte(doc))
	if err != nil {
		t.Fatalf("Parse = %v, want the file with warnings", err)
	}
	want := []string{`G.yaml:2:1: unknown key "gaols"`, `G.yaml:3:23: unknown gate key "retries"`,
		`G.yaml:9:5: unknown goal key "wieght"`, `G.yaml:10:43: unknown continuous key "colour"`}
	if len(f.Warnings) != len(want) {
		t.Fatalf("warnings %v, want %d", f.Warnings, len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(f.Warnings[i].Error(), w) {
			t.Errorf("warning %d = %q, want %q…", i, f.Warnings[i], w)
		}
	}
}

// The gate's forms: commands name it (gate: [] none); a mapping with only a
// timeout leaves the detected gate, with that timeout; no key, the
// detected gate.
func TestParseGateForms(t *testing.T) {
	for _, tt := range []struct {
		gate     string
		set      bool
		commands string
		timeout  time.Duration
	}{
		{"", false, "", DefaultGateTimeout},
		{"gate: []\n", true, "", DefaultGateTimeout},
		{"gate: make check\n", true, "make check", DefaultGateTimeout},
		{"gate: {timeout: 5m}\n", false, "", 5 * time.Minute},
		{"gate: {commands: [a, b], timeout: 1m}\n", true, "a|b", time.Minute},
	} {
		f, err := Parse("G.yaml", []byte("version: 3\n"+tt.gate+"goals:\n  - {id: a, description: d, check: c, weight: 1}\n"))
		if err != nil {
			t.Fatalf("%q: %v", tt.gate, err)
		}
		timeout := f.Gate.Timeout
		if !f.Gate.Set && tt.gate == "" {
			timeout = DefaultGateTimeout // no key: GateAt's default
		}
		if f.Gate.Set != tt.set || strings.Join(f.Gate.Commands, "|") != tt.commands || timeout != tt.timeout {
			t.Errorf("%q: %+v", tt.gate, f.Gate)
		}
	}
}

func TestParseNonSubstantive(t *testing.T) {
	doc := "version: 3\nnon_substantive: [docs/**, \"*.lock\"]\ngoals:\n  - {id: a, description: d, check: c, weight: 1}\n"
	f, err := Parse("G.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(f.NonSubstantive, ",") != "docs/**,*.lock" {
		t.Errorf("non_substantive = %q", f.NonSubstantive)
	}
	_, err = Parse("G.yaml", []byte("version: 3\nnon_substantive: [\"[\"]\ngoals:\n  - {id: a, description: d, check: c, weight: 1}\n"))
	var ps Problems
	if !errors.As(err, &ps) || !strings.Contains(ps[0].Error(), "G.yaml:2:19: non_substantive pattern") {
		t.Errorf("a bad pattern: %v", err)
	}
}

func TestRunGate(t *testing.T) {
	dir := t.TempDir()
	g := Gate{Commands: []string{"echo built > out.txt", "grep -q built out.txt && echo tests ok", "exit 4", "echo never > never.txt"},
		Timeout: 5 * time.Second}
	res := RunGate(context.Background(), g, dir, nil, nil)
	if len(res) != 3 {
		t.Fatalf("RunGate ran %d commands, want 3 (it stops at the first failure): %+v", len(res), res)
	}
	if !res[0].Passed || !res[1].Passed || res[1].Output != "tests ok\n" {
		t.Errorf("the passing commands: %+v", res[:2])
	}
	if r := res[2]; r.Passed || r.Status != Fail || r.ExitCode != 4 || r.Reason != "exit status 4" {
		t.Errorf("the failing command: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(dir, "never.txt")); err == nil {
		t.Error("a command after the failure ran")
	}
	hang := RunGate(context.Background(), Gate{Commands: []string{"sleep 30"}, Timeout: 200 * time.Millisecond}, dir, nil, nil)
	if r := hang[0]; r.Passed || r.Status != Timeout || r.Limit != 0.2 || !strings.Contains(r.Reason, "timed out after 200ms") {
		t.Errorf("a command that hangs: %+v (a timeout does not pass the gate)", r)
	}
	missing := RunGate(context.Background(), Gate{Commands: []string{"echo building; no-such-test-runner ./..."}, Timeout: 5 * time.Second}, dir, nil, nil)
	if r := missing[0]; r.Passed || r.Status != Error || r.Missing != "no-such-test-runner" || !strings.Contains(r.Excerpt, "building") {
		t.Errorf("a command that cannot run: %+v", r)
	}
	if res := RunGate(context.Background(), Gate{Timeout: time.Second}, dir, nil, nil); len(res) != 0 {
		t.Errorf("no commands: %+v", res)
	}
}

// OnCheck is called one at a time, though the checks run at once: callers
// print from it to writers not made for concurrent use. The first call
// stays until a second comes in or 200 ms pass; when calls could overlap,
// one comes in.
func TestMeasureOnCheckOneAtATime(t *testing.T) {
	dir := t.TempDir()
	f := &File{Era: "goals-x", Goals: []Goal{goal("a", "true", 1), goal("b", "true", 1), goal("c", "true", 1), goal("d", "true", 1)}}
	var inside, most atomic.Int32
	var first atomic.Bool
	Measure(context.Background(), f, Options{Dir: dir, Parallel: 4, OnCheck: func(string) {
		n := inside.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		if first.CompareAndSwap(false, true) {
			for deadline := time.Now().Add(200 * time.Millisecond); inside.Load() < 2 && time.Now().Before(deadline); {
				time.Sleep(time.Millisecond)
			}
		}
		inside.Add(-1)
	}})
	if most.Load() != 1 {
		t.Errorf("%d OnCheck calls ran at once", most.Load())
	}
}

func TestParseRuler(t *testing.T) {
	doc := "version: 3\nruler: [scripts/**, \"tools/**/check.sh\", \"*.golden\"]\ngoals:\n  - {id: a, description: d, check: c, weight: 1}\n"
	f, err := Parse("G.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(f.Ruler, ",") != "scripts/**,tools/**/check.sh,*.golden" {
		t.Errorf("ruler = %q", f.Ruler)
	}
	for _, bad := range []string{`"/abs/**"`, `"../up"`, `"["`, `""`} {
		_, err = Parse("G.yaml", []byte("version: 3\nruler: ["+bad+"]\ngoals:\n  - {id: a, description: d, check: c, weight: 1}\n"))
		var ps Problems
		if !errors.As(err, &ps) || !strings.Contains(ps[0].Error(), "G.yaml:2:") || !strings.Contains(ps[0].Error(), "ruler pattern") {
			t.Errorf("ruler: [%s]: %v", bad, err)
		}
	}
}
