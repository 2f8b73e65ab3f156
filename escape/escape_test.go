package escape

import (
	"bytes"
	"html"
	"regexp"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	gmhtml "github.com/yuin/goldmark/renderer/html"
)

// hostile is text a record, a commit subject, a check's output or a queue
// item could hold, written to be acted on by a Markdown renderer or a
// forge.
var hostile = []struct{ name, s string }{
	{"plain", "fix the flaky test"},
	{"script tag", `<script>alert(1)</script>`},
	{"img onerror", `<img src=x onerror=alert(1)>`},
	{"svg onload", `<svg onload=alert(1)>`},
	{"attribute in a link tag", `<a href="javascript:alert(1)">click</a>`},
	{"closing tag", `</td></tr></table><h1>owned</h1>`},
	{"html comment", `before <!-- hidden --> after`},
	{"processing instruction and cdata", `<?php x ?> <![CDATA[y]]> <!DOCTYPE html>`},
	{"entities", `&lt;script&gt; &amp; &#60;b&#62; &#x3C;i&#x3E; &copy;`},
	{"link", `[click me](https://evil.example/x)`},
	{"image", `![x](https://evil.example/x.png)`},
	{"reference definition", `[ref]: https://evil.example/`},
	{"reference link", `[text][ref] and [ref]`},
	{"autolink", `<https://evil.example/> <mail@evil.example>`},
	{"bare address", `see https://evil.example/path?q=1 now`},
	{"www address", `see www.evil.example today, WWW.EVIL.EXAMPLE`},
	{"email", `write to mallory@evil.example`},
	{"mailto", `mailto:x@evil.example`},
	{"backticks", "`code` and ``two`` and a lone `"},
	{"code fence", "```\nfenced\n```"},
	{"tilde fence", "~~~\nfenced\n~~~"},
	{"pipes", `a | b || c |`},
	{"table in text", "|a|b|\n|-|-|\n|c|d|"},
	{"newlines", "line one\nline two\n\n# a heading"},
	{"emphasis", `*em* **strong** _u_ __uu__ ~~strike~~ ~single~`},
	{"heading", `# owned`},
	{"heading two", `## owned ##`},
	{"setext", "title\n==="},
	{"underline alone", `===`},
	{"thematic breaks", `***`},
	{"dash break", `- - -`},
	{"list item", `- item`},
	{"plus item", `+ item`},
	{"ordered item", `1. first`},
	{"ordered paren", `12) twelfth`},
	{"star item", `* starred`},
	{"task", `[ ] task [x] done`},
	{"footnote", `text[^1] [^1]: note`},
	{"quote", `> quoted`},
	{"alert", `> [!WARNING] trust me`},
	{"mention", `@octocat`},
	{"team mention", `cc @org/team please`},
	{"issue reference", `fixes #123`},
	{"cross reference", `owner/repo#123 and GH-42 and gh-7`},
	{"math", `$x^2$ and $$y$$`},
	{"backslashes", `\*not em\* and a trailing \`},
	{"indented", `    indented code`},
	{"tab", "\tindented by a tab"},
	{"escape sequences", "\x1b[2J\x1b]0;title\x07\r\x00end"},
	{"c1 control", "a\u0085b\u009bc"},
	{"bidi override", "abc\u202egnp.exe"},
	{"zero width", "zero\u200bwidth\ufeff"},
	{"line separator", "one\u2028two\u2029three"},
	{"invalid utf-8", "bad \xff\xfe bytes \xc3"},
	{"long", strings.Repeat(`<b>*x*</b>[a](b) @c #1 `, 4000)},
	{"html block start", "<div>\n*still html*\n</div>"},
	{"emoji", `:+1: :smile:`},
	{"unicode", `日本語 ünïcödé — “quotes”`},
}

// clip is text short enough for a test's message.
func clip(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

// shown is what text looks like once rendered: on one line, its control
// and format characters escaped.
func shown(s string) string { return controls(strings.ReplaceAll(s, "\n", " "), "", true) }

func render(t *testing.T, src string) string {
	t.Helper()
	md := goldmark.New(goldmark.WithExtensions(extension.GFM, extension.Footnote),
		goldmark.WithRendererOptions(gmhtml.WithUnsafe())) // raw HTML passed through, to be seen
	var out bytes.Buffer
	if err := md.Convert([]byte(src), &out); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

var tag = regexp.MustCompile(`<[^>]*>`)

// forgeActive finds, in rendered text, what a forge links after rendering:
// mentions, issue references, web and e-mail addresses.
var forgeActive = regexp.MustCompile(`@[A-Za-z0-9]|#[0-9]|(?i:gh-[0-9])|://|(?i:www\.)`)

// text checks that rendered HTML holds exactly the tags want (in order)
// and returns its text.
func text(t *testing.T, rendered string, want ...string) string {
	t.Helper()
	tags := tag.FindAllString(rendered, -1)
	if strings.Join(tags, "") != strings.Join(want, "") {
		t.Fatalf("rendered with tags %q, want %q:\n%s", clip(strings.Join(tags, "")), want, clip(rendered))
	}
	return html.UnescapeString(tag.ReplaceAllString(rendered, ""))
}

// TestMarkdownStaysText renders each hostile text, escaped, where the tool
// writes text (a paragraph's start, a list item, a heading, a table cell)
// with a CommonMark and GitHub Flavored Markdown renderer: only the tags of
// the place come out, the text reads as it was written (on one line, its
// controls escaped), and nothing a forge links later is left in it.
func TestMarkdownStaysText(t *testing.T) {
	places := []struct {
		name   string
		before string
		after  string
		tags   []string
	}{
		{"paragraph", "", "\n", []string{"<p>", "</p>"}},
		{"list item", "- ", "\n", []string{"<ul>", "<li>", "</li>", "</ul>"}},
		{"heading", "# Evolve cycle 1: ", "\n", []string{"<h1>", "</h1>"}},
		{"table cell", "| a | b |\n|---|---|\n| ", " | end |\n",
			[]string{"<table>", "<thead>", "<tr>", "<th>", "</th>", "<th>", "</th>", "</tr>", "</thead>",
				"<tbody>", "<tr>", "<td>", "</td>", "<td>", "</td>", "</tr>", "</tbody>", "</table>"}},
	}
	for _, h := range hostile {
		for _, p := range places {
			t.Run(h.name+"/"+p.name, func(t *testing.T) {
				esc := Markdown(h.s)
				if strings.ContainsAny(esc, "<>\n") {
					t.Fatalf("Markdown(%q) = %q: holds < > or a newline", clip(h.s), clip(esc))
				}
				got := text(t, render(t, p.before+esc+p.after), p.tags...)
				if forgeActive.MatchString(got) {
					t.Errorf("rendered text %q holds what a forge links: %q", clip(got), forgeActive.FindString(got))
				}
				got = strings.ReplaceAll(got, "\u200b", "")
				want := shown(h.s)
				switch p.name {
				case "heading":
					want = "Evolve cycle 1: " + want
				case "table cell":
					want = "a b " + want + " end"
				}
				// A renderer drops the spaces that end a line and those
				// around a cell.
				norm := func(s string) string { return strings.Join(strings.Fields(s), " ") }
				if norm(got) != norm(want) {
					t.Errorf("rendered as\n%q\nwant\n%q\n(escaped: %q)", clip(got), clip(want), clip(esc))
				}
			})
		}
	}
}

// TestMarkdownLinesStayText renders each hostile text, escaped line by
// line, as a block of its own: paragraphs only, whose text is the lines'.
func TestMarkdownLinesStayText(t *testing.T) {
	for _, h := range hostile {
		t.Run(h.name, func(t *testing.T) {
			r := render(t, MarkdownLines(h.s)+"\n")
			var want []string
			for _, l := range strings.Split(h.s, "\n") {
				if strings.TrimSpace(l) != "" {
					want = append(want, "<p>", "</p>")
				}
			}
			// consecutive lines are one paragraph
			tags := strings.ReplaceAll(strings.Join(tag.FindAllString(r, -1), ""), "</p><p>", "")
			if tags != "" && tags != "<p></p>" && !strings.Contains(h.s, "\n\n") {
				t.Fatalf("rendered with tags %q:\n%s", clip(tags), clip(r))
			}
			for _, tg := range tag.FindAllString(r, -1) {
				if tg != "<p>" && tg != "</p>" {
					t.Fatalf("rendered with tag %q:\n%s", tg, clip(r))
				}
			}
			got := html.UnescapeString(tag.ReplaceAllString(r, ""))
			if forgeActive.MatchString(got) {
				t.Errorf("rendered text %q holds what a forge links", clip(got))
			}
			got = strings.ReplaceAll(got, "\u200b", "")
			wantText := controls(h.s, "\n", true)
			if norm := func(s string) string { return strings.Join(strings.Fields(s), " ") }; norm(got) != norm(wantText) {
				t.Errorf("rendered as\n%q\nwant\n%q", clip(got), clip(wantText))
			}
		})
	}
}

// TestCodeStaysCode renders each hostile text as a code span and as a
// fenced block, also inside a list item: one code element, holding the
// text as it was.
func TestCodeStaysCode(t *testing.T) {
	code := regexp.MustCompile(`(?s)<code>(.*)</code>`)
	inner := func(rendered string) string { return html.UnescapeString(code.FindStringSubmatch(rendered)[1]) }
	for _, h := range hostile {
		t.Run(h.name, func(t *testing.T) {
			r := render(t, "check: "+Code(h.s)+"\n")
			text(t, r, "<p>", "<code>", "</code>", "</p>")
			if got, want := inner(r), shown(h.s); got != want {
				t.Errorf("code span rendered as\n%q\nwant\n%q", clip(got), clip(want))
			}
			want := controls(h.s, "\t\n", true) + "\n"
			r = render(t, CodeBlock(h.s, ""))
			text(t, r, "<pre>", "<code>", "</code>", "</pre>")
			if got := inner(r); got != want {
				t.Errorf("block rendered as\n%q\nwant\n%q", clip(got), clip(want))
			}
			r = render(t, "- item\n\n"+CodeBlock(h.s, "  "))
			text(t, r, "<ul>", "<li>", "<p>", "</p>", "<pre>", "<code>", "</code>", "</pre>", "</li>", "</ul>")
			if got := inner(r); got != want {
				t.Errorf("block in a list item rendered as\n%q\nwant\n%q", clip(got), clip(want))
			}
		})
	}
}

func TestTerminal(t *testing.T) {
	for _, c := range []struct{ in, term, line string }{
		{"plain", "plain", "plain"},
		{"a\tb\nc", "a\tb\nc", `a\x09b\x0ac`},
		{"\x1b[2J\r", `\x1b[2J\x0d`, `\x1b[2J\x0d`},
		{"\u0085", `\u0085`, `\u0085`},
		{"bad\xff", "bad\ufffd", "bad\ufffd"},
		{"abc\u202e", "abc\u202e", "abc\u202e"}, // format characters are Markdown's concern
	} {
		if got := Terminal(c.in); got != c.term {
			t.Errorf("Terminal(%q) = %q, want %q", c.in, got, c.term)
		}
		if got := TerminalLine(c.in); got != c.line {
			t.Errorf("TerminalLine(%q) = %q, want %q", c.in, got, c.line)
		}
	}
}

func FuzzMarkdown(f *testing.F) {
	for _, h := range hostile {
		f.Add(h.s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		esc := Markdown(s)
		if strings.ContainsAny(esc, "<>\n\x00\x1b") {
			t.Fatalf("Markdown(%q) = %q", s, esc)
		}
		got := text(t, render(t, "- "+esc+"\n"), "<ul>", "<li>", "</li>", "</ul>")
		got = strings.ReplaceAll(got, "\u200b", "")
		if norm := func(s string) string { return strings.Join(strings.Fields(s), " ") }; norm(got) != norm(shown(s)) {
			t.Fatalf("Markdown(%q) rendered as %q", s, got)
		}
	})
}
