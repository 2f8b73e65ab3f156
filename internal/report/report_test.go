package report

import (
	"strings"
	"testing"
)

// The Markdown of a run's improved, regressed and aborted cycles: the net
// fitness from the first cycle's start to the last work that stayed, the
// tally, a row a cycle with the reason of the regressed and the aborted
// one, the aborted cycle's commit as its start, linked on a forge.
func TestMarkdownOfARun(t *testing.T) {
	rows, _ := runRows(t)
	link := func(sha string) string { return "https://example.com/commit/" + sha }
	var b strings.Builder
	writeReport(&b, "a1e35f2..HEAD", rows, link)
	got := b.String()
	for _, want := range []string{
		"## Evolve cycles\n\n",
		"**Fitness:** score 55.6, 1 of 3 goals passing → score 88.9, 2 of 3 goals passing\n",
		"3 cycle(s) in `a1e35f2..HEAD`: 1 improved, 1 regressed, 1 aborted.\n",
		"| 1 | improved | feature | 2/3 | [`dc915c9`](https://example.com/commit/dc915c90105312659eb7dd888339a8d88ccf0e68) | - | - |\n",
		"| 2 | regressed | docs | 2/3 | [`224b467`](https://example.com/commit/224b467d9267d0c9066937a797a80a895781cb92) | not-broken: pass → fail (exit status 1) | - |\n",
		"| 3 | aborted | docs | - | [`224b467`](https://example.com/commit/224b467d9267d0c9066937a797a80a895781cb92) (start) | the agent exited 3 | - |\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the report lacks %q:\n%s", want, got)
		}
	}
	b.Reset()
	writeReport(&b, "HEAD..HEAD", nil, nil)
	if got, want := b.String(), "## Evolve cycles\n\nNo cycle in `HEAD..HEAD`.\n"; got != want {
		t.Errorf("an empty range's report is %q, want %q", got, want)
	}
}

func TestForgeURL(t *testing.T) {
	for url, want := range map[string]string{
		"https://github.com/acme/widget.git":   "github.com acme/widget.git",
		"git@gitlab.com:group/sub/project.git": "gitlab.com group/sub/project.git",
		"ssh://git@codeberg.org/a/b":           "codeberg.org a/b",
		"https://example.com/a/b.git":          "",
	} {
		m := forgeURL().FindStringSubmatch(url)
		got := ""
		if m != nil {
			got = m[1] + " " + m[2]
		}
		if got != want {
			t.Errorf("%s: %q, want %q", url, got, want)
		}
	}
}
