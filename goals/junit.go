package goals

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
)

// maxXMLDepth bounds how deep the elements of a JUnit report may nest.
const maxXMLDepth = 64

// ErrNotJUnit is returned by JUnitCases for data that is no JUnit XML
// report: it does not start with an element, its root element is neither
// <testsuites> nor <testsuite>, or it breaks before its root.
var ErrNotJUnit = errors.New("not a JUnit XML report")

// JUnitCases reads a JUnit XML report as pytest --junitxml, jest-junit,
// vitest and node --test-reporter=junit write it, and calls fn for each
// <testcase> in document order with its classname and name attributes
// (either may be empty) and its outcome: Skip when it has a <skipped>
// child (node writes a failing todo test as both skipped and failure),
// else Fail when it has a <failure> or <error> child, else Pass. The
// testcases are those in <testsuite> elements, nested or not, under a
// <testsuites> or <testsuite> root; a testcase inside a testcase, and
// what is deeper than a testcase's children, are part of that testcase
// and count for nothing. Callers decide what a repeated name means.
//
// It returns ErrNotJUnit (wrapped, with why) for data that is no JUnit
// report, and another error for a report that is not well-formed XML (one
// cut short included), has a second root element, or nests elements
// deeper than 64: fn may have been called before such an error. It reads
// nothing but data: no entity is defined beyond XML's own five, nothing
// external is fetched, and the document is decoded as a stream.
func JUnitCases(data []byte, fn func(classname, name, outcome string)) error {
	if t := bytes.TrimLeft(bytes.TrimPrefix(data, []byte("\ufeff")), " \t\r\n"); len(t) == 0 || t[0] != '<' {
		return fmt.Errorf("%w: it does not start with an element", ErrNotJUnit)
	}
	d := xml.NewDecoder(bytes.NewReader(data))
	depth, root := 0, false
	var tc struct {
		depth           int // 0 outside a testcase
		class, name     string
		failed, skipped bool
	}
	for {
		tok, err := d.Token()
		if err == io.EOF {
			switch {
			case !root:
				return fmt.Errorf("%w: no root element", ErrNotJUnit)
			case depth > 0:
				return io.ErrUnexpectedEOF
			}
			return nil
		}
		if err != nil {
			if !root {
				return fmt.Errorf("%w: %v", ErrNotJUnit, err)
			}
			return err
		}
		switch el := tok.(type) {
		case xml.StartElement:
			if depth == 0 {
				if root {
					return errors.New("a second root element")
				}
				if el.Name.Local != "testsuites" && el.Name.Local != "testsuite" {
					return fmt.Errorf("%w: the root element is %s, neither testsuites nor testsuite", ErrNotJUnit, el.Name.Local)
				}
				root = true
			}
			depth++
			if depth > maxXMLDepth {
				return fmt.Errorf("elements nested deeper than %d", maxXMLDepth)
			}
			switch {
			case el.Name.Local == "testcase" && tc.depth == 0:
				tc.depth, tc.failed, tc.skipped = depth, false, false
				tc.class, tc.name = caseNames(el.Attr)
			case tc.depth > 0 && depth == tc.depth+1:
				switch el.Name.Local {
				case "failure", "error":
					tc.failed = true
				case "skipped":
					tc.skipped = true
				}
			}
		case xml.EndElement:
			if depth == tc.depth {
				outcome := Pass
				if tc.skipped {
					outcome = Skip
				} else if tc.failed {
					outcome = Fail
				}
				fn(tc.class, tc.name, outcome)
				tc.depth = 0
			}
			depth--
		}
	}
}

// caseNames are a testcase's classname and name attributes (without a
// namespace).
func caseNames(attrs []xml.Attr) (class, name string) {
	for _, a := range attrs {
		if a.Name.Space != "" {
			continue
		}
		switch a.Name.Local {
		case "classname":
			class = a.Value
		case "name":
			name = a.Value
		}
	}
	return class, name
}
