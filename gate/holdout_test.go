package gate

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/git-evolve/git-evolve/goals"
)

func TestJudgeHoldout(t *testing.T) {
	dir := t.TempDir()
	f, err := goals.Parse("holdout.yaml", []byte(`version: 3
goals:
  - {id: still, description: d, check: "test ! -e broke", weight: 1}
  - {id: other-input, description: d, check: "test -e general", weight: 1, holdout_for: answer}
  - {id: unrelated, description: d, check: "false", weight: 1}
`))
	if err != nil {
		t.Fatal(err)
	}
	before := goals.Measure(context.Background(), f, goals.Options{Dir: dir})
	// Nothing changed: nothing counts.
	h := JudgeHoldout(context.Background(), f, before, goals.Options{Dir: dir}, "")
	if h.Failed() || h.Total != 3 || h.Before != 1 || h.After != 1 {
		t.Fatalf("unchanged: %+v", h)
	}
	// The target now passes, and the check held out for it does not.
	if h := JudgeHoldout(context.Background(), f, before, goals.Options{Dir: dir}, "answer"); !h.Failed() || h.Unmet != 1 || h.Regressed != 0 {
		t.Fatalf("target fixed, holdout not: %+v", h)
	}
	// A check that passed and does not now, measured twice.
	if err := os.WriteFile(filepath.Join(dir, "broke"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	h = JudgeHoldout(context.Background(), f, before, goals.Options{Dir: dir}, "")
	if !h.Failed() || h.Regressed != 1 || h.After != 0 {
		t.Fatalf("regressed: %+v", h)
	}
	v := &Verdict{Holdout: h}
	if !v.Regression() || v.Text() != "FAIL: 1 of 3 holdout check(s) no longer pass" {
		t.Fatalf("verdict %q", v.Text())
	}
	if fs := v.Failures(); len(fs) != 1 || fs[0].What != "holdout" || fs[0].Excerpt != "" {
		t.Fatalf("failures %+v", fs)
	}
}
