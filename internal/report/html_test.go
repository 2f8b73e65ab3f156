package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/git-evolve/git-evolve/internal/testenv"
	"github.com/git-evolve/git-evolve/ledger"
)

// runRows are the rows of the report of a branch with an improved, a
// regressed and an aborted cycle: the records in testdata/run.jsonl are
// what git evolve run wrote for them (git evolve log --all --json), with
// this goals file and an agent that adds feature.txt in cycle 1, breaks
// not-broken (and adds docs.txt) in cycle 2 and exits 3 in cycle 3.
func runRows(t *testing.T) (rows []Row, goalIDs []string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "run.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		rec, err := ledger.Parse(line)
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, Row{Record: rec, Commit: rec.CanonicalSHA})
	}
	return rows, []string{"not-broken", "feature", "docs"}
}

// TestHTMLOfARun writes the HTML report of a run's improved, regressed and
// aborted cycles: a page with no script and no address, whose score line
// starts where the range started with a marker on it for each cycle, and
// whose heatmap shows the regressed cycle's goals after its revert.
func TestHTMLOfARun(t *testing.T) {
	rows, goalIDs := runRows(t)
	var out bytes.Buffer
	if err := writeHTML(&out, "a1e35f2..HEAD", rows, goalIDs, nil); err != nil {
		t.Fatal(err)
	}
	data := out.Bytes()
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
	// The regressed cycle's column shows the goals as the branch has them
	// after its revert, as the line does: not-broken passes there.
	if !bytes.Contains(data, []byte("<title>cycle 2, not-broken: pass</title>")) {
		t.Error("the regressed cycle's heatmap column does not show the goals after its revert")
	}
	if !bytes.Contains(data, []byte(`id="summary"`)) || !regexp.MustCompile(`<strong>[0-9.]+ → [0-9.]+</strong>`).Match(data) {
		t.Error("the page does not give the branch's score before → after")
	}
}

// TestHTMLInChromium renders the HTML report of a run's improved,
// regressed and aborted cycles in headless Chromium, and checks that the
// chart and the heatmap are drawn (pixels that are not the page's
// background in their boxes) and that the DOM holds every cycle. .ci/run
// installs Chromium where it is missing; elsewhere, without it, the test is
// skipped.
func TestHTMLInChromium(t *testing.T) {
	testenv.Slow(t)
	browser := findBrowser(t)
	rows, goalIDs := runRows(t)
	var out bytes.Buffer
	if err := writeHTML(&out, "a1e35f2..HEAD", rows, goalIDs, nil); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(page, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t, browser)
	pr := b.probe(page)
	if pr.Points != 3 || pr.Rows != 3 {
		t.Errorf("%d points and %d rows, want 3 of each", pr.Points, pr.Rows)
	}
	img := b.screenshot(page)
	// The chart and the heatmap are drawn: many of their pixels are neither
	// white nor the chart's background.
	if n := drawn(img, pr.Chart); n < 500 {
		t.Errorf("the chart's box %v has %d drawn pixels", pr.Chart, n)
	}
	if n := drawn(img, pr.Heatmap); n < 2000 {
		t.Errorf("the heatmap's box %v has %d drawn pixels", pr.Heatmap, n)
	}
	dom := b.dom(page)
	for _, c := range []string{"1", "2", "3"} {
		if !bytes.Contains(dom, []byte(`<tr data-cycle="`+c+`">`)) {
			t.Errorf("the DOM has no row of cycle %s", c)
		}
	}
	if !bytes.Contains(dom, []byte("aborted")) || !bytes.Contains(dom, []byte("regressed")) {
		t.Error("the DOM does not say which cycles regressed and aborted")
	}
}

