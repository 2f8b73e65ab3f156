package main

import (
	"encoding/json"
	"fmt"
	"html"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/git-evolve/git-evolve/ledger"
)

// The HTML report: one self-contained page (no script, no network): the
// score over the cycles as an SVG line chart with the regressed and aborted
// cycles marked, a goal × cycle heatmap, each continuous goal's values
// against its threshold, and the cycle table. The chart and the heatmap
// sit in boxes of fixed size and place (#chart, #heatmap), which the
// browser test looks into.

const (
	chartW, chartH = 760, 260
	cellW, cellH   = 28, 22
	labelW         = 180
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

func writeHTML(w io.Writer, rng string, rows []reportRow, goalIDs []string, link func(string) string) error {
	esc := html.EscapeString
	var b strings.Builder
	b.WriteString(`<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Evolve cycles</title><style>
body{font:14px/1.4 system-ui,sans-serif;margin:0;background:#fff;color:#222}
#chart{position:absolute;left:20px;top:60px;width:` + strconv.Itoa(chartW) + `px;height:` + strconv.Itoa(chartH) + `px}
#heatmap{position:absolute;left:20px;top:340px}
#rest{position:absolute;left:20px;top:` + strconv.Itoa(360+cellH*(len(goalIDs)+2)) + `px;width:900px}
h1{position:absolute;left:20px;top:0;font-size:20px}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px;text-align:left}
</style></head><body>`)
	fmt.Fprintf(&b, "<h1>Evolve cycles in <code>%s</code></h1>\n", esc(rng))
	// The chart: the score after each cycle.
	fmt.Fprintf(&b, `<svg id="chart" viewBox="0 0 %d %d" xmlns="http://www.w3.org/2000/svg" role="img" aria-label="score over cycles">`, chartW, chartH)
	fmt.Fprintf(&b, `<rect x="0" y="0" width="%d" height="%d" fill="#fafafa" stroke="#bbb"/>`, chartW, chartH)
	for _, y := range []int{0, 25, 50, 75, 100} {
		py := 20 + float64(chartH-40)*(1-float64(y)/100)
		fmt.Fprintf(&b, `<line x1="40" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/><text x="8" y="%.1f" font-size="11">%d</text>`, chartW-10, py, py, py+4, y)
	}
	n := len(rows)
	// Slot 0 is where the range started (the first cycle's score before
	// it), then a slot a cycle.
	x := func(i int) float64 { return 50 + float64(chartW-70)*float64(i+1)/float64(n) }
	// The score of the branch's tip after each cycle: an improved cycle's
	// own, a regressed one's as it found it (its work was reverted), and
	// the last one's again after a cycle that changed nothing.
	var pts []string
	last := math.NaN()
	for _, row := range rows { // where the range started: the first cycle that says
		var before struct {
			Score *float64 `json:"score"`
		}
		if json.Unmarshal(row.rec.Extra["before"], &before) == nil && before.Score != nil {
			last = *before.Score
			py := 20 + float64(chartH-40)*(1-math.Max(0, math.Min(100, last))/100)
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(-1), py))
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="11" fill="#555">start</text>`, x(-1)-10, py+18)
			break
		}
	}
	ys := make([]float64, n) // each cycle's marker: on the line, or on the axis before it starts
	for i, row := range rows {
		ys[i] = float64(chartH - 12)
		score := last
		var own float64
		var before struct {
			Score *float64 `json:"score"`
		}
		switch {
		case row.rec.Aborted() || row.rec.Result == ledger.Unchanged:
		case row.rec.Result == ledger.Regressed:
			if json.Unmarshal(row.rec.Extra["before"], &before) == nil && before.Score != nil {
				score = *before.Score
			}
		case row.rec.Extra["score"] != nil && json.Unmarshal(row.rec.Extra["score"], &own) == nil:
			score = own
		}
		if math.IsNaN(score) {
			if json.Unmarshal(row.rec.Extra["before"], &before) != nil || before.Score == nil {
				continue
			}
			score = *before.Score
		}
		last = score
		py := 20 + float64(chartH-40)*(1-math.Max(0, math.Min(100, score))/100)
		ys[i] = py
		pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(i), py))
	}
	if len(pts) > 0 {
		fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="#1565c0" stroke-width="3"/>`, strings.Join(pts, " "))
	}
	for i, row := range rows {
		color, r := "#1565c0", 4
		switch {
		case row.rec.Aborted():
			color, r = "#757575", 6
		case row.rec.Result == ledger.Regressed:
			color, r = "#c62828", 7
		}
		fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="%d" fill="%s" stroke="#fff" data-cycle="%d"><title>cycle %d: %s</title></circle>`,
			x(i), ys[i], r, color, row.rec.Cycle, row.rec.Cycle, esc(termLine(listedResult(&row.rec))))
	}
	b.WriteString("</svg>\n")
	// The heatmap: a row a goal, a column a cycle.
	hw, hh := labelW+cellW*max(1, n), cellH*(len(goalIDs)+1)
	fmt.Fprintf(&b, `<svg id="heatmap" width="%d" height="%d" viewBox="0 0 %d %d" xmlns="http://www.w3.org/2000/svg" role="img" aria-label="goals by cycle">`, hw, hh, hw, hh)
	for i, row := range rows {
		fmt.Fprintf(&b, `<text x="%d" y="15" font-size="11">%d</text>`, labelW+cellW*i+4, row.rec.Cycle)
	}
	for gi, id := range goalIDs {
		y := cellH * (gi + 1)
		fmt.Fprintf(&b, `<text x="0" y="%d" font-size="12">%s</text>`, y+15, esc(id))
		for i, row := range rows {
			res := ""
			if !row.rec.Aborted() {
				res = goalResults(&row.rec, goalIDs)[id]
			}
			fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="%s" stroke="#fff"><title>cycle %d, %s: %s</title></rect>`,
				labelW+cellW*i, y, cellW, cellH, cellColor[res], row.rec.Cycle, esc(id), esc(dash(res)))
		}
	}
	b.WriteString("</svg>\n<div id=\"rest\">\n")
	// The continuous goals.
	type val struct {
		cycle            int
		after, threshold *float64
		direction        string
	}
	vals := map[string][]val{}
	var vorder []string
	for _, row := range rows {
		var vs []goalValue
		if json.Unmarshal(row.rec.Extra["values"], &vs) != nil {
			continue
		}
		for _, v := range vs {
			if _, ok := vals[v.GoalID]; !ok {
				vorder = append(vorder, v.GoalID)
			}
			vals[v.GoalID] = append(vals[v.GoalID], val{row.rec.Cycle, v.After, v.Threshold, v.Direction})
		}
	}
	if len(vorder) > 0 {
		b.WriteString("<h2>Continuous goals</h2><table><tr><th>goal</th><th>threshold</th><th>values (cycle: value)</th></tr>\n")
		for _, id := range vorder {
			var cells []string
			thr := "-"
			for _, v := range vals[id] {
				cells = append(cells, fmt.Sprintf("%d: %s", v.cycle, num(v.after)))
				if v.threshold != nil {
					thr = num(v.threshold) + " (" + esc(v.direction) + ")"
				}
			}
			fmt.Fprintf(&b, "<tr><td>%s</td><td>%s</td><td>%s</td></tr>\n", esc(id), thr, esc(strings.Join(cells, ", ")))
		}
		b.WriteString("</table>\n")
	}
	// The cycles.
	b.WriteString("<h2>Cycles</h2><table id=\"cycles\"><tr><th>cycle</th><th>result</th><th>target</th><th>goals</th><th>commit</th><th>reason</th><th>ruler</th></tr>\n")
	var notes []string
	for _, row := range rows {
		r := &row.rec
		result, reason, goals := listedResult(r), failureReason(r), goalsCell(r)
		for _, n := range cycleNotes(r) {
			notes = append(notes, fmt.Sprintf("<li>cycle %d: %s</li>", r.Cycle, esc(termLine(n))))
		}
		commit := "-"
		if row.commit != "" {
			commit = "<code>" + row.commit[:7] + "</code>"
			if link != nil {
				commit = `<a href="` + esc(link(row.commit)) + `">` + commit + "</a>"
			}
			if row.rec.Aborted() {
				commit += " (start)"
			}
		}
		fmt.Fprintf(&b, "<tr data-cycle=\"%d\"><td>%d</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n",
			r.Cycle, r.Cycle, esc(termLine(result)), esc(termLine(dash(r.Target))), goals, commit, esc(termLine(dash(reason))), esc(termLine(dash(rulerCell(r)))))
	}
	b.WriteString("</table>\n")
	if len(notes) > 0 {
		b.WriteString("<ul id=\"notes\">\n" + strings.Join(notes, "\n") + "\n</ul>\n")
	}
	b.WriteString("</div></body></html>\n")
	_, err := io.WriteString(w, b.String())
	return err
}
