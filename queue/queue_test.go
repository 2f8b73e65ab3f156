package queue

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

const sample = `{"source_epic":"ep-1","timestamp":"2026-01-01T00:00:00Z","items":[{"title":"fix the flaky test","type":"bug","severity":"high","source":"council-finding","description":"it fails one run in ten"},{"title":"document the CLI","type":"docs","severity":"low","source":"retro-learning","description":"-h is thin","id":"docs-1"}],"consumed":false}
this line is not JSON and stays
{"source_epic":"ep-2","items":[{"title":"needs review","severity":"medium","requires":["human-review"]}],"zz_unknown":{"kept":true}}
`

func newQueue(t *testing.T, content string, now *time.Time) *Queue {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, Path)
	os.MkdirAll(filepath.Dir(path), 0o755)
	if content != "" {
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return Open(path, filepath.Join(dir, "queue.lock"), func() time.Time { return *now })
}

func TestQueueLifecycle(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	q := newQueue(t, sample, &now)
	items, bad, err := q.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 3 || len(bad) != 1 || bad[0] != 2 {
		t.Fatalf("items %d, bad lines %v", len(items), bad)
	}
	flaky := items[0].ID
	if !strings.HasPrefix(flaky, "q") || items[1].ID != "docs-1" {
		t.Errorf("ids %q %q: a derived id, and the item's own", flaky, items[1].ID)
	}
	if !items[0].Selectable() || items[2].Selectable() {
		t.Errorf("selectable: %v %v (an item that needs review is not)", items[0].Selectable(), items[2].Selectable())
	}
	// The id is stable: listing again gives the same.
	again, _, _ := q.List()
	if again[0].ID != flaky {
		t.Errorf("the derived id changed: %s then %s", flaky, again[0].ID)
	}

	// Claim, and someone else is refused until the lease runs out.
	it, err := q.Claim(flaky, "evolve:cycle-3", time.Hour)
	if err != nil || it.ClaimStatus != InProgress || it.ClaimedBy != "evolve:cycle-3" || it.LeaseUntil != "2026-01-02T04:04:05Z" {
		t.Fatalf("claim: %+v, %v", it, err)
	}
	var rf *Refusal
	if _, err := q.Claim(flaky, "evolve:cycle-4", time.Hour); !errors.As(err, &rf) {
		t.Errorf("a second claim: %v, want a refusal", err)
	}
	now = now.Add(2 * time.Hour)
	if it, err := q.Claim(flaky, "evolve:cycle-4", time.Hour); err != nil || it.ClaimedBy != "evolve:cycle-4" {
		t.Errorf("a claim after the lease ran out: %+v, %v", it, err)
	}
	// The line that is not JSON, and the fields the schema does not know, are
	// kept; the id the item was known by is now its own.
	data, _ := os.ReadFile(q.Path())
	if !strings.Contains(string(data), "\nthis line is not JSON and stays\n") || !strings.Contains(string(data), `"zz_unknown":{"kept":true}`) {
		t.Errorf("the file lost what it held:\n%s", data)
	}
	if !strings.Contains(string(data), `"id":"`+flaky+`"`) {
		t.Errorf("the derived id was not written: %s", data)
	}

	// Release on failure, then consume.
	if it, err := q.Release(flaky, true); err != nil || it.ClaimStatus != Available || it.FailedAt == "" || it.ClaimedBy != "" {
		t.Errorf("release: %+v, %v", it, err)
	}
	if _, err := q.Claim(flaky, "evolve:cycle-5", 0); err != nil {
		t.Fatal(err)
	}
	if it, err := q.Consume(flaky, "evolve:cycle-5"); err != nil || !it.Consumed || it.ConsumedBy != "evolve:cycle-5" || it.ClaimStatus != Consumed {
		t.Errorf("consume: %+v, %v", it, err)
	}
	if _, err := q.Claim(flaky, "x", 0); !errors.As(err, &rf) {
		t.Errorf("claiming a consumed item: %v", err)
	}
	if _, err := q.Release("nope", false); !errors.Is(err, ErrNotFound) {
		t.Errorf("an unknown item: %v", err)
	}
	// An entry whose items are all consumed is consumed.
	q.Claim("docs-1", "c", 0)
	q.Consume("docs-1", "c")
	data, _ = os.ReadFile(q.Path())
	first := strings.SplitN(string(data), "\n", 2)[0]
	if !strings.Contains(first, `"consumed":true`) || !strings.Contains(first, `"claim_status":"consumed"`) {
		t.Errorf("the entry is not consumed: %s", first)
	}
}