// TestHTMLAt300Cycles renders the report of 300 cycles: the page
// stays within a 1000-pixel window, the chart draws a point a run of
// cycles, every axis label and goal label is drawn inside the window, the
// heatmap and the table show the most recent cycles and fold the rest.
func TestHTMLAt300Cycles(t *testing.T) {
	testenv.Slow(t)
	browser := findBrowser(t)
	goalIDs := []string{"tests-pass", "lint-clean", "coverage-above-80-percent-of-the-lines-measured", "docs-build", "bench-under-budget"}
	var rows []Row
	score := 40.0
	for c := 1; c <= 300; c++ {
		rec := ledger.Record{Cycle: c, Target: goalIDs[c%len(goalIDs)], Extra: map[string]json.RawMessage{}}
		total, passing := 5, 3
		rec.GoalsTotal, rec.GoalsPassing = &total, &passing
		before := fmt.Sprintf(`{"failing":["lint-clean","docs-build"],"goals_passing":3,"goals_total":5,"score":%g}`, score)
		rec.Extra["before"] = json.RawMessage(before)
		switch {
		case c%17 == 0:
			rec.Result = ledger.Regressed
			rec.Extra["failing"] = json.RawMessage(`["tests-pass","lint-clean","docs-build"]`)
			rec.Extra["score"] = json.RawMessage(`10`)
		case c%23 == 0:
			rec.Result = ledger.Unchanged
			rec.Extra["aborted"] = json.RawMessage(`true`)
		case c%3 == 0:
			rec.Result = ledger.Improved
			score = min(100, score+0.5)
			rec.Extra["failing"] = json.RawMessage(`["docs-build"]`)
			rec.Extra["score"] = json.RawMessage(fmt.Sprint(score))
		default:
			rec.Result = ledger.Unchanged
		}
		rows = append(rows, Row{Record: rec, Commit: fmt.Sprintf("%040x", c)})
	}
	page := filepath.Join(t.TempDir(), "report.html")
	var out bytes.Buffer
	if err := writeHTML(&out, "main~300..main", rows, goalIDs, nil); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t, browser)
	pr := b.probe(page)
	if pr.ScrollWidth > pr.InnerWidth {
		t.Errorf("the page is %d pixels wide in a window of %d", pr.ScrollWidth, pr.InnerWidth)
	}
	if pr.Labels < 15 || pr.LabelsDrawn != pr.Labels {
		t.Errorf("%d of %d labels drawn inside the window", pr.LabelsDrawn, pr.Labels)
	}
	if pr.Points < 50 || pr.Points > 60 {
		t.Errorf("the chart draws %d points for 300 cycles, want a point a run of cycles, at most 60", pr.Points)
	}
	if pr.Rows != 60 || pr.Columns != 60 {
		t.Errorf("the table shows %d cycles and the heatmap %d, want the 60 most recent", pr.Rows, pr.Columns)
	}
	if pr.Folded != 2 {
		t.Errorf("%d folded sections, want the heatmap's and the table's", pr.Folded)
	}
	if pr.FirstRow != "300" {
		t.Errorf("the table starts at cycle %s, want the most recent (300)", pr.FirstRow)
	}
	if pr.Legend[2] < 100 || pr.AxisTitles != 2 {
		t.Errorf("legend %v, %d axis titles", pr.Legend, pr.AxisTitles)
	}
	if !strings.Contains(out.String(), "<strong>40 → ") {
		t.Error("no before → after")
	}
	img := b.screenshot(page)
	if n := drawn(img, pr.Chart); n < 2000 {
		t.Errorf("the chart's box %v has %d drawn pixels", pr.Chart, n)
	}
}

func findBrowser(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no Chromium here (.ci/run installs it)")
	return ""
}

// browser is headless Chromium with a window of 1000 pixels.
type browser struct {
	t     *testing.T
	path  string
	flags []string
}

func newBrowser(t *testing.T, path string) *browser {
	return &browser{t: t, path: path, flags: []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--user-data-dir=" + t.TempDir(),
		"--force-device-scale-factor=1", "--hide-scrollbars", "--window-size=1000,1200"}}
}

