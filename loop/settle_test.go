package loop

import (
	"testing"
	"time"

	"github.com/git-evolve/git-evolve/cycle"
	"github.com/git-evolve/git-evolve/ledger"
)

func TestSettle(t *testing.T) {
	tests := []struct {
		result  string
		aborted bool
		action  string
		status  string
		failed  bool
	}{
		{ledger.Improved, false, "consumed", "consumed", false},
		{ledger.Harvested, false, "consumed", "consumed", false},
		{ledger.Regressed, false, "released-failed", "available", true},
		{ledger.Unchanged, true, "released-failed", "available", true},
		{ledger.Unchanged, false, "released", "available", false},
	}
	for _, tt := range tests {
		t.Run(tt.action+"-"+tt.result, func(t *testing.T) {
			f := fxNew(t)
			now := fxBase()
			f.write(".agents/rpi/next-work.jsonl", `{"items":[{"id":"fix-it","title":"fix it","severity":"high"}]}`+"\n")
			q := OpenQueue(f.repo, f.dir, func() time.Time { return now })
			if _, err := q.Claim("fix-it", Claimant(), time.Hour); err != nil {
				t.Fatal(err)
			}
			st, err := Settle(f.repo, f.dir, &cycle.OpenCycle{Item: "fix-it", Rung: RungHarvested}, tt.result, tt.aborted, "", func() time.Time { return now })
			if err != nil {
				t.Fatal(err)
			}
			if st.Action != tt.action {
				t.Errorf("action %q, want %q", st.Action, tt.action)
			}
			items, _, err := q.List()
			if err != nil || len(items) != 1 {
				t.Fatalf("list: %v, %v", items, err)
			}
			it := items[0]
			if it.ClaimStatus != tt.status || (it.FailedAt != "") != tt.failed {
				t.Errorf("item after settling: status %q failed_at %q; want %q, failed %v", it.ClaimStatus, it.FailedAt, tt.status, tt.failed)
			}
			if tt.status == "consumed" && (!it.Consumed || it.ConsumedBy != Claimant()) {
				t.Errorf("consumed item: consumed %v by %q", it.Consumed, it.ConsumedBy)
			}
		})
	}
}

func TestSettleWithoutItem(t *testing.T) {
	f := fxNew(t)
	st, err := Settle(f.repo, f.dir, &cycle.OpenCycle{}, ledger.Improved, false, "", time.Now)
	if err != nil || st.Action != "" {
		t.Errorf("no item: %+v, %v", st, err)
	}
}

func TestSettleGoneItem(t *testing.T) {
	f := fxNew(t)
	f.write(".agents/rpi/next-work.jsonl", `{"items":[{"id":"other","title":"x"}]}`+"\n")
	st, err := Settle(f.repo, f.dir, &cycle.OpenCycle{Item: "gone", Rung: RungHarvested}, ledger.Improved, false, "", time.Now)
	if err != nil || st.Action != "gone" {
		t.Errorf("an item that left the queue: %+v, %v; want gone", st, err)
	}
}

// TestSettleLeavesAnotherLoopsClaim: a cycle whose lease ran out, and whose
// item another loop claimed since, does not release that loop's claim.
func TestSettleLeavesAnotherLoopsClaim(t *testing.T) {
	f := fxNew(t)
	now := fxBase()
	f.write(".agents/rpi/next-work.jsonl", `{"items":[{"id":"fix-it","title":"fix it"}]}`+"\n")
	q := OpenQueue(f.repo, f.dir, func() time.Time { return now })
	if _, err := q.Claim("fix-it", "evolve:other-host", time.Hour); err != nil {
		t.Fatal(err)
	}
	st, err := Settle(f.repo, f.dir, &cycle.OpenCycle{Item: "fix-it", Rung: RungHarvested}, ledger.Regressed, false, "", func() time.Time { return now })
	if err != nil || st.Action != "kept" {
		t.Fatalf("settle: %+v, %v; want kept", st, err)
	}
	items, _, _ := q.List()
	if items[0].ClaimedBy != "evolve:other-host" || items[0].FailedAt != "" {
		t.Errorf("the other loop's claim: by %q, failed_at %q", items[0].ClaimedBy, items[0].FailedAt)
	}
}
