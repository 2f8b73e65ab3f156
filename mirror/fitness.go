package mirror

import (
	"encoding/json"

	"github.com/git-evolve/git-evolve/goals"
)

// Fitness is a fitness snapshot as the seeds' files hold it: the cycle it
// was measured for (when it was), then the snapshot's own fields
// (timestamp, git_sha, era, goals[] with id, goal_id, result, value,
// threshold, weight, …, summary). Seed 004 reads it with jq:
// .goals[] | select(.result=="fail") | .id.
type Fitness struct {
	Cycle         int    `json:"cycle,omitempty"`
	CycleStartSHA string `json:"cycle_start_sha,omitempty"`
	// Label names a baseline, as the seeds' capture script takes it.
	Label string `json:"label,omitempty"`
	*goals.Snapshot
}

// Marshal is the file's content: one JSON object and a newline.
func (f Fitness) Marshal() ([]byte, error) {
	if f.Snapshot == nil {
		f.Snapshot = &goals.Snapshot{}
	}
	if f.Goals == nil {
		s := *f.Snapshot
		s.Goals = []goals.Result{}
		f.Snapshot = &s
	}
	data, err := json.Marshal(f)
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// WriteFitness writes a snapshot to one of the files (FitnessFile,
// BaselineFile), atomically.
func (m Mirror) WriteFitness(rel string, f Fitness) error {
	data, err := f.Marshal()
	if err != nil {
		return err
	}
	return m.WriteFile(rel, data)
}

// WriteFitnessAt writes a snapshot, in the same shape, to any path (the
// seeds' measure script's --output), atomically: a reader sees the old
// file or the new one, and a measure that fails leaves the old one.
func WriteFitnessAt(path string, f Fitness) error {
	data, err := f.Marshal()
	if err != nil {
		return err
	}
	return writeAtomic(path, data)
}