// run runs the browser; one killed by a signal (it crashes on a machine
// short of memory) is started again, twice at most; one that exits with an
// error fails the test at once.
func (b *browser) run(args ...string) []byte {
	b.t.Helper()
	for attempt := 1; ; attempt++ {
		out, err := exec.Command(b.path, append(append([]string{}, b.flags...), args...)...).Output()
		if err == nil {
			return out
		}
		var ee *exec.ExitError
		if attempt == 3 || !errors.As(err, &ee) || ee.ExitCode() != -1 {
			b.t.Fatalf("chromium %v: %v", args, err)
		}
		b.t.Logf("chromium %v: %v; started again", args, err)
	}
}

func (b *browser) dom(page string) []byte { return b.run("--dump-dom", "file://"+page) }

func (b *browser) screenshot(page string) image.Image {
	shot := filepath.Join(b.t.TempDir(), "shot.png")
	b.run("--screenshot="+shot, "file://"+page)
	f, err := os.Open(shot)
	if err != nil {
		b.t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		b.t.Fatal(err)
	}
	return img
}

// probeResult is what the probe script measured of a page as the browser
// laid it out.
type probeResult struct {
	ScrollWidth, InnerWidth int
	Labels, LabelsDrawn     int
	AxisTitles              int
	Points, Rows, Columns   int
	Folded                  int
	FirstRow                string
	Chart, Heatmap, Legend  [4]float64 // left, top, width, height
}

// probe lays out a copy of the page with a script that measures it (the
// page itself has none) and reads the measures back from the DOM.
func (b *browser) probe(page string) probeResult {
	b.t.Helper()
	data, err := os.ReadFile(page)
	if err != nil {
		b.t.Fatal(err)
	}
	script := `<script>
const o = {}, box = id => { const r = document.getElementById(id).getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; };
o.ScrollWidth = document.documentElement.scrollWidth; o.InnerWidth = window.innerWidth;
const labels = [...document.querySelectorAll('#chart text.tick, #chart text.axis-title, #heatmap text.tick, #heatmap text.goal')];
o.Labels = labels.length;
o.LabelsDrawn = labels.filter(t => { const r = t.getBoundingClientRect(); return r.width > 0 && r.height > 0 && r.left >= 0 && r.right <= window.innerWidth; }).length;
o.AxisTitles = document.querySelectorAll('#chart text.axis-title').length;
o.Points = document.querySelectorAll('#chart circle').length;
o.Rows = document.querySelectorAll('#cycles tr[data-cycle]').length;
o.Columns = new Set([...document.querySelectorAll('#heatmap rect[width]')].filter(r => r.getAttribute('height') != '4').map(r => r.getAttribute('x'))).size;
o.Folded = document.querySelectorAll('details').length;
const first = document.querySelector('#cycles tr[data-cycle]'); o.FirstRow = first ? first.dataset.cycle : '';
o.Chart = box('chart'); o.Heatmap = box('heatmap'); o.Legend = box('legend');
const pre = document.createElement('pre'); pre.id = 'probe'; pre.textContent = JSON.stringify(o); document.body.appendChild(pre);
</script>`
	probe := filepath.Join(b.t.TempDir(), "probe.html")
	if err := os.WriteFile(probe, bytes.Replace(data, []byte("</body>"), []byte(script+"</body>"), 1), 0o644); err != nil {
		b.t.Fatal(err)
	}
	dom := b.dom(probe)
	m := regexp.MustCompile(`<pre id="probe">([^<]*)</pre>`).FindSubmatch(dom)
	if m == nil {
		b.t.Fatalf("the probe wrote nothing:\n%s", dom)
	}
	var pr probeResult
	if err := json.Unmarshal([]byte(html.UnescapeString(string(m[1]))), &pr); err != nil {
		b.t.Fatalf("the probe's %s: %v", m[1], err)
	}
	b.t.Logf("probe: %+v", pr)
	return pr
}

// drawn counts the pixels of box (left, top, width, height) that are
// neither white nor the chart's background.
func drawn(img image.Image, box [4]float64) int {
	r := image.Rect(int(box[0]), int(box[1]), int(box[0]+box[2]), int(box[1]+box[3])).Intersect(img.Bounds())
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
