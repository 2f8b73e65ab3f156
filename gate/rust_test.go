package gate

import (
	"bytes"
	"strings"
	"testing"
)

const rustLib = `//! A crate that adds.

pub fn add(a: i32, b: i32) -> i32 {
    a + b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds() {
        assert_eq!(add(1, 2), 3);
    }
}
`

// The test modules of a Rust file, by name: what the scanner finds, and
// the files it does not read surely (nil).
func TestRustTestBlocks(t *testing.T) {
	for _, tt := range []struct {
		name, src string
		want      []string // each block's text; nil: not read
	}{
		{"a lib", rustLib, []string{"#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn adds() {\n        assert_eq!(add(1, 2), 3);\n    }\n}"}},
		{"no tests", "pub fn f() {}\n", []string{}},
		{"attributes, comments and a visibility between",
			"#[allow(unused)] /* c */ #[cfg(test)]\n/// doc\n#[path_thing = \"x\"] pub(crate) mod t { fn x() {} }",
			[]string{"#[allow(unused)] /* c */ #[cfg(test)]\n/// doc\n#[path_thing = \"x\"] pub(crate) mod t { fn x() {} }"}},
		{"spaced attribute", "# [ cfg ( test ) ] mod t {}", []string{"# [ cfg ( test ) ] mod t {}"}},
		{"an inner cfg(test)", "mod t { #![allow(x)] #![cfg(test)] fn a() {} }", []string{"mod t { #![allow(x)] #![cfg(test)] fn a() {} }"}},
		{"not a module", "#[cfg(test)] fn helper() {}\n#[cfg(test)] mod tests;\n#[cfg(not(test))] mod real {}\n#[cfg(all(test, unix))] mod u {}", []string{}},
		{"nested, outermost only", "mod a { #[cfg(test)] mod t { #[cfg(test)] mod inner {} } }\nmod b { #[cfg(test)] mod t {} }",
			[]string{"#[cfg(test)] mod t { #[cfg(test)] mod inner {} }", "#[cfg(test)] mod t {}"}},
		{"braces in literals and comments",
			"#[cfg(test)] mod t { const A: &str = \"}\\\"}\"; const B: char = '}'; const C: char = '\\''; const D: &str = r#\"}\"# ; // }\n /* } /* } */ } */ const E: &[u8] = b\"}\"; const F: u8 = b'{'; const G: &str = r##\"\"#}\"##; const H: &str = br\"}\"; }",
			[]string{"#[cfg(test)] mod t { const A: &str = \"}\\\"}\"; const B: char = '}'; const C: char = '\\''; const D: &str = r#\"}\"# ; // }\n /* } /* } */ } */ const E: &[u8] = b\"}\"; const F: u8 = b'{'; const G: &str = r##\"\"#}\"##; const H: &str = br\"}\"; }"}},
		{"lifetimes are no char literals", "fn f<'a>(x: &'a str) -> &'a str { 'outer: loop { break 'outer; } x }\n#[cfg(test)] mod t { fn g(_: &'static str) {} const U: char = '\\u{7D}'; const V: char = 'é'; }",
			[]string{"#[cfg(test)] mod t { fn g(_: &'static str) {} const U: char = '\\u{7D}'; const V: char = 'é'; }"}},
		{"a raw identifier", "fn r#match() {} #[cfg(test)] mod r#tests {}", []string{"#[cfg(test)] mod r#tests {}"}},
		{"a shebang", "#!/usr/bin/env rust-script\n#[cfg(test)] mod t {}", []string{"#[cfg(test)] mod t {}"}},
		{"an inner attribute first", "#![cfg(test)]\n#[cfg(test)] mod t {}", []string{"#[cfg(test)] mod t {}"}},
		{"a string not closed", "fn f() { \"} }", nil},
		{"a raw string not closed", "fn f() { r#\"}\" }", nil},
		{"a block comment not closed", "/* /* */ fn f() {}", nil},
		{"a brace not closed", "#[cfg(test)] mod t { fn f() {}", nil},
		{"a brace too many", "fn f() {}}", nil},
		{"delimiters crossed", "fn f() { ( } )", nil},
		{"a lone quote", "fn f() { ' }", nil},
		{"a char not closed", "fn f() { '\\u{7D", nil},
	} {
		blocks, _, ok := rustTestBlocks([]byte(tt.src))
		if tt.want == nil {
			if ok {
				t.Errorf("%s: read, blocks %+v; want it not read", tt.name, blocks)
			}
			continue
		}
		if !ok {
			t.Errorf("%s: not read", tt.name)
			continue
		}
		var got []string
		for _, b := range blocks {
			got = append(got, tt.src[b.start:b.end])
		}
		if strings.Join(got, "\x00") != strings.Join(tt.want, "\x00") || len(got) != len(tt.want) {
			t.Errorf("%s: blocks\n%q\nwant\n%q", tt.name, got, tt.want)
		}
	}
}

