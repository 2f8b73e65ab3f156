// Package mcptools is what git-evolve offers an agent over the Model Context
// Protocol: its tools, each a git evolve command line built from a typed
// input, with the hints a client reads (read-only, destructive, idempotent)
// and the shape of what each returns; and its resources. It knows nothing
// of the protocol: internal/mcpserver serves these with the protocol's SDK
// in a program of its own, git-evolve-mcp, so that git evolve lists them
// (help, --tools) without linking the SDK into every command.
package mcptools

import (
	"fmt"
	"strconv"
	"strings"
)

// Input is a tool's arguments, decoded from the client's JSON after they
// were checked against the tool's input schema (inferred from the type:
// its json tags name the properties, a property without omitempty is
// required, its jsonschema tag describes it).
type Input interface {
	// Args is the git evolve command line the input asks for; an error is
	// the input's fault, and no command runs.
	Args() ([]string, error)
}

// Tool is one tool of the server.
type Tool struct {
	Name        string
	Title       string
	Description string
	// ReadOnly: the tool changes nothing. Destructive (only when not
	// ReadOnly): it may take back or replace what is there, rather than
	// only add to it. Idempotent: a second call with the same input changes
	// nothing more.
	ReadOnly, Destructive, Idempotent bool
	// List, when not empty, is the property of the result that holds the
	// command's JSON Lines as a list; otherwise the command prints one JSON
	// object, which is the result.
	List string
	// Output is the result's JSON Schema.
	Output string
	// Enum gives the values a string property of the input may take.
	Enum map[string][]string
}

// None is the input of a tool that takes none.
type None struct{}

// NextIn is next's input.
type NextIn struct {
	Strategy string `json:"strategy,omitempty" jsonschema:"how to weigh the ladder's rungs (default: balanced)"`
}

// Args implements Input.
func (in NextIn) Args() ([]string, error) {
	args := []string{"next", "--json", "--dry-run"}
	if in.Strategy != "" {
		args = append(args, "--strategy="+in.Strategy)
	}
	return args, nil
}

// CycleStartIn is cycle_start's input.
type CycleStartIn struct {
	Target string `json:"target,omitempty" jsonschema:"the goal or directive id (default: the failing goal with the highest weight)"`
	Item   string `json:"item,omitempty" jsonschema:"a work queue item to take"`
}

// Args implements Input.
func (in CycleStartIn) Args() ([]string, error) {
	args := []string{"cycle", "start", "--json", "--no-progress"}
	if in.Target != "" {
		args = append(args, "--target="+in.Target)
	}
	if in.Item != "" {
		args = append(args, "--item="+in.Item)
	}
	return args, nil
}

// CycleFinishIn is cycle_finish's input.
type CycleFinishIn struct {
	Message string `json:"message,omitempty" jsonschema:"the message of the commit that delivers the work (the cycle's trailers are added)"`
}

// Args implements Input.
func (in CycleFinishIn) Args() ([]string, error) {
	args := []string{"cycle", "finish", "--json", "--no-progress"}
	if in.Message != "" {
		args = append(args, "--message="+in.Message)
	}
	return args, nil
}

// CycleAbortIn is cycle_abort's input.
type CycleAbortIn struct {
	Reason string `json:"reason,omitempty" jsonschema:"why (kept in the record)"`
}

// Args implements Input.
func (in CycleAbortIn) Args() ([]string, error) {
	args := []string{"cycle", "abort", "--json"}
	if in.Reason != "" {
		args = append(args, "--reason="+in.Reason)
	}
	return args, nil
}

// GoalsMeasureIn is goals_measure's input.
type GoalsMeasureIn struct {
	Goal []string `json:"goal,omitempty" jsonschema:"only these goals, by id"`
}

// Args implements Input.
func (in GoalsMeasureIn) Args() ([]string, error) {
	args := []string{"goals", "measure", "--json", "--no-progress"}
	for _, id := range in.Goal {
		if id == "" {
			return nil, fmt.Errorf("goal: an id is empty")
		}
		args = append(args, "--goal="+id)
	}
	return args, nil
}

// LogIn is log's input.
type LogIn struct {
	Limit int  `json:"limit,omitempty" jsonschema:"only the last N cycles"`
	All   bool `json:"all,omitempty" jsonschema:"the local journal's idle and unchanged cycles too"`
}

// Args implements Input.
func (in LogIn) Args() ([]string, error) {
	args := []string{"log", "--json"}
	if in.Limit < 0 {
		return nil, fmt.Errorf("limit: %d is not a number of cycles", in.Limit)
	}
	if in.Limit > 0 {
		args = append(args, "-n", strconv.Itoa(in.Limit))
	}
	if in.All {
		args = append(args, "--all")
	}
	return args, nil
}

