package queue

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"unicode/utf8"
)

func TestEditObjectKeepsOrderAndEscaping(t *testing.T) {
	in := []byte(`{"z": 1, "a":"x \u003c y", "m" : [1, 2], "gone":true}`)
	out, err := editObject(in, map[string]json.RawMessage{"m": marshal("<new>"), "gone": nil, "add": marshal(2)}, []string{"m", "gone", "add"})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"z":1,"a":"x \u003c y","m":"<new>","add":2}`
	if string(out) != want {
		t.Fatalf("got %s\nwant %s", out, want)
	}
}

func TestEditLineChangesOnlyTheItem(t *testing.T) {
	raw := []byte(" {\"b\":1, \"items\": [ {\"x\":1} ,{\"y\":2}], \"a\":\"<\"}\r\n")
	out, err := editLine(raw, map[int][]byte{1: []byte(`{"y":3}`)})
	if err != nil {
		t.Fatal(err)
	}
	if want := " {\"b\":1, \"items\": [ {\"x\":1} ,{\"y\":3}], \"a\":\"<\"}\r\n"; string(out) != want {
		t.Fatalf("got %q\nwant %q", out, want)
	}
	if _, err := editLine([]byte(`{"a":1}`), map[int][]byte{0: []byte(`{}`)}); err == nil {
		t.Fatal("an entry without items was edited")
	}
}

// FuzzEdit: for any object, editObject gives JSON that means the object
// with the changes made, and editLine with no edits gives the line back.
func FuzzEdit(f *testing.F) {
	f.Add([]byte(`{"items":[{"a":1},{"b":"<"}],"c":true}`), "a", "v")
	f.Add([]byte(`{"a":1,"a":2}`), "a", "")
	f.Add([]byte(` { "items" : [ ] } `), "items", "x")
	f.Fuzz(func(t *testing.T, data []byte, key, val string) {
		if !utf8.ValidString(key) {
			return // the keys set are the tool's own
		}
		var before map[string]json.RawMessage
		if json.Unmarshal(data, &before) != nil || before == nil {
			return
		}
		set := map[string]json.RawMessage{key: nil}
		if val != "" {
			set[key] = marshal(val)
		}
		out, err := editObject(bytes.TrimSpace(data), set, []string{key})
		if err != nil {
			t.Fatalf("editObject(%q): %v", data, err)
		}
		var got, want map[string]any
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("editObject(%q) = %q: not JSON: %v", data, out, err)
		}
		_ = json.Unmarshal(data, &want)
		if val == "" {
			delete(want, key)
		} else {
			var v any // as JSON has it: invalid UTF-8 becomes U+FFFD
			_ = json.Unmarshal(marshal(val), &v)
			want[key] = v
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("editObject(%q) = %q, means %v, want %v", data, out, got, want)
		}
		if _, ok := before["items"]; ok {
			if same, err := editLine(data, map[int][]byte{}); err == nil && !bytes.Equal(same, data) {
				t.Fatalf("editLine with no edits changed %q to %q", data, same)
			}
		}
	})
}
