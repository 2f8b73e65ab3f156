package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/git-evolve/git-evolve/internal/report"
)

type reportCmd struct {
	Range  string `arg:"" optional:"" help:"The commits to report on, as git rev-list takes them (default: the branch against its upstream's merge base)." placeholder:"RANGE"`
	GitHub bool   `name:"github" help:"Append the report to the file $GITHUB_STEP_SUMMARY names (a GitHub Actions job summary) instead of printing it."`
	HTML   string `name:"html" help:"Write one self-contained HTML page instead: the score over the cycles (an SVG chart, regressed cycles marked), a goal × cycle heatmap, the continuous goals' values against their thresholds, the cycle table." placeholder:"FILE"`
}

func (reportCmd) Help() string {
	return `Markdown for a pull request: the range's net fitness before → after (the
score, the goals passing, each continuous goal against its threshold), then one
row per cycle whose work is in the range, with the reason of every regressed or
aborted one, its commit linked when the remote is GitHub, GitLab, Codeberg or
Bitbucket. An aborted cycle (a crashed or hung agent, git evolve cycle abort)
is recorded on the commit it started from: it is listed when that commit is in
the range or is where the range starts.

In CI, the clone needs the whole history and the notes: actions/checkout with
fetch-depth: 0, then git fetch origin 'refs/notes/*:refs/notes/*' (see
docs/ci.md). A shallow clone is said so, with what to do.`
}

func (c *reportCmd) Run(e *env) error {
	l, err := e.Ledger()
	if err != nil {
		return err
	}
	rep, err := report.Build(l, c.Range)
	var shallow *report.ShallowError
	switch {
	case errors.Is(err, report.ErrNoUpstream):
		return &usageError{msg: err.Error(), hint: "name the range from the branch this one goes into: git evolve report <base>..HEAD (as main..HEAD)"}
	case errors.As(err, &shallow):
		return withHint(err, "fetch the whole history and the notes: actions/checkout with fetch-depth: 0, or git fetch --unshallow, then git fetch origin 'refs/notes/*:refs/notes/*' (docs/ci.md)")
	case err != nil && c.Range != "":
		// A range git does not take is a usage error (a shallow clone's is
		// said above, with what to fetch).
		if cerr := checkRevisions(l.Repo(), c.Range); cerr != nil {
			return cerr
		}
		return err
	case err != nil:
		return err
	}
	if c.HTML != "" {
		path := e.path(c.HTML)
		if err := rep.WriteHTML(path); err != nil {
			return err
		}
		fmt.Fprintf(e.stderr, "git-evolve: wrote %s (%d cycle(s))\n", path, len(rep.Rows))
		return nil
	}
	if c.GitHub {
		path := e.getenv("GITHUB_STEP_SUMMARY")
		if path == "" {
			return usagef("--github: GITHUB_STEP_SUMMARY is not set (it is, in a GitHub Actions job)")
		}
		var b strings.Builder
		rep.Markdown(&b)
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return err
		}
		if _, err := io.WriteString(f, b.String()+"\n"); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	}
	w := bufio.NewWriter(e.stdout)
	rep.Markdown(w)
	return w.Flush()
}
