package report

import (
	"encoding/json"
	"fmt"
	"html"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/git-evolve/git-evolve/escape"
	"github.com/git-evolve/git-evolve/internal/cycletext"
	"github.com/git-evolve/git-evolve/ledger"
)

// The HTML report: one self-contained page (no script, no network) that
// reads at any number of cycles and fits a 1000-pixel window: the branch's
// score before → after; the score over the cycles as an SVG line chart with
// axes, their titles and a legend, the regressed and aborted cycles marked
// on the line (above maxPoints cycles, a point stands for a run of them);
// a goal × cycle heatmap whose columns show the goals as the branch had them
// after each cycle (a regressed cycle's as it found them, its work reverted,
// as the line does), most recent first; each continuous goal's values
// against its threshold; and the cycle table, most recent first. Past
// maxWindow cycles the heatmap's and the table's older cycles are folded
// (<details>). The browser test looks into #chart, #heatmap and #cycles.

const (
	pageW          = 960 // the content's width: a 1000-pixel window, with its margins
	chartW, chartH = pageW, 300
	plotL, plotR   = 64, 16 // the plot area inside the chart: room for the y axis's labels and title
	plotT, plotB   = 16, 52 // and for the x axis's
	labelW         = 180
	maxPoints      = 60 // the most points the chart draws; beyond, a point a run of cycles
	maxWindow      = 60 // the most cycles the heatmap and table show before folding the rest
	heatMaxCellW   = 28
	cellH          = 22
)

// cellColor is the heatmap's colour of a goal's result.
var cellColor = map[string]string{"pass": "#2e7d32", "fail": "#c62828", "timeout": "#ef6c00", "skip": "#9e9e9e", "error": "#6a1b9a", "": "#eeeeee"}

// goalResults are a record's goals' results after the cycle, as far as
// the record says: failing, timed out, cannot run; the others of ids
// passed (a record with no goal counts says nothing).
func goalResults(r *ledger.Record, ids []string) map[string]string {
	out := map[string]string{}
	if r.GoalsTotal == nil {
		return out
	}
	lists := map[string]string{"failing": "fail", "timed_out": "timeout", "cannot_run": "error"}
	for key, result := range lists {
		var names []string
		_ = json.Unmarshal(r.Extra[key], &names)
		for _, n := range names {
			out[n] = result
		}
	}
	for _, id := range ids {
		if _, ok := out[id]; !ok {
			out[id] = "pass"
		}
	}
	return out
}

// branchGoals are the goals' results as the branch had them after the
// cycle: a regressed cycle's work was reverted, so they are those it found
// (its record's before); an aborted cycle's record says nothing of them.
func branchGoals(r *ledger.Record, ids []string) map[string]string {
	switch {
	case r.Aborted():
		return map[string]string{}
	case r.Result == ledger.Regressed:
		var before struct {
			Failing    []string `json:"failing"`
			TimedOut   []string `json:"timed_out"`
			CannotRun  []string `json:"cannot_run"`
			GoalsTotal *int     `json:"goals_total"`
		}
		out := map[string]string{}
		if json.Unmarshal(r.Extra["before"], &before) != nil || before.GoalsTotal == nil {
			return out
		}
		for _, id := range ids {
			out[id] = "pass"
		}
		for result, names := range map[string][]string{"fail": before.Failing, "timeout": before.TimedOut, "error": before.CannotRun} {
			for _, n := range names {
				out[n] = result
			}
		}
		return out
	}
	return goalResults(r, ids)
}

// beforeScore is the score a record says the branch had when its cycle
// started.
func beforeScore(r *ledger.Record) (float64, bool) {
	var before struct {
		Score *float64 `json:"score"`
	}
	if json.Unmarshal(r.Extra["before"], &before) != nil || before.Score == nil {
		return 0, false
	}
	return *before.Score, true
}

