package gate

import (
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

// The fuzz tests run their seeds (the fixtures and a few lines) under go
// test; go test -fuzz=FuzzParseTAP ./gate/ and the like search further.

// checkFuzzedCensus checks what every census promises, and that comparing
// it with itself finds nothing.
func checkFuzzedCensus(t *testing.T, c *Census) {
	t.Helper()
	checkCensus(t, c)
	if Dropped(c, c) || len(c.Vanished(c)) > 0 || len(c.Hidden(c)) > 0 || c.Summary() == "" {
		t.Errorf("a census compared with itself: dropped %v, vanished %v, hidden %v", Dropped(c, c), c.Vanished(c), c.Hidden(c))
	}
}

func FuzzParseGoTestJSON(f *testing.F) {
	f.Add(string(fixture(f, "go.json")))
	f.Add(string(fixture(f, "go-make.txt")))
	f.Add("{\"Action\":\"run\",\"Package\":\"p\",\"Test\":\"TestA\"}\nplain\r\n{\"Action\":\"pass\",\"Package\":\"p\",\"Test\":\"TestA\"}")
	f.Fuzz(func(t *testing.T, in string) {
		var text strings.Builder
		c, err := ParseGoTestJSON(strings.NewReader(in), &text)
		if err != nil {
			t.Fatal(err)
		}
		checkFuzzedCensus(t, c)
		// Read a byte at a time, the same.
		var text1 strings.Builder
		c1, err := ParseGoTestJSON(iotest.OneByteReader(strings.NewReader(in)), &text1)
		if err != nil || !reflect.DeepEqual(c, c1) || text.String() != text1.String() {
			t.Fatalf("read a byte at a time: %v, %+v, %q; read whole: %+v, %q", err, c1, text1.String(), c, text.String())
		}
		// A line that cannot be an event is copied whole.
		for line := range strings.Lines(in) {
			if !strings.HasPrefix(line, "{") && len(line) < maxLine && !strings.Contains(text.String(), line) {
				t.Fatalf("text lacks the line %q", line)
			}
		}
	})
}

func FuzzParseJUnitXML(f *testing.F) {
	f.Add(fixture(f, "pytest.xml"))
	f.Add(fixture(f, "node-junit.xml"))
	f.Add([]byte(`<testsuite><testcase classname="c" name="n"><skipped/><failure/></testcase></testsuite>`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseJUnitXML(data)
		if err != nil {
			if c != nil {
				t.Fatalf("a census with the error %v", err)
			}
			return
		}
		checkFuzzedCensus(t, c)
	})
}

func FuzzParseCargoTest(f *testing.F) {
	f.Add(string(fixture(f, "cargo.txt")))
	f.Add(string(fixture(f, "cargo-exit.txt")))
	f.Add("running 2 tests\ntest a - should panic ... ok\ntest b ... ignored, slow\n")
	f.Fuzz(func(t *testing.T, out string) {
		checkFuzzedCensus(t, ParseCargoTest(out))
	})
}

func FuzzParseTAP(f *testing.F) {
	f.Add(string(fixture(f, "node.tap")))
	f.Add(string(fixture(f, "node-exit.tap")))
	f.Add("# Subtest: a\n    ok 1 - b \\# c # SKIP\n    ---\n    x: 1\n    ...\nnot ok 1 - a # TODO\n")
	f.Fuzz(func(t *testing.T, out string) {
		checkFuzzedCensus(t, ParseTAP(out))
	})
}

func FuzzParseJestJSON(f *testing.F) {
	f.Add(fixture(f, "jest.json"), "/home/dev/app")
	f.Add(fixture(f, "vitest.json"), "/home/dev/app/")
	f.Add([]byte(`{"testResults":[{"name":"a","status":"failed","assertionResults":[{"title":"","fullName":"","status":"x"}]}]}`), "")
	f.Fuzz(func(t *testing.T, data []byte, root string) {
		c, err := ParseJestJSON(data, root)
		if err != nil {
			if c != nil {
				t.Fatalf("a census with the error %v", err)
			}
			return
		}
		checkFuzzedCensus(t, c)
	})
}
