package goals

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestJUnitCases(t *testing.T) {
	doc := `<?xml version="1.0"?>
<testsuites>
  <testsuite name="s">
    <testcase classname="c" name="ok"/>
    <testcase classname="c" name="fails"><failure/></testcase>
    <testcase name="errs"><error/><system-out>ok</system-out></testcase>
    <testcase classname="c" name="todo"><skipped/><failure/></testcase>
    <testsuite name="nested"><testcase classname="n"/></testsuite>
    <testcase classname="outer"><testcase name="inner"><failure/></testcase><x><failure/></x></testcase>
    <testcase x:name="ns" xmlns:x="urn:x"/>
  </testsuite>
</testsuites>`
	var got []string
	err := JUnitCases([]byte(doc), func(class, name, outcome string) {
		got = append(got, class+"|"+name+"|"+outcome)
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"c|ok|pass", "c|fails|fail", "|errs|fail", "c|todo|skip", "n||pass", "outer||pass", "||pass"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("cases %q, want %q", got, want)
	}
	for _, tt := range []struct {
		name, doc string
		notJUnit  bool
		err       string
	}{
		{"text", "lines: 120\n", true, "does not start with an element"},
		{"empty", "", true, ""},
		{"another root", `<html><testcase name="a"/></html>`, true, "the root element is html"},
		{"broken before the root", `<?xml version="1.0" encoding="ISO-8859-1"?><testsuites/>`, true, ""},
		{"a comment alone", `<!-- nothing -->`, true, "no root element"},
		{"cut short", `<testsuites><testcase name="a"/>`, false, ""},
		{"a second root", `<testsuites/><testsuites/>`, false, "a second root element"},
		{"too deep", "<testsuites>" + strings.Repeat("<x>", 64) + strings.Repeat("</x>", 64) + "</testsuites>", false, "nested deeper than 64"},
		{"an entity", `<testsuites><testcase name="&nbsp;"/></testsuites>`, false, ""},
	} {
		err := JUnitCases([]byte(tt.doc), func(_, _, _ string) {})
		switch {
		case err == nil:
			t.Errorf("%s: no error", tt.name)
		case errors.Is(err, ErrNotJUnit) != tt.notJUnit:
			t.Errorf("%s: %v, want not JUnit %v", tt.name, err, tt.notJUnit)
		case !strings.Contains(err.Error(), tt.err):
			t.Errorf("%s: %v, want %q", tt.name, err, tt.err)
		}
	}
}