// ShowIn is show's input.
type ShowIn struct {
	Cycle string `json:"cycle" jsonschema:"a cycle number, or a revision naming a commit"`
}

// Args implements Input.
func (in ShowIn) Args() ([]string, error) {
	if strings.TrimSpace(in.Cycle) == "" {
		return nil, fmt.Errorf("cycle: a cycle number or a commit is needed")
	}
	return []string{"show", "--json", "--", in.Cycle}, nil
}

// HypothesisAddIn is hypothesis_add's input.
type HypothesisAddIn struct {
	ID           string `json:"id" jsonschema:"a unique id, without spaces"`
	CycleLanded  int    `json:"cycle_landed" jsonschema:"the cycle the change landed in"`
	CheckAtCycle int    `json:"check_at_cycle" jsonschema:"the cycle at which to check it"`
	Hypothesis   string `json:"hypothesis" jsonschema:"what the change is expected to do"`
	Measure      string `json:"measure" jsonschema:"how to tell whether it did"`
	Patch        string `json:"patch,omitempty" jsonschema:"what changed (a commit, a file, a summary)"`
}

// Args implements Input.
func (in HypothesisAddIn) Args() ([]string, error) {
	args := []string{"hypothesis", "add", "--json", "--id=" + in.ID,
		"--cycle-landed=" + strconv.Itoa(in.CycleLanded), "--check-at-cycle=" + strconv.Itoa(in.CheckAtCycle),
		"--hypothesis=" + in.Hypothesis, "--measure=" + in.Measure}
	if in.Patch != "" {
		args = append(args, "--patch="+in.Patch)
	}
	return args, nil
}

// HypothesisVerdictIn is hypothesis_verdict's input.
type HypothesisVerdictIn struct {
	ID       string `json:"id" jsonschema:"the hypothesis"`
	Verdict  string `json:"verdict" jsonschema:"VERIFIED or FALSIFIED"`
	Evidence string `json:"evidence" jsonschema:"what the measure found"`
}

// Args implements Input.
func (in HypothesisVerdictIn) Args() ([]string, error) {
	return []string{"hypothesis", "verdict", "--json", "--evidence=" + in.Evidence, "--", in.ID, in.Verdict}, nil
}

// QueueListIn is queue_list's input.
type QueueListIn struct {
	All bool `json:"all,omitempty" jsonschema:"consumed items too"`
}

// Args implements Input.
func (in QueueListIn) Args() ([]string, error) {
	args := []string{"queue", "list", "--json"}
	if in.All {
		args = append(args, "--all")
	}
	return args, nil
}

// command is a tool's fixed command line.
type command []string

// Args implements Input.
func (c command) Args() ([]string, error) { return c, nil }

// StatusArgs and CycleStatusArgs are the command lines of the two tools
// that take no input.
var (
	StatusArgs      = command{"status", "--json"}
	CycleStatusArgs = command{"cycle", "status", "--json"}
)

// Output schemas. They name what a caller relies on and allow more: the
// commands' JSON gains fields between versions.
const (
	anyObject   = `{"type":"object"}`
	objectList  = `{"type":"array","items":{"type":"object"}}`
	stringList  = `{"type":"array","items":{"type":"string"}}`
	nullOrObj   = `{"type":["object","null"]}`
	integerType = `{"type":"integer"}`
	stringType  = `{"type":"string"}`
)

