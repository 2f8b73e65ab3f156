package loop

import (
	"github.com/git-evolve/git-evolve/cycle"
	"github.com/git-evolve/git-evolve/goals"
)

// SessionRun names the cycles an agent's interactive session runs under
// its own hooks, where no driver runs the agent.
const SessionRun = "session"

// sessionRules are the brief's rules for an agent that runs the loop in
// its own interactive session: its Stop hook finishes each cycle.
var sessionRules = []string{
	"Do the work in the working tree; commit or leave it uncommitted: the finish takes both.",
	"When the work is done, end your turn: the Stop hook finishes the cycle through the judge and, when the loop goes on, gives you the next brief. Do not run git evolve cycle finish, cycle abort, stop, kill or resume.",
	"The gate measures every goal with the goals file as it was when the cycle started: editing GOALS.yaml or GOALS.md does not pass a cycle, and the hooks deny it, as they deny edits under .git/.",
	"The work is judged in a clean checkout of what will be committed, first with the tests, test configuration and check scripts as they were when the cycle started, then with yours: new tests must pass too, fewer tests passing is a regression, and a cycle that changes only tests is not improved.",
	"A goal that regresses reverts the whole cycle; what you write under .agents/ survives the revert.",
	"To give the cycle's commit your own message, write it to " + CommitMsgFile + " (the trailers are added).",
}

// SessionBrief is the brief of cycle c, opened for an agent's interactive
// session on work w, with the goals as measured: the brief a driver's
// agent reads, with the rules of a session whose Stop hook finishes
// the cycle.
func SessionBrief(s *State, c *cycle.OpenCycle, w *Work, measured *goals.Snapshot) (*Brief, error) {
	b, err := newBrief(s, &RunState{ID: SessionRun, Strategy: "balanced"}, c, w, measured, false)
	if err != nil {
		return nil, err
	}
	b.Rules = sessionRules
	return b, nil
}

// AgentMessage is the commit message the agent left in CommitMsgFile
// under top ("" for none), bounded and cleaned.
func AgentMessage(top string) (string, error) { return agentMessage(top) }