// A cycle that breaks add and edits the assertion of the test beside it
// is judged with the test as it was; the product is the cycle's.
func TestHeldRustTests(t *testing.T) {
	cheat := strings.Replace(strings.Replace(rustLib, "a + b", "a + b + 1", 1), "assert_eq!(add(1, 2), 3)", "assert_eq!(add(1, 2), 4)", 1)
	held, changed := HeldPart(RustTests, []byte(rustLib), []byte(cheat))
	if !changed {
		t.Fatal("an edited assertion is no change of the ruler")
	}
	if want := strings.Replace(rustLib, "a + b", "a + b + 1", 1); string(held) != want {
		t.Fatalf("held:\n%s\nwant:\n%s", held, want)
	}
	if !RestChanged(RustTests, []byte(rustLib), []byte(cheat)) {
		t.Error("the product changed too")
	}
	// The product alone changed: no change of the ruler.
	fix := strings.Replace(rustLib, "a + b", "b + a", 1)
	if held, changed := HeldPart(RustTests, []byte(rustLib), []byte(fix)); changed || string(held) != fix {
		t.Fatalf("a product change: changed %v, held:\n%s", changed, held)
	}
	// The tests alone changed, and white space and comments of the
	// product: nothing but the ruler.
	onlyTests := strings.Replace(strings.Replace(rustLib, "assert_eq!(add(1, 2), 3)", "assert!(true)", 1), "    a + b\n", "    a + b // sums\n", 1)
	if _, changed := HeldPart(RustTests, []byte(rustLib), []byte(onlyTests)); !changed || RestChanged(RustTests, []byte(rustLib), []byte(onlyTests)) {
		t.Errorf("only the tests: changed %v, rest changed %v", changed, RestChanged(RustTests, []byte(rustLib), []byte(onlyTests)))
	}
	// A module only the cycle has is taken out; one only the start has is
	// put back at the end.
	start := "fn a() {}\n#[cfg(test)] mod one { #[test] fn t() {} }\n#[cfg(test)] mod two {}\n"
	cycle := "fn a() {}\n#[cfg(test)] mod two {}\n#[cfg(test)] mod three { #[test] fn t() { assert!(true) } }\nfn b() {}\n"
	held, changed = HeldPart(RustTests, []byte(start), []byte(cycle))
	if want := "fn a() {}\n#[cfg(test)] mod two {}\n \nfn b() {}\n\n#[cfg(test)] mod one { #[test] fn t() {} }\n"; !changed || string(held) != want {
		t.Fatalf("modules added and removed: changed %v, held %q, want %q", changed, held, want)
	}
	// A file added: its test modules are left out.
	if held, changed := HeldPart(RustTests, nil, []byte(rustLib)); !changed || bytes.Contains(held, []byte("mod tests")) || !bytes.Contains(held, []byte("pub fn add")) {
		t.Fatalf("a file added: changed %v, held:\n%s", changed, held)
	}
	// What the scanner cannot read is not held, on either side.
	broken := cheat + "\nfn f() { \"}\n"
	for _, tc := range [][2]string{{rustLib, broken}, {broken, cheat}} {
		if held, changed := HeldPart(RustTests, []byte(tc[0]), []byte(tc[1])); changed || string(held) != tc[1] {
			t.Errorf("unread: changed %v, held:\n%s", changed, held)
		}
	}
	// Nor is a file too large.
	huge := cheat + strings.Repeat("// padding\n", MaxRulerPart/10)
	if held, changed := HeldPart(RustTests, []byte(rustLib), []byte(huge)); changed || len(held) != len(huge) {
		t.Errorf("a file over %d bytes: changed %v", MaxRulerPart, changed)
	}
}

func TestRestChanged(t *testing.T) {
	pkg := `{"name":"a","scripts":{"test":"node --test"},"dependencies":{"x":"1"}}`
	for _, tc := range []struct {
		part         RulerPart
		start, cycle string
		want         bool
	}{
		{PackageScripts, pkg, `{"scripts":{"test":"echo PASS"}, "name":"a","dependencies":{ "x":"1" }}`, false},
		{PackageScripts, pkg, `{"name":"a","scripts":{"test":"echo PASS"},"dependencies":{"x":"2"}}`, true},
		{PackageScripts, pkg, `{"name":"a","scripts":{"test":"echo PASS"}}`, true},
		{PackageScripts, pkg, `{"name":`, false}, // held whole
		{ModReplaces, "module m\n\nreplace a => ../a\n", "module m\n\nreplace a => ./fake\n", false},
		{ModReplaces, "module m\n\nreplace a => ../a\n", "module m\n\nrequire b v1.0.0\n\nreplace a => ./fake\n", true},
		{RustTests, rustLib, strings.Replace(rustLib, "3);", "4);", 1), false},
		{RustTests, rustLib, strings.Replace(rustLib, "a + b", "a - b", 1), true},
		{RustTests, "", rustLib, true},
		{WholeFile, "a", "b", false},
	} {
		if got := RestChanged(tc.part, []byte(tc.start), []byte(tc.cycle)); got != tc.want {
			t.Errorf("RestChanged(%v, %q, %q) = %v, want %v", tc.part, tc.start, tc.cycle, got, tc.want)
		}
	}
}

func FuzzRustTestsHeld(f *testing.F) {
	f.Add(rustLib, strings.Replace(rustLib, "3);", "4);", 1))
	f.Add("#[cfg(test)] mod a {} #[cfg(test)] mod a { '}' }", "fn x() {} #[cfg(test)] mod b { \"}\" }")
	f.Add("r#\"{\"# #[cfg(test)] mod t { /* { */ }", "#[cfg(test)] mod t { 'a' } 'b")
	f.Add("# #[cfg(test)] mod t {}[cfg(test)] mod u {}", "#[cfg(test)] mod t {}")
	f.Fuzz(func(t *testing.T, start, cycle string) {
		held, changed := HeldPart(RustTests, []byte(start), []byte(cycle))
		if !changed && string(held) != cycle {
			t.Fatalf("unchanged, but the held file is not the cycle's")
		}
		if start == cycle && changed {
			t.Fatalf("the same file is a change")
		}
		if again, more := HeldPart(RustTests, []byte(start), held); more {
			t.Fatalf("the held file still differs in its tests:\nstart %q\ncycle %q\nheld %q\nagain %q", start, cycle, held, again)
		}
		RestChanged(RustTests, []byte(start), []byte(cycle))
	})
}
