package goals

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
)

// docs/goals.md and docs/goals.schema.json describe every key the parser
// knows, at the level it knows it.
func TestGoalsDocumented(t *testing.T) {
	src, err := os.ReadFile("file.go")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../docs/goals.md")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile("../docs/goals.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Defs       struct {
			Goal struct {
				Properties map[string]json.RawMessage `json:"properties"`
			} `json:"goal"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(raw, &schema); err != nil {
		t.Fatalf("docs/goals.schema.json: %v", err)
	}
	// The keys each parsing function takes: its case labels.
	keysOf := func(fn string) []string {
		i := strings.Index(string(src), "func (p *parser) "+fn+"(")
		if fn == "" {
			i = strings.Index(string(src), "var goalsNode *yaml.Node")
		}
		if i < 0 {
			t.Fatalf("no %q in file.go", fn)
		}
		body := string(src[i:])
		if j := strings.Index(body[1:], "\nfunc "); j >= 0 {
			body = body[:j]
		}
		var out []string
		for _, m := range regexp.MustCompile(`case "([a-z_]+)":`).FindAllStringSubmatch(body, -1) {
			out = append(out, m[1])
		}
		if len(out) == 0 {
			t.Fatalf("no keys found for %q: the test no longer reads file.go", fn)
		}
		return out
	}
	level := map[string]map[string]json.RawMessage{
		"":           schema.Properties,
		"goal":       schema.Defs.Goal.Properties,
		"continuous": nil,
		"gate":       nil,
	}
	var cont, gate struct {
		Properties map[string]json.RawMessage `json:"properties"`
		OneOf      []struct {
			Properties map[string]json.RawMessage `json:"properties"`
		} `json:"oneOf"`
	}
	json.Unmarshal(schema.Defs.Goal.Properties["continuous"], &cont)
	json.Unmarshal(schema.Properties["gate"], &gate)
	level["continuous"] = cont.Properties
	for _, o := range gate.OneOf {
		if o.Properties != nil {
			level["gate"] = o.Properties
		}
	}
	for fn, props := range level {
		for _, key := range keysOf(fn) {
			if !strings.Contains(string(doc), "| `"+key+"` |") {
				t.Errorf("docs/goals.md does not describe %s key %q", orTop(fn), key)
			}
			if _, ok := props[key]; !ok {
				t.Errorf("docs/goals.schema.json has no %s key %q", orTop(fn), key)
			}
		}
	}
}

func orTop(fn string) string {
	if fn == "" {
		return "top-level"
	}
	return fn
}
