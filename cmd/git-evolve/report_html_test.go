package main

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestReportHTMLInChromium writes the HTML report of a branch with an
// improved, a regressed and an aborted cycle, renders it in headless
// Chromium, and checks that the chart and the heatmap are drawn (pixels
// that are not the page's background in their boxes) and that the DOM holds
// every cycle. .ci/run installs Chromium where it is missing; elsewhere,
// without it, the test is skipped.
func TestReportHTMLInChromium(t *testing.T) {
	browser := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			browser = p
			break
		}
	}
	if browser == "" {
		t.Skip("no Chromium here (.ci/run installs it)")
	}
	dir := t.TempDir()
	home := t.TempDir()
	env := map[string]string{"HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, ".config"), "GIT_CONFIG_NOSYSTEM": "1",
		"GIT_AUTHOR_NAME": "A", "GIT_AUTHOR_EMAIL": "a@example.com", "GIT_COMMITTER_NAME": "C", "GIT_COMMITTER_EMAIL": "c@example.com",
		"PATH": os.Getenv("PATH"), "LANG": "C"}
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		for k, v := range env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q", "-b", "main")
	goalsYAML := `version: 3
goals:
  - id: not-broken
    description: nothing is broken
    check: test ! -e broken
    weight: 5
  - id: feature
    description: the feature exists
    check: test -e feature.txt
    weight: 3
  - id: docs
    description: the docs exist
    check: test -e docs.txt
    weight: 1
`
	agent := "case \"$EVOLVE_CYCLE\" in 1) echo f > feature.txt ;; 2) touch broken; echo d > docs.txt ;; 3) exit 3 ;; esac\n"
	for name, text := range map[string]string{"GOALS.yaml": goalsYAML, "agent.sh": agent} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git("add", "GOALS.yaml", "agent.sh")
	git("commit", "-q", "-m", "add goals")
	root := git("rev-parse", "HEAD")
	runner := inProcess(dir, func(k string) string { return env[k] })
	for _, args := range [][]string{{"init", "-q"}, {"run", "--agent", "sh agent.sh", "--max-cycles", "3"}} {
		if _, stderr, code := runner(context.Background(), args); code != 0 && args[0] == "init" {
			t.Fatalf("%v: %s", args, stderr)
		}
	}
	page := filepath.Join(dir, "report.html")
	if _, stderr, code := runner(context.Background(), []string{"report", "--html", page, root + "..HEAD"}); code != 0 {
		t.Fatalf("report --html: %s", stderr)
	}
	data, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte("<script")) || bytes.Contains(data, []byte("http://")) && !bytes.Contains(data, []byte(`xmlns="http://www.w3.org/2000/svg"`)) {
		t.Error("the page is not self-contained")
	}
	// The line starts where the range started (the score before cycle 1),
	// then a point a cycle; each cycle's marker sits on it.
	if m := regexp.MustCompile(`<polyline points="([^"]*)"`).FindSubmatch(data); m == nil || len(strings.Fields(string(m[1]))) != 4 {
		t.Errorf("the score line is %q, want 4 points (the start and 3 cycles)", m)
	} else {
		for _, pt := range strings.Fields(string(m[1]))[1:] {
			x, y, _ := strings.Cut(pt, ",")
			if !bytes.Contains(data, []byte(`<circle cx="`+x+`" cy="`+y+`"`)) {
				t.Errorf("no cycle's marker at the line's point %s", pt)
			}
		}
	}

	flags := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--user-data-dir=" + t.TempDir(), "--force-device-scale-factor=1", "--hide-scrollbars"}
	shot := filepath.Join(os.TempDir(), "git-evolve-report-test.png")
	os.Remove(shot)
	// A browser killed by a signal (it crashes on a machine short of
	// memory) is started again, twice at most; one that exits with an
	// error fails the test at once.
	for attempt := 1; ; attempt++ {
		cmd := exec.Command(browser, append(flags, "--window-size=1000,1200", "--screenshot="+shot, "file://"+page)...)
		out, err := cmd.CombinedOutput()
		if err == nil {
			break
		}
		var ee *exec.ExitError
		if attempt == 3 || !errors.As(err, &ee) || ee.ExitCode() != -1 {
			t.Fatalf("chromium --screenshot: %v\n%s", err, out)
		}
		t.Logf("chromium --screenshot: %v; started again", err)
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", shot)
	// The chart's box (#chart: 20,60 760×260) and the heatmap's (#heatmap:
	// 20,340, a 180-pixel label column then the cells): drawn when many of
	// their pixels are neither white nor the chart's background.
	drawn := func(r image.Rectangle) int {
		n := 0
		for y := r.Min.Y; y < r.Max.Y; y++ {
			for x := r.Min.X; x < r.Max.X; x++ {
				cr, cg, cb, _ := img.At(x, y).RGBA()
				if !(cr>>8 > 235 && cg>>8 > 235 && cb>>8 > 235) {
					n++
				}
			}
		}
		return n
	}
	if n := drawn(image.Rect(60, 80, 770, 300)); n < 500 {
		t.Errorf("the chart's box has %d drawn pixels", n)
	}
	if n := drawn(image.Rect(200, 362, 284, 428)); n < 2000 {
		t.Errorf("the heatmap's cells have %d drawn pixels", n)
	}
	dom, err := exec.Command(browser, append(flags, "--dump-dom", "file://"+page)...).Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"1", "2", "3"} {
		if !bytes.Contains(dom, []byte(`<tr data-cycle="`+c+`">`)) {
			t.Errorf("the DOM has no row of cycle %s", c)
		}
	}
	if !bytes.Contains(dom, []byte("aborted")) || !bytes.Contains(dom, []byte("regressed")) {
		t.Error("the DOM does not say which cycles regressed and aborted")
	}
}
