package main

import (
	"bufio"
	"fmt"
	"strings"
	"time"

	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/loop"
	"github.com/git-evolve/git-evolve/queue"
)

// The work queue and the hypothesis ledger.

type queueCmd struct {
	List    queueListCmd    `cmd:"" help:"List the items of .agents/rpi/next-work.jsonl, with their ids and claims."`
	Claim   queueClaimCmd   `cmd:"" help:"Claim an item for a while (a lease), so that no other loop takes it."`
	Consume queueConsumeCmd `cmd:"" help:"Mark a claimed item done."`
	Release queueReleaseCmd `cmd:"" help:"Give a claimed item back, with failed_at when its cycle failed."`
}

func (queueCmd) Help() string {
	return `The work queue is .agents/rpi/next-work.jsonl: one entry a line, each with
items[] (title, type, severity, source, description, target_repo and the claim
fields claim_status, claimed_by, claimed_at, consumed, consumed_by,
consumed_at, failed_at). Items without an id get a stable one. Every change
rewrites the file atomically under a lock; lines that do not parse are kept as
they are. Cycles claim their item (the driver, or cycle start --item) and
settle it as they end: improved consumes it, regressed or aborted releases it
with failed_at.`
}

func openQueue(e *env) (*queue.Queue, error) {
	repo, err := e.Repo()
	if err != nil {
		return nil, err
	}
	top, err := repo.WorkTree()
	if err != nil {
		return nil, err
	}
	return loop.OpenQueue(repo, top, e.now), nil
}

type queueListCmd struct {
	JSON bool `name:"json" help:"Print {items, malformed_lines}: the items, and the numbers of the lines that do not parse."`
	All  bool `help:"List consumed items too."`
}

func (c *queueListCmd) Run(e *env) error {
	q, err := openQueue(e)
	if err != nil {
		return err
	}
	items, malformed, err := q.List()
	if err != nil {
		return err
	}
	var shown []queue.Item
	for _, it := range items {
		if c.All || !it.Consumed {
			shown = append(shown, it)
		}
	}
	if shown == nil {
		shown = []queue.Item{}
	}
	if c.JSON {
		fmt.Fprintf(e.stdout, "%s\n", mustJSON(map[string]any{"items": shown, "malformed_lines": nonNilInts(malformed)}))
		return nil
	}
	w := bufio.NewWriter(e.stdout)
	if len(shown) == 0 {
		fmt.Fprintf(w, "no items in %s\n", queue.Path)
	}
	for _, it := range shown {
		state := it.ClaimStatus
		if it.ClaimedBy != "" && it.ClaimStatus == queue.InProgress {
			state += " by " + it.ClaimedBy
			if it.LeaseUntil != "" {
				state += " until " + it.LeaseUntil
			}
		}
		if it.Expired {
			state += " (lease expired)"
		}
		if it.FailedAt != "" {
			state += ", failed " + it.FailedAt
		}
		meta := strings.Trim(it.Severity+" "+it.Type, " ")
		if meta != "" {
			meta = " [" + meta + "]"
		}
		// The queue file is written by agents and other loops: escaped.
		fmt.Fprintf(w, "%s%s %s: %s\n", termLine(it.ID), termLine(meta), termLine(state), termLine(it.Title))
	}
	for _, n := range malformed {
		fmt.Fprintf(w, "line %d does not parse: kept as it is\n", n)
	}
	return w.Flush()
}

func nonNilInts(s []int) []int {
	if s == nil {
		return []int{}
	}
	return s
}

type queueClaimCmd struct {
	ID    string        `arg:"" help:"The item's id (git evolve queue list shows them)."`
	By    string        `help:"Who claims it (default: evolve:<host>, as the driver does)." placeholder:"NAME"`
	Lease time.Duration `help:"How long the claim holds (default: evolve.claimLease, else 2h)." placeholder:"DURATION"`
}

