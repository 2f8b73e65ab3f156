package loop

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestRecordControlRoundTrip(t *testing.T) {
	f := fxNew(t)
	if evs, err := Controls(f.repo); err != nil || len(evs) != 0 {
		t.Fatalf("no control ref: %v, %v", evs, err)
	}
	at := func(min int) string { return fxT0.Add(time.Duration(min) * time.Minute).Format(time.RFC3339) }
	// Written out of order: Controls reads them by time.
	for _, e := range []ControlEvent{
		{Kind: KindTrip, Breaker: BreakerFailures, Reason: "5 in a row", Cycle: 7, At: at(10)},
		{Kind: KindTrip, Breaker: BreakerNoProgress, Reason: "an hour", Cycle: 6, At: at(5)},
		{Kind: KindResume, At: at(20), By: "Op <op@example.com>", Host: "ops", Cleared: []string{BreakerFailures}},
	} {
		if err := RecordControl(f.repo, e); err != nil {
			t.Fatal(err)
		}
	}
	evs, err := Controls(f.repo)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 3 {
		t.Fatalf("%d control events, want 3: %+v", len(evs), evs)
	}
	if evs[0].Breaker != BreakerNoProgress || evs[1].Breaker != BreakerFailures || evs[2].Kind != KindResume {
		t.Errorf("not in time order: %+v", evs)
	}
	if evs[1].By != "Cal <cal@example.com>" || evs[1].Host != "testhost" || evs[1].Cycle != 7 || evs[1].Reason != "5 in a row" {
		t.Errorf("a trip recorded without who and where: %+v", evs[1])
	}
	if evs[2].By != "Op <op@example.com>" || evs[2].Host != "ops" || !reflect.DeepEqual(evs[2].Cleared, []string{BreakerFailures}) {
		t.Errorf("the resume's own fields are not kept: %+v", evs[2])
	}
	if got := LastResume(evs); !got.Equal(fxT0.Add(20 * time.Minute)) {
		t.Errorf("last resume %v", got)
	}
	// The note is on HEAD, in the control ref, and the events are JSON lines.
	note := fxGit(t, f.dir, "notes", "--ref="+ControlRef, "show", "HEAD")
	if n := strings.Count(note, "\n"); n != 3 || !strings.Contains(note, `"kind":"trip"`) {
		t.Errorf("the note on HEAD:\n%s", note)
	}
}

func TestTripped(t *testing.T) {
	at := func(min int) string { return fxT0.Add(time.Duration(min) * time.Minute).Format(time.RFC3339) }
	trip := func(b string, min int) ControlEvent {
		return ControlEvent{Kind: KindTrip, Breaker: b, At: at(min), Reason: "r" + at(min)}
	}
	evs := []ControlEvent{trip(BreakerFailures, 1), {Kind: KindResume, At: at(2)}, trip(BreakerNoProgress, 3), trip(BreakerNoProgress, 4), trip(BreakerSameFailure, 5)}
	got := Tripped(evs)
	if len(got) != 2 || got[0].Breaker != BreakerNoProgress || got[0].At != at(3) || got[1].Breaker != BreakerSameFailure {
		t.Errorf("tripped %+v, want no-progress (its first trip) and same-failure", got)
	}
	evs = append(evs, ControlEvent{Kind: KindResume, At: at(6)})
	if got := Tripped(evs); len(got) != 0 {
		t.Errorf("after a resume: %+v, want none", got)
	}
	if got := LastResume(evs); !got.Equal(fxT0.Add(6 * time.Minute)) {
		t.Errorf("last resume %v", got)
	}
	if got := LastResume(nil); !got.IsZero() {
		t.Errorf("never resumed: %v", got)
	}
}
