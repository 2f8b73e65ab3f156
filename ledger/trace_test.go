package ledger

import (
	"reflect"
	"testing"
)

func TestTraceMissing(t *testing.T) {
	for _, c := range []struct {
		fields map[string]string
		want   []string
	}{
		{map[string]string{"exemption_reason": "typo"}, nil},
		{map[string]string{"goal_hypothesis": "h", "selected_gap": "g", "gherkin": "f", "first_failing_proof": "p",
			"red_evidence": "r", "green_evidence": "ok", "refactor_note": "none", "validation_evidence": "v",
			"ratchet_action": "a", "goal_reshape": "none"}, nil},
		{map[string]string{"goal_hypothesis": "h", "green_evidence": "", "exemption_reason": ""},
			[]string{"selected_gap", "gherkin", "first_failing_proof", "red_evidence", "green_evidence",
				"refactor_note", "validation_evidence", "ratchet_action", "goal_reshape"}},
	} {
		if got := (&Trace{Fields: c.fields}).Missing(); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Missing(%v) = %v, want %v", c.fields, got, c.want)
		}
	}
}
