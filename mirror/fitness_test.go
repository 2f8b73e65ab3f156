package mirror

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/git-evolve/git-evolve/goals"
)

func TestFitnessIsTheSeedsShape(t *testing.T) {
	v := 0.8
	s := &goals.Snapshot{Timestamp: "2026-01-01T00:00:00Z", Era: "goals-abc", Goals: []goals.Result{
		{GoalID: "tests", ID: "tests", Result: goals.Pass, Weight: 5},
		{GoalID: "cover", ID: "cover", Result: goals.Fail, Value: &v, Weight: 3},
	}}
	data, err := Fitness{Cycle: 4, CycleStartSHA: "abc", Snapshot: s}.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	// what seed 004's jq reads
	var got struct {
		Cycle         int    `json:"cycle"`
		CycleStartSHA string `json:"cycle_start_sha"`
		Timestamp     string `json:"timestamp"`
		Goals         []struct {
			ID     string   `json:"id"`
			Result string   `json:"result"`
			Value  *float64 `json:"value"`
			Weight int      `json:"weight"`
		} `json:"goals"`
	}
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if got.Cycle != 4 || got.CycleStartSHA != "abc" || got.Timestamp != s.Timestamp || len(got.Goals) != 2 ||
		got.Goals[1].ID != "cover" || got.Goals[1].Result != "fail" || *got.Goals[1].Value != 0.8 {
		t.Errorf("the file: %s", data)
	}
	if data[len(data)-1] != '\n' {
		t.Errorf("no final newline")
	}
	// outside a cycle, no cycle fields; no goals is an empty list
	data, _ = Fitness{Snapshot: &goals.Snapshot{}}.Marshal()
	var m map[string]any
	json.Unmarshal(data, &m)
	if _, ok := m["cycle"]; ok {
		t.Errorf("cycle 0 written: %s", data)
	}
	if g, ok := m["goals"].([]any); !ok || len(g) != 0 {
		t.Errorf("goals: %s", data)
	}
}

func TestWriteFitnessAtReplacesWhole(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fitness.json")
	os.WriteFile(path, []byte("old\n"), 0o644)
	old, _ := os.Open(path)
	defer old.Close()
	if err := WriteFitnessAt(path, Fitness{Snapshot: &goals.Snapshot{Era: "e"}}); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 16)
	n, _ := old.Read(buf)
	if string(buf[:n]) != "old\n" {
		t.Errorf("the old file changed under its reader: %q", buf[:n])
	}
	data, _ := os.ReadFile(path)
	var m map[string]any
	if json.Unmarshal(data, &m) != nil || m["era"] != "e" {
		t.Errorf("written: %s", data)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("left behind: %v", entries)
	}
}