func (c *queueClaimCmd) Run(e *env) error {
	s, err := loadState(e, "")
	if err != nil {
		return err
	}
	by, lease := c.By, c.Lease
	if by == "" {
		by = loop.Claimant()
	}
	if lease <= 0 {
		lease = s.Config.Lease
	}
	it, err := s.Queue.Claim(c.ID, by, lease)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "claimed %s for %s until %s\n", it.ID, it.ClaimedBy, it.LeaseUntil)
	return nil
}

type queueConsumeCmd struct {
	ID string `arg:"" help:"The item's id."`
	By string `help:"Who consumes it (default: evolve:<host>)." placeholder:"NAME"`
}

func (c *queueConsumeCmd) Run(e *env) error {
	q, err := openQueue(e)
	if err != nil {
		return err
	}
	by := c.By
	if by == "" {
		by = loop.Claimant()
	}
	it, err := q.Consume(c.ID, by)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "consumed %s\n", it.ID)
	return nil
}

type queueReleaseCmd struct {
	ID     string `arg:"" help:"The item's id."`
	Failed bool   `help:"The work on it failed: failed_at is set."`
}

func (c *queueReleaseCmd) Run(e *env) error {
	q, err := openQueue(e)
	if err != nil {
		return err
	}
	it, err := q.Release(c.ID, c.Failed)
	if err != nil {
		return err
	}
	if c.Failed {
		fmt.Fprintf(e.stdout, "released %s, failed at %s\n", it.ID, it.FailedAt)
	} else {
		fmt.Fprintf(e.stdout, "released %s\n", it.ID)
	}
	return nil
}

type hypothesisCmd struct {
	Add     hypothesisAddCmd     `cmd:"" help:"Add a hypothesis: what a change is expected to do, and at which cycle to check it."`
	List    hypothesisListCmd    `cmd:"" help:"List the hypotheses."`
	Verdict hypothesisVerdictCmd `cmd:"" help:"Record a pending hypothesis's verdict: VERIFIED or FALSIFIED, with evidence."`
	Due     hypothesisDueCmd     `cmd:"" help:"List the pending hypotheses whose check cycle has come."`
}

func (hypothesisCmd) Help() string {
	return `Hypotheses are kept in git, under refs/notes/evolve-hypotheses (notes on the
commit that was HEAD when each was added or judged), and carried by git evolve
sync like the ledger. The driver puts the due ones in each cycle's brief.`
}

type hypothesisAddCmd struct {
	ID           string `required:"" help:"A unique id, without spaces." placeholder:"ID"`
	CycleLanded  int    `name:"cycle-landed" required:"" help:"The cycle the change landed in." placeholder:"N"`
	CheckAtCycle int    `name:"check-at-cycle" required:"" help:"The cycle at which to check it." placeholder:"M"`
	Patch        string `help:"What changed (a commit, a file, a summary)." placeholder:"TEXT"`
	Hypothesis   string `required:"" help:"What the change is expected to do." placeholder:"TEXT"`
	Measure      string `required:"" help:"How to tell whether it did." placeholder:"TEXT"`
	JSON         bool   `name:"json" help:"Print the hypothesis as added, as one JSON object."`
}

func (c *hypothesisAddCmd) Run(e *env) error {
	repo, err := e.Repo()
	if err != nil {
		return err
	}
	h := loop.Hypothesis{ID: c.ID, CycleLanded: c.CycleLanded, CheckAtCycle: c.CheckAtCycle, Patch: c.Patch, Hypothesis: c.Hypothesis, Measure: c.Measure}
	if err := loop.AddHypothesis(repo, h, e.now()); err != nil {
		return err
	}
	if c.JSON {
		return printHypothesis(e, repo, strings.TrimSpace(c.ID))
	}
	fmt.Fprintf(e.stdout, "added hypothesis %s, PENDING until cycle %d\n", strings.TrimSpace(c.ID), c.CheckAtCycle)
	return nil
}