// branchScores are the branch's score after each cycle (NaN while no
// record has said one): an improved cycle's own, a regressed one's as it
// found it (its work was reverted), the one before after a cycle that
// changed nothing; and the score where the range started.
func branchScores(rows []Row) (start float64, after []float64) {
	start = math.NaN()
	for _, row := range rows {
		if s, ok := beforeScore(&row.Record); ok {
			start = s
			break
		}
	}
	last := start
	after = make([]float64, len(rows))
	for i, row := range rows {
		score := last
		var own float64
		switch {
		case row.Record.Aborted() || row.Record.Result == ledger.Unchanged:
		case row.Record.Result == ledger.Regressed:
			if s, ok := beforeScore(&row.Record); ok {
				score = s
			}
		case row.Record.Extra["score"] != nil && json.Unmarshal(row.Record.Extra["score"], &own) == nil:
			score = own
		}
		if math.IsNaN(score) {
			if s, ok := beforeScore(&row.Record); ok {
				score = s
			}
		}
		last = score
		after[i] = score
	}
	return start, after
}

// point is a point of the chart: a cycle, or above maxPoints a run of
// cycles (first..last of rows), with what happened in it.
type point struct {
	first, last                  int // indexes into rows
	score                        float64
	regressed, aborted, improved int
}

func chartPoints(rows []Row, after []float64) []point {
	per := max(1, (len(rows)+maxPoints-1)/maxPoints)
	var pts []point
	for i := 0; i < len(rows); i += per {
		p := point{first: i, last: min(i+per, len(rows)) - 1}
		p.score = after[p.last]
		for _, row := range rows[p.first : p.last+1] {
			switch {
			case row.Record.Aborted():
				p.aborted++
			case row.Record.Result == ledger.Regressed:
				p.regressed++
			case row.Record.Result == ledger.Improved:
				p.improved++
			}
		}
		pts = append(pts, p)
	}
	return pts
}

func scoreText(s float64) string {
	if math.IsNaN(s) {
		return "?"
	}
	return strconv.FormatFloat(math.Round(s*10)/10, 'f', -1, 64)
}