func object(required []string, props ...string) string {
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{`)
	for i := 0; i+1 < len(props); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%q:%s", props[i], props[i+1])
	}
	b.WriteString(`}`)
	if len(required) > 0 {
		b.WriteString(`,"required":[`)
		for i, r := range required {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "%q", r)
		}
		b.WriteString(`]`)
	}
	b.WriteString(`}`)
	return b.String()
}

// Tools are the server's tools, in the order they are listed. stop, kill,
// resume and trust are not among them: an agent cannot stop or unleash its
// own loop.
var Tools = []Tool{
	{Name: "status", Title: "Loop status", ReadOnly: true, Idempotent: true,
		Description: "Where the loop stands: the open cycle, halts, the last cycles, failing goals, the queue, the ledger against its remote (git evolve status --json).",
		Output: object([]string{"open_cycle", "halt", "last_cycles", "failing_goals", "ledger"},
			"open_cycle", nullOrObj, "halt", anyObject, "last_cycles", objectList, "failing_goals", `{"type":"array"}`, "ledger", anyObject)},
	{Name: "next", Title: "Next work", ReadOnly: true, Idempotent: true,
		Description: "The work the next cycle takes from the ladder, and why (git evolve next --json).",
		Output:      object([]string{"rung"}, "rung", stringType, "target", stringType, "why", stringType),
		Enum:        map[string][]string{"strategy": {"balanced", "innovate", "harden", "repair", "ultrathink", "autoresearch"}}},
	{Name: "cycle_start", Title: "Open a cycle",
		Description: "Open a cycle on a goal, directive or queue item (git evolve cycle start --json).",
		Output:      object([]string{"cycle", "id"}, "cycle", integerType, "id", stringType, "target", stringType, "start", stringType)},
	{Name: "cycle_status", Title: "The open cycle", ReadOnly: true, Idempotent: true,
		Description: "The open cycle and its work so far (git evolve cycle status --json).",
		Output:      object([]string{"open"}, "open", `{"type":"boolean"}`, "cycle", integerType, "changed", stringList, "substantive", stringList)},
	{Name: "cycle_finish", Title: "Judge the cycle", Destructive: true,
		Description: "Judge the open cycle: the gate runs, the work is committed or reverted, the cycle recorded (git evolve cycle finish --json). A regressed cycle's work is reverted (saved first) and the result says so.",
		Output:      object([]string{"cycle", "id", "result"}, "cycle", integerType, "id", stringType, "result", stringType, "commit", stringType, "record", anyObject)},
	{Name: "cycle_abort", Title: "Abort the cycle",
		Description: "Close the open cycle without judging it; its work is saved and stays in the working tree (git evolve cycle abort --json).",
		Output:      object([]string{"cycle", "id", "saved"}, "cycle", integerType, "id", stringType, "saved", stringType, "saved_ref", stringType)},
	{Name: "goals_measure", Title: "Measure the goals", Idempotent: true,
		Description: "Run the goals' checks and return the fitness snapshot (git evolve goals measure --json).",
		Output:      object([]string{"goals", "summary"}, "goals", objectList, "summary", anyObject)},
	{Name: "log", Title: "Cycles in the ledger", ReadOnly: true, Idempotent: true, List: "cycles",
		Description: "The cycles in the ledger, oldest first, each as its record (git evolve log --json).",
		Output:      object([]string{"cycles"}, "cycles", objectList)},
	{Name: "show", Title: "One cycle's record", ReadOnly: true, Idempotent: true, List: "records",
		Description: "The whole record of a cycle, or of the cycles on a commit: each with the commit it is on (git evolve show --json).",
		Output:      object([]string{"records"}, "records", objectList)},
	{Name: "hypothesis_add", Title: "Add a hypothesis",
		Description: "Record a hypothesis to check at a later cycle (git evolve hypothesis add --json).",
		Output:      object([]string{"id", "status"}, "id", stringType, "status", stringType)},
	{Name: "hypothesis_verdict", Title: "Judge a hypothesis",
		Description: "Record a hypothesis's verdict, VERIFIED or FALSIFIED (git evolve hypothesis verdict --json).",
		Output:      object([]string{"id", "status"}, "id", stringType, "status", stringType),
		Enum:        map[string][]string{"verdict": {"VERIFIED", "FALSIFIED"}}},
	{Name: "queue_list", Title: "The work queue", ReadOnly: true, Idempotent: true,
		Description: "The work queue's items (git evolve queue list --json).",
		Output:      object([]string{"items"}, "items", objectList, "malformed_lines", `{"type":"array"}`)},
}

// Resources.
const (
	LedgerURI     = "evolve://ledger"
	CycleTemplate = "evolve://cycle/{n}"
	cyclePrefix   = "evolve://cycle/"
)

// ResourceArgs is the command line that reads resource uri, and its MIME
// type; ok is false for a URI that names no resource.
func ResourceArgs(uri string) (args []string, mime string, ok bool) {
	if uri == LedgerURI {
		return []string{"export"}, "application/jsonl", true
	}
	n, found := strings.CutPrefix(uri, cyclePrefix)
	if v, err := strconv.Atoi(n); !found || err != nil || v < 0 || strconv.Itoa(v) != n {
		return nil, "", false
	}
	return []string{"show", "--json", "--", n}, "application/jsonl", true
}

// List is the tools, one a line with its description, as help prints them.
func List() string {
	var b strings.Builder
	for _, t := range Tools {
		fmt.Fprintf(&b, "  %-19s %s\n", t.Name, t.Description)
	}
	return b.String()
}

// Hints names a tool's hints as the tool list prints them.
func (t Tool) Hints() string {
	switch {
	case t.ReadOnly:
		return "read-only"
	case t.Destructive && t.Idempotent:
		return "destructive, idempotent"
	case t.Destructive:
		return "destructive"
	case t.Idempotent:
		return "idempotent"
	}
	return "additive"
}