type hypothesisListCmd struct {
	JSON  bool `name:"json" help:"Print the hypotheses as a JSON array."`
	JSONL bool `name:"jsonl" help:"Print one JSON record a line, with its verdict (the seeds' ao loop hypothesis list form)."`
}

func (c *hypothesisListCmd) Run(e *env) error {
	repo, err := e.Repo()
	if err != nil {
		return err
	}
	hs, err := loop.Hypotheses(repo)
	if err != nil {
		return err
	}
	if c.JSONL {
		w := bufio.NewWriter(e.stdout)
		for _, h := range hs {
			line := struct {
				loop.Hypothesis
				Verdict string `json:"verdict"`
			}{h, h.Status}
			fmt.Fprintf(w, "%s\n", mustJSON(line))
		}
		return w.Flush()
	}
	return printHypotheses(e, hs, c.JSON, "no hypotheses")
}

// printHypothesis prints hypothesis id as the ledger of hypotheses now
// holds it, as one JSON object.
func printHypothesis(e *env, repo *gitstore.Repo, id string) error {
	hs, err := loop.Hypotheses(repo)
	if err != nil {
		return err
	}
	for _, h := range hs {
		if h.ID == id {
			fmt.Fprintf(e.stdout, "%s\n", mustJSON(h))
			return nil
		}
	}
	return fmt.Errorf("hypothesis %s was written but does not read back: see git evolve hypothesis list", id)
}

func printHypotheses(e *env, hs []loop.Hypothesis, asJSON bool, none string) error {
	if hs == nil {
		hs = []loop.Hypothesis{}
	}
	if asJSON {
		fmt.Fprintf(e.stdout, "%s\n", mustJSON(hs))
		return nil
	}
	w := bufio.NewWriter(e.stdout)
	if len(hs) == 0 {
		fmt.Fprintln(w, none)
	}
	for _, h := range hs {
		// Hypotheses come with sync from any clone: escaped.
		fmt.Fprintf(w, "%s %s (cycle %d, check at %d): %s\n", termLine(h.ID), termLine(h.Status), h.CycleLanded, h.CheckAtCycle, termLine(h.Hypothesis))
		fmt.Fprintf(w, "  measure: %s\n", termLine(h.Measure))
		if h.Evidence != "" {
			fmt.Fprintf(w, "  evidence: %s\n", termLine(h.Evidence))
		}
	}
	return w.Flush()
}

type hypothesisVerdictCmd struct {
	ID       string `arg:"" help:"The hypothesis."`
	Verdict  string `arg:"" help:"VERIFIED or FALSIFIED."`
	Evidence string `required:"" help:"What the measure found." placeholder:"TEXT"`
	JSON     bool   `name:"json" help:"Print the hypothesis with its verdict, as one JSON object."`
}

func (c *hypothesisVerdictCmd) Run(e *env) error {
	repo, err := e.Repo()
	if err != nil {
		return err
	}
	h, err := loop.Verdict(repo, c.ID, c.Verdict, c.Evidence, e.now())
	if err != nil {
		return err
	}
	if c.JSON {
		return printHypothesis(e, repo, h.ID)
	}
	fmt.Fprintf(e.stdout, "hypothesis %s: %s\n", h.ID, h.Status)
	return nil
}

type hypothesisDueCmd struct {
	JSON  bool `name:"json" help:"Print them as a JSON array."`
	Cycle int  `help:"The cycle to judge by (default: the latest the ledger holds)." placeholder:"N"`
}

func (c *hypothesisDueCmd) Run(e *env) error {
	s, err := loadState(e, "")
	if err != nil {
		return err
	}
	n := c.Cycle
	if n <= 0 {
		n = s.MaxCycle()
	}
	hs, err := loop.Hypotheses(s.Repo)
	if err != nil {
		return err
	}
	return printHypotheses(e, loop.Due(hs, n), c.JSON, fmt.Sprintf("no hypothesis is due at cycle %d", n))
}