// TestQueueConcurrentClaims: many processes' claims at once, each under
// the lock: exactly one wins an item.
func TestQueueConcurrentClaims(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	q := newQueue(t, sample, &now)
	items, _, _ := q.List()
	var wg sync.WaitGroup
	wins := make(chan string, 20)
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			by := "cycle-" + string(rune('a'+i))
			if _, err := q.Claim(items[0].ID, by, time.Hour); err == nil {
				wins <- by
			}
		}(i)
	}
	wg.Wait()
	close(wins)
	if n := len(wins); n != 1 {
		t.Errorf("%d claims won, want 1", n)
	}
}

func TestRoadmap(t *testing.T) {
	items := ParseRoadmap([]byte("# Roadmap\n\n1. `auth` add login\n2. `billing` charge cards, blocker: `auth`\n3. `reports` blocker: `billing` monthly\n- `ignored` not numbered\n4. no id here\n"))
	if len(items) != 3 || items[1].Blocker != "auth" || items[2].ID != "reports" || items[2].Blocker != "billing" {
		t.Fatalf("parsed %+v", items)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	s, err := LoadRoadmapState(path, "roadmap.md")
	if err != nil {
		t.Fatal(err)
	}
	if w, _, _, ok := s.Next(items); !ok || w.ID != "auth" {
		t.Fatalf("first: %+v", w)
	}
	s.Done(items, "auth")
	if w, _, _, ok := s.Next(items); !ok || w.ID != "billing" {
		t.Errorf("after auth: %+v", w)
	}
	// billing fails three times: escalated, and reports (blocked by it) too.
	for i := 0; i < EscalateAfter; i++ {
		s.Failed(items, "billing")
	}
	if _, _, _, ok := s.Next(items); ok {
		t.Errorf("something is left after billing and reports were escalated: %+v", s)
	}
	if len(s.Escalated) != 2 {
		t.Errorf("escalated %+v, want billing and reports", s.Escalated)
	}
	if err := s.Save(path); err != nil {
		t.Fatal(err)
	}
	back, err := LoadRoadmapState(path, "roadmap.md")
	if err != nil || len(back.Completed) != 1 || len(back.Escalated) != 2 {
		t.Errorf("reloaded %+v, %v", back, err)
	}
	other, _ := LoadRoadmapState(path, "other.md")
	if len(other.Completed) != 0 {
		t.Error("the state of one roadmap was read for another")
	}
	// A blocker not on the roadmap is worked first.
	items = ParseRoadmap([]byte("1. `b` after the schema, blocker: `schema`\n"))
	s2, _ := LoadRoadmapState(filepath.Join(dir, "none.json"), "r2.md")
	if w, unblocks, _, ok := s2.Next(items); !ok || w.ID != "schema" || unblocks != "b" {
		t.Errorf("an outside blocker: %+v %q", w, unblocks)
	}
}

func TestRoadmapBlockerChains(t *testing.T) {
	dir := t.TempDir()
	s, err := LoadRoadmapState(filepath.Join(dir, "state.json"), "r.md")
	if err != nil {
		t.Fatal(err)
	}
	// c needs b, b needs a: a first, then b, then c.
	items := ParseRoadmap([]byte("1. `c` blocker: `b`\n2. `b` blocker: `a`\n3. `a`\n"))
	for _, want := range []struct{ id, unblocks string }{{"a", "b"}, {"b", "c"}, {"c", ""}} {
		w, unblocks, _, ok := s.Next(items)
		if !ok || w.ID != want.id || unblocks != want.unblocks {
			t.Fatalf("next: %q unblocking %q (%v); want %q unblocking %q", w.ID, unblocks, ok, want.id, want.unblocks)
		}
		s.Done(items, w.ID)
	}
	if w, _, _, ok := s.Next(items); ok {
		t.Errorf("all done, yet next is %+v", w)
	}
	// A cycle of blockers ends: the item where it closes is worked.
	s2, _ := LoadRoadmapState(filepath.Join(dir, "s2.json"), "r2.md")
	items = ParseRoadmap([]byte("1. `x` blocker: `y`\n2. `y` blocker: `x`\n"))
	if w, unblocks, _, ok := s2.Next(items); !ok || w.ID != "y" || unblocks != "x" {
		t.Errorf("a cycle of blockers: %q unblocking %q (%v)", w.ID, unblocks, ok)
	}
}

// FuzzQueue reads any file as a queue: listing never fails, every item it
// lists can be claimed by its id, and a claim rewrites the line of that
// item's entry alone: every other line, parsed or not, stays byte for byte.
func FuzzQueue(f *testing.F) {
	f.Add(sample)
	f.Add("")
	f.Add("{}\n{\"items\":null}\n{\"items\":[1]}\n[]\n")
	f.Add(`{"items":[{"title":"same"},{"title":"same"}]}` + "\n" + `{"items":[{"id":"x"},{"id":"x"}]}`)
	f.Add("{\"items\":[{\"title\":\"no newline\"}]}")
	f.Fuzz(func(t *testing.T, content string) {
		now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		q := newQueue(t, content, &now)
		if content == "" {
			os.WriteFile(q.Path(), nil, 0o644)
		}
		items, _, err := q.List()
		if err != nil {
			t.Fatalf("list: %v", err)
		}
		ids := map[string]bool{}
		for _, it := range items {
			if it.ID == "" || ids[it.ID] {
				t.Fatalf("item id %q empty or given twice in %q", it.ID, content)
			}
			ids[it.ID] = true
		}
		for _, it := range items {
			if !it.Selectable() {
				continue
			}
			before, _ := os.ReadFile(q.Path())
			if _, err := q.Claim(it.ID, "fuzz", time.Hour); err != nil {
				var r *Refusal
				if errors.As(err, &r) {
					continue
				}
				t.Fatalf("claim %s: %v", it.ID, err)
			}
			after, _ := os.ReadFile(q.Path())
			bl, al := strings.SplitAfter(string(before), "\n"), strings.SplitAfter(string(after), "\n")
			if bl[len(bl)-1] == "" {
				bl = bl[:len(bl)-1]
			}
			if al[len(al)-1] == "" {
				al = al[:len(al)-1]
			}
			if len(bl) != len(al) {
				t.Fatalf("claim of %s changed the line count %d → %d", it.ID, len(bl), len(al))
			}
			for i := range bl {
				if i+1 != it.Entry && strings.TrimSuffix(bl[i], "\n") != strings.TrimSuffix(al[i], "\n") {
					t.Fatalf("claim of %s (line %d) changed line %d: %q → %q", it.ID, it.Entry, i+1, bl[i], al[i])
				}
			}
			again, _, err := q.List()
			if err != nil || len(again) != len(items) {
				t.Fatalf("after the claim: %d items, %v; had %d", len(again), err, len(items))
			}
			for _, a := range again {
				if !ids[a.ID] {
					t.Fatalf("after the claim an item has a new id %q", a.ID)
				}
			}
			break
		}
	})
}

func FuzzParseRoadmap(f *testing.F) {
	f.Add("1. `a`\n2. `b` blocker: `a`\n")
	f.Add("1. `x` blocker: `y`\n2. `y` blocker: `x`\n")
	f.Add("1. blocker: `z`\n10. `q` blocker: `q`\n")
	f.Fuzz(func(t *testing.T, md string) {
		items := ParseRoadmap([]byte(md))
		s := &RoadmapState{}
		for n := 0; n < 3*len(items)+3; n++ {
			w, _, _, ok := s.Next(items)
			if !ok {
				return
			}
			if w.ID == "" {
				t.Fatalf("an item without an id from %q", md)
			}
			if n%2 == 0 {
				s.Done(items, w.ID)
			} else {
				s.Failed(items, w.ID)
			}
		}
		t.Fatalf("the roadmap %q was not worked through in %d steps", md, 3*len(items)+3)
	})
}

// TestTwinIDsStay: claiming one of three items that say the same writes its
// id into it; the other twins keep theirs.
func TestTwinIDsStay(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	twin := `{"title":"same"}`
	q := newQueue(t, `{"items":[`+twin+`,`+twin+`,`+twin+`]}`+"\n", &now)
	before, _, err := q.List()
	if err != nil || len(before) != 3 {
		t.Fatal(before, err)
	}
	if _, err := q.Claim(before[1].ID, "me", time.Hour); err != nil {
		t.Fatal(err)
	}
	after, _, _ := q.List()
	for i := range before {
		if after[i].ID != before[i].ID {
			t.Errorf("item %d: id %s became %s after its twin was claimed", i, before[i].ID, after[i].ID)
		}
	}
	if after[1].ClaimedBy != "me" || after[2].ClaimedBy != "" {
		t.Errorf("claimed by: %q, %q", after[1].ClaimedBy, after[2].ClaimedBy)
	}
}

func TestRoadmapDeepChainEscalates(t *testing.T) {
	dir := t.TempDir()
	s, err := LoadRoadmapState(filepath.Join(dir, "state.json"), "r.md")
	if err != nil {
		t.Fatal(err)
	}
	// top needs d1, d1 needs d2, d2 needs d3: three levels, followed.
	items := ParseRoadmap([]byte("1. `top` blocker: `d1`\n2. `d1` blocker: `d2`\n3. `d2` blocker: `d3`\n4. `d3`\n5. `next`\n"))
	w, unblocks, chain, ok := s.Next(items)
	if !ok || w.ID != "d3" || unblocks != "d2" || strings.Join(chain, ",") != "top,d1,d2,d3" {
		t.Fatalf("three levels: %q unblocking %q, chain %v", w.ID, unblocks, chain)
	}
	s.Take(w.ID, chain)
	if s.InProgress != "d3" || strings.Join(s.UnblockChain, ",") != "d1,d2,d3" || s.UnblockDepth != 2 {
		t.Errorf("taken: %q %v depth %d", s.InProgress, s.UnblockChain, s.UnblockDepth)
	}
	if f := s.Fresh(); len(f) != 0 {
		t.Errorf("escalations %v", f)
	}
	s.Done(items, "d3")
	if s.InProgress != "" || len(s.UnblockChain) != 0 {
		t.Errorf("done, yet in progress: %q %v", s.InProgress, s.UnblockChain)
	}
	// A fourth level: the item is escalated with its chain, and so is
	// what names it as its blocker; the next item is taken.
	items = ParseRoadmap([]byte("1. `top` blocker: `d1`\n2. `d1` blocker: `d2`\n3. `d2` blocker: `d3`\n4. `d3` blocker: `d4`\n5. `next`\n6. `after` blocker: `top`\n"))
	s2, _ := LoadRoadmapState(filepath.Join(dir, "s2.json"), "r2.md")
	w, _, _, ok = s2.Next(items)
	if !ok || w.ID != "d4" {
		// d1's own chain (d2, d3, d4) is three levels deep: it is worked.
		t.Fatalf("after escalating top: %q (%v)", w.ID, ok)
	}
	f := s2.Fresh()
	if len(f) != 2 || f[0].ID != "top" || strings.Join(f[0].Chain, ",") != "top,d1,d2,d3,d4" || !strings.Contains(f[0].Reason, "blocker chain deeper than 2 levels: top → d1 → d2 → d3 → d4") || f[1].ID != "after" {
		t.Fatalf("escalations %+v", f)
	}
	if len(s2.Fresh()) != 0 {
		t.Error("Fresh forgets what it returned")
	}
	path := filepath.Join(dir, "escalated.md")
	if err := AppendEscalated(path, f, 7, "2026-01-02T03:04:05Z"); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if !strings.Contains(string(data), "## top escalated\n\n- reason: blocker chain deeper than 2 levels") || !strings.Contains(string(data), "- cycle: 7\n") || !strings.Contains(string(data), "- chain: top → d1 → d2 → d3 → d4\n") {
		t.Errorf("escalated.md:\n%s", data)
	}
}