func writeHTML(w io.Writer, rng string, rows []Row, goalIDs []string, link func(string) string) error {
	esc := html.EscapeString
	var b strings.Builder
	b.WriteString(`<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>Evolve cycles</title><style>
body{font:14px/1.4 system-ui,sans-serif;margin:0;background:#fff;color:#222}
main{max-width:` + strconv.Itoa(pageW) + `px;margin:0 auto;padding:8px 16px}
h1{font-size:20px;margin:8px 0}h2{font-size:16px;margin:20px 0 6px}
svg{display:block;max-width:100%;height:auto}
#legend{display:flex;flex-wrap:wrap;gap:4px 18px;margin:4px 0 0 ` + strconv.Itoa(plotL) + `px;font-size:12px}
#legend span{display:inline-flex;align-items:center;gap:5px}
table{border-collapse:collapse;width:100%;table-layout:fixed}td,th{border:1px solid #ccc;padding:2px 6px;text-align:left;overflow-wrap:anywhere;vertical-align:top}
details{margin:6px 0}summary{cursor:pointer}
</style></head><body><main>`)
	fmt.Fprintf(&b, "<h1>Evolve cycles in <code>%s</code></h1>\n", esc(rng))
	n := len(rows)
	start, after := branchScores(rows)
	var improved, regressed, aborted int
	for _, row := range rows {
		switch {
		case row.Record.Aborted():
			aborted++
		case row.Record.Result == ledger.Regressed:
			regressed++
		case row.Record.Result == ledger.Improved:
			improved++
		}
	}
	end := start
	if n > 0 {
		end = after[n-1]
	}
	fmt.Fprintf(&b, `<p id="summary">The branch's score: <strong>%s → %s</strong> over %d cycle(s): %d improved, %d regressed (each reverted), %d aborted, %d that changed nothing.</p>`+"\n",
		scoreText(start), scoreText(end), n, improved, regressed, aborted, n-improved-regressed-aborted)

	// The chart: the branch's score after each cycle, or each run of cycles.
	pts := chartPoints(rows, after)
	plotW, plotH := float64(chartW-plotL-plotR), float64(chartH-plotT-plotB)
	// Slot 0 is where the range started, then a slot a point.
	x := func(i int) float64 { return plotL + 8 + (plotW-16)*float64(i+1)/float64(max(1, len(pts))) }
	y := func(score float64) float64 { return plotT + plotH*(1-math.Max(0, math.Min(100, score))/100) }
	fmt.Fprintf(&b, `<svg id="chart" width="%d" height="%d" viewBox="0 0 %d %d" xmlns="http://www.w3.org/2000/svg" role="img" aria-label="the branch's score after each cycle">`, chartW, chartH, chartW, chartH)
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%.0f" height="%.0f" fill="#fafafa" stroke="#bbb"/>`, plotL, plotT, plotW, plotH)
	for _, v := range []float64{0, 25, 50, 75, 100} {
		py := y(v)
		fmt.Fprintf(&b, `<line x1="%d" x2="%.0f" y1="%.1f" y2="%.1f" stroke="#ddd"/><text class="tick" x="%d" y="%.1f" font-size="11" text-anchor="end">%.0f</text>`,
			plotL, plotL+plotW, py, py, plotL-6, py+4, v)
	}
	fmt.Fprintf(&b, `<text class="axis-title" x="14" y="%.0f" font-size="12" text-anchor="middle" transform="rotate(-90 14 %.0f)">score (%% of goal weight passing)</text>`, plotT+plotH/2, plotT+plotH/2)
	cycleOf := func(p point) string {
		if p.first == p.last {
			return strconv.Itoa(rows[p.first].Record.Cycle)
		}
		return fmt.Sprintf("%d–%d", rows[p.first].Record.Cycle, rows[p.last].Record.Cycle)
	}
	// x ticks: at most 10 points labelled, evenly.
	step := max(1, (len(pts)+9)/10)
	for i := 0; i < len(pts); i += step {
		fmt.Fprintf(&b, `<text class="tick" x="%.1f" y="%.0f" font-size="11" text-anchor="middle">%d</text>`, x(i), plotT+plotH+16, rows[pts[i].last].Record.Cycle)
	}
	xTitle := "cycle"
	if n > len(pts) {
		xTitle = fmt.Sprintf("cycle (a point: %d cycles, the score after the last)", (n+maxPoints-1)/maxPoints)
	}
	fmt.Fprintf(&b, `<text class="axis-title" x="%.0f" y="%d" font-size="12" text-anchor="middle">%s</text>`, plotL+plotW/2, chartH-10, esc(xTitle))
	var line []string
	if !math.IsNaN(start) {
		line = append(line, fmt.Sprintf("%.1f,%.1f", x(-1), y(start)))
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="11" fill="#555">start</text>`, x(-1)-4, y(start)+18)
	}
	ys := make([]float64, len(pts)) // each point's marker: on the line, or on the axis before it starts
	for i, p := range pts {
		ys[i] = plotT + plotH - 4
		if !math.IsNaN(p.score) {
			ys[i] = y(p.score)
			line = append(line, fmt.Sprintf("%.1f,%.1f", x(i), ys[i]))
		}
	}
	if len(line) > 0 {
		fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="#1565c0" stroke-width="2.5"/>`, strings.Join(line, " "))
	}
	r := 5.0
	if len(pts) > 30 {
		r = 3.5
	}
	for i, p := range pts {
		color, radius, what := "#1565c0", r, ""
		switch {
		case p.regressed > 0:
			color, radius = "#c62828", r+2
		case p.aborted == p.last-p.first+1:
			color, radius = "#757575", r+1
		}
		if p.first == p.last {
			what = escape.TerminalLine(cycletext.Listed(&rows[p.first].Record))
		} else {
			what = fmt.Sprintf("%d improved, %d regressed, %d aborted", p.improved, p.regressed, p.aborted)
		}
		fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="%.1f" fill="%s" stroke="#fff" data-cycle="%s"><title>cycle %s: %s; score %s</title></circle>`,
			x(i), ys[i], radius, color, cycleOf(p), cycleOf(p), esc(what), scoreText(p.score))
	}
	b.WriteString("</svg>\n")
	legend := func(swatch, text string) {
		fmt.Fprintf(&b, `<span><svg width="22" height="12" viewBox="0 0 22 12">%s</svg>%s</span>`, swatch, esc(text))
	}
	b.WriteString(`<div id="legend">`)
	legend(`<line x1="0" x2="22" y1="6" y2="6" stroke="#1565c0" stroke-width="2.5"/>`, "the branch's score after the cycle")
	legend(`<circle cx="11" cy="6" r="4" fill="#1565c0"/>`, "improved or unchanged")
	legend(`<circle cx="11" cy="6" r="5" fill="#c62828"/>`, "regressed: its work reverted, the score as it found it")
	legend(`<circle cx="11" cy="6" r="4.5" fill="#757575"/>`, "aborted")
	b.WriteString("</div>\n")

	// The heatmap: a row a goal, a column a cycle, most recent first.
	recent := make([]int, 0, n) // indexes into rows, newest first
	for i := n - 1; i >= 0; i-- {
		recent = append(recent, i)
	}
	shown, folded := recent, []int(nil)
	if len(recent) > maxWindow {
		shown, folded = recent[:maxWindow], recent[maxWindow:]
	}
	b.WriteString("<h2>Goals after each cycle, most recent first</h2>\n")
	heatmap(&b, "heatmap", rows, shown, goalIDs)
	b.WriteString(`<div id="heat-legend" style="font-size:12px;margin:4px 0">`)
	for _, k := range []string{"pass", "fail", "timeout", "error", ""} {
		fmt.Fprintf(&b, `<span style="display:inline-block;width:12px;height:12px;background:%s;margin:0 4px 0 12px;vertical-align:middle"></span>%s`, cellColor[k], map[string]string{"pass": "passes", "fail": "fails", "timeout": "timed out", "error": "cannot run", "": "not known"}[k])
	}
	b.WriteString(`<span style="display:inline-block;width:12px;height:4px;background:#c62828;margin:0 4px 0 12px;vertical-align:middle"></span>regressed (the goals as it found them)</div>` + "\n")
	if len(folded) > 0 {
		fmt.Fprintf(&b, "<details id=\"heatmap-older\"><summary>%d earlier cycle(s)</summary>\n", len(folded))
		for i := 0; i < len(folded); i += maxWindow {
			heatmap(&b, "", rows, folded[i:min(i+maxWindow, len(folded))], goalIDs)
		}
		b.WriteString("</details>\n")
	}

	// The continuous goals: the last values of each.
	type val struct {
		cycle            int
		after, threshold *float64
		direction        string
	}
	vals := map[string][]val{}
	var vorder []string
	for _, row := range rows {
		var vs []goalValue
		if json.Unmarshal(row.Record.Extra["values"], &vs) != nil {
			continue
		}
		for _, v := range vs {
			if _, ok := vals[v.GoalID]; !ok {
				vorder = append(vorder, v.GoalID)
			}
			vals[v.GoalID] = append(vals[v.GoalID], val{row.Record.Cycle, v.After, v.Threshold, v.Direction})
		}
	}
	if len(vorder) > 0 {
		b.WriteString("<h2>Continuous goals</h2><table><tr><th style=\"width:22%\">goal</th><th style=\"width:18%\">threshold</th><th>values (cycle: value), the last 20</th></tr>\n")
		for _, id := range vorder {
			var cells []string
			thr := "-"
			vs := vals[id]
			for _, v := range vs {
				if v.threshold != nil {
					thr = cycletext.Number(v.threshold) + " (" + esc(v.direction) + ")"
				}
			}
			if len(vs) > 20 {
				cells = append(cells, fmt.Sprintf("(%d earlier)", len(vs)-20))
				vs = vs[len(vs)-20:]
			}
			for _, v := range vs {
				cells = append(cells, fmt.Sprintf("%d: %s", v.cycle, cycletext.Number(v.after)))
			}
			fmt.Fprintf(&b, "<tr><td>%s</td><td>%s</td><td>%s</td></tr>\n", esc(id), thr, esc(strings.Join(cells, ", ")))
		}
		b.WriteString("</table>\n")
	}

	// The cycles, most recent first.
	b.WriteString("<h2>Cycles, most recent first</h2>\n")
	var notes []string
	table := func(id string, idx []int) {
		if id != "" {
			id = ` id="` + id + `"`
		}
		fmt.Fprintf(&b, `<table%s><colgroup><col style="width:7%%"><col style="width:14%%"><col style="width:14%%"><col style="width:8%%"><col style="width:11%%"><col><col style="width:14%%"></colgroup>`, id)
		b.WriteString("<tr><th>cycle</th><th>result</th><th>target</th><th>goals</th><th>commit</th><th>reason</th><th>ruler</th></tr>\n")
		for _, i := range idx {
			row := rows[i]
			r := &row.Record
			result, reason, goals := cycletext.Listed(r), cycletext.FailureReason(r), cycletext.Goals(r)
			commit := "-"
			if row.Commit != "" {
				commit = "<code>" + row.Commit[:min(7, len(row.Commit))] + "</code>"
				if link != nil {
					commit = `<a href="` + esc(link(row.Commit)) + `">` + commit + "</a>"
				}
				if row.Record.Aborted() {
					commit += " (start)"
				}
			}
			fmt.Fprintf(&b, "<tr data-cycle=\"%d\"><td>%d</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n",
				r.Cycle, r.Cycle, esc(escape.TerminalLine(result)), esc(escape.TerminalLine(cycletext.Dash(r.Target))), goals, commit, esc(escape.TerminalLine(cycletext.Dash(reason))), esc(escape.TerminalLine(cycletext.Dash(rulerCell(r)))))
		}
		b.WriteString("</table>\n")
	}
	for _, i := range recent {
		for _, note := range cycleNotes(&rows[i].Record) {
			notes = append(notes, fmt.Sprintf("<li>cycle %d: %s</li>", rows[i].Record.Cycle, esc(escape.TerminalLine(note))))
		}
	}
	table("cycles", shown)
	if len(folded) > 0 {
		fmt.Fprintf(&b, "<details id=\"cycles-older\"><summary>%d earlier cycle(s)</summary>\n", len(folded))
		table("", folded)
		b.WriteString("</details>\n")
	}
	if len(notes) > 0 {
		b.WriteString("<ul id=\"notes\">\n" + strings.Join(notes, "\n") + "\n</ul>\n")
	}
	b.WriteString("</main></body></html>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// heatmap writes one heatmap of the cycles idx (indexes into rows, in the
// order shown), id its element id when not empty; its width never passes
// the page's.
func heatmap(b *strings.Builder, id string, rows []Row, idx []int, goalIDs []string) {
	esc := html.EscapeString
	cols := max(1, len(idx))
	cellW := min(heatMaxCellW, (pageW-labelW)/cols)
	labelEvery := 1
	if cellW < 24 {
		labelEvery = (24 + cellW - 1) / cellW
	}
	top := 24 // the cycle numbers, and a regressed cycle's mark
	hw, hh := labelW+cellW*cols, top+cellH*len(goalIDs)+2
	if id != "" {
		id = ` id="` + id + `"`
	}
	fmt.Fprintf(b, `<svg%s width="%d" height="%d" viewBox="0 0 %d %d" xmlns="http://www.w3.org/2000/svg" role="img" aria-label="goals by cycle">`, id, hw, hh, hw, hh)
	for c, i := range idx {
		rec := &rows[i].Record
		if c%labelEvery == 0 {
			fmt.Fprintf(b, `<text class="tick" x="%d" y="13" font-size="11">%d</text>`, labelW+cellW*c+1, rec.Cycle)
		}
		if rec.Result == ledger.Regressed && !rec.Aborted() {
			fmt.Fprintf(b, `<rect x="%d" y="%d" width="%d" height="4" fill="#c62828"><title>cycle %d regressed: its work was reverted; the goals as it found them</title></rect>`,
				labelW+cellW*c, top-6, cellW, rec.Cycle)
		}
	}
	results := make([]map[string]string, len(idx))
	for c, i := range idx {
		results[c] = branchGoals(&rows[i].Record, goalIDs)
	}
	for gi, gid := range goalIDs {
		yy := top + cellH*gi
		label := gid
		if len([]rune(label)) > 24 {
			label = string([]rune(label)[:23]) + "…"
		}
		fmt.Fprintf(b, `<text class="goal" x="0" y="%d" font-size="12"><title>%s</title>%s</text>`, yy+15, esc(gid), esc(label))
		for c, i := range idx {
			rec := &rows[i].Record
			res := results[c][gid]
			fmt.Fprintf(b, `<rect x="%d" y="%d" width="%d" height="%d" fill="%s" stroke="#fff"><title>cycle %d, %s: %s</title></rect>`,
				labelW+cellW*c, yy, cellW, cellH, cellColor[res], rec.Cycle, esc(gid), esc(cycletext.Dash(res)))
		}
	}
	b.WriteString("</svg>\n")
}
