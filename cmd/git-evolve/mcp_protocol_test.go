package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"slices"
	"strings"
	"testing"
	"time"
)

// fakeRunner answers every command with out, and records what it ran.
type fakeRunner struct {
	ran   chan []string
	out   string
	block bool // cycle finish waits to be cancelled
}

func (f *fakeRunner) run(ctx context.Context, args []string) ([]byte, []byte, int) {
	select {
	case f.ran <- args:
	default:
	}
	if f.block && args[0] == "cycle" && args[1] == "finish" {
		<-ctx.Done()
		return nil, []byte("interrupted"), 130
	}
	return []byte(f.out), nil, 0
}

// mcpSession runs the server on a pipe and reads its responses.
type mcpSession struct {
	t    *testing.T
	in   *io.PipeWriter
	out  chan map[string]any
	done chan error
}

func newMCPSession(t *testing.T, runner mcpRunner) *mcpSession {
	t.Helper()
	serverIn, in := io.Pipe()
	outR, serverOut := io.Pipe()
	s := &mcpSession{t: t, in: in, out: make(chan map[string]any, 16), done: make(chan error, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() {
		s.done <- newMCPServer(runner).serve(ctx, serverIn, serverOut)
		serverOut.Close()
	}()
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil || m["jsonrpc"] != "2.0" {
				t.Errorf("not a JSON-RPC 2.0 line: %q (%v)", sc.Text(), err)
			}
			s.out <- m
		}
		close(s.out)
	}()
	return s
}

func (s *mcpSession) send(line string) {
	s.t.Helper()
	if _, err := io.WriteString(s.in, line+"\n"); err != nil {
		s.t.Fatal(err)
	}
}

func (s *mcpSession) next() map[string]any {
	s.t.Helper()
	select {
	case m := <-s.out:
		return m
	case <-time.After(time.Minute):
		s.t.Fatal("no response")
		return nil
	}
}

// errCode is the error code of a response, 0 for a result.
func errCode(m map[string]any) int {
	e, _ := m["error"].(map[string]any)
	if e == nil {
		return 0
	}
	n, _ := e["code"].(float64)
	return int(n)
}

// TestMCPProtocol holds the server to JSON-RPC 2.0 and the protocol's
// lifecycle, message by message: the answers to what is malformed, the
// versions, notifications, unknown methods and tools, bad arguments,
// resources that are not there, and a line too long to read.
func TestMCPProtocol(t *testing.T) {
	runner := &fakeRunner{ran: make(chan []string, 16), out: `{"cycle":7}`}
	s := newMCPSession(t, runner.run)
	steps := []struct {
		send string
		id   any // the response's id; "none" when there is no response
		code int
		want func(res map[string]any) bool
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`, 1.0, 0,
			func(r map[string]any) bool {
				info, _ := r["serverInfo"].(map[string]any)
				caps, _ := r["capabilities"].(map[string]any)
				return r["protocolVersion"] == "2025-06-18" && info["name"] == "git-evolve" && caps["tools"] != nil && caps["resources"] != nil
			}},
		{`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"1999-01-01"}}`, 2.0, 0,
			func(r map[string]any) bool { return r["protocolVersion"] == mcpVersions[0] }},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, "none", 0, nil},
		{`{"jsonrpc":"2.0","id":"a","method":"ping"}`, "a", 0, func(r map[string]any) bool { return len(r) == 0 }},
		{`{"jsonrpc":"2.0","id":5,"result":{}}`, "none", 0, nil}, // a response to nothing asked
		{`not json`, nil, rpcParseError, nil},
		{`[{"jsonrpc":"2.0","id":9,"method":"ping"}]`, nil, rpcInvalidRequest, nil},
		{`"a string"`, nil, rpcInvalidRequest, nil},
		{`{"jsonrpc":"1.0","id":3,"method":"ping"}`, 3.0, rpcInvalidRequest, nil},
		{`{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}`, nil, rpcInvalidRequest, nil},
		{`{"jsonrpc":"2.0","id":4}`, 4.0, rpcInvalidRequest, nil},
		{`{"jsonrpc":"2.0","id":6,"method":"server/discover"}`, 6.0, rpcMethodNotFound, nil},
		{`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"stop"}}`, 7.0, rpcInvalidParams, nil},
		{`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":"x"}`, 8.0, rpcInvalidParams, nil},
		{`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"show","arguments":[1]}}`, 10.0, 0,
			func(r map[string]any) bool {
				return r["isError"] == true && strings.Contains(text(r), "not a JSON object")
			}},
		{`{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"show","arguments":{}}}`, 11.0, 0,
			func(r map[string]any) bool {
				return r["isError"] == true && strings.Contains(text(r), "a cycle number or a commit is needed")
			}},
		{`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"log","arguments":{"limit":2}}}`, 12.0, 0,
			func(r map[string]any) bool {
				sc, _ := r["structuredContent"].(map[string]any)
				return r["isError"] == nil && sc["cycle"] == 7.0 && text(r) == `{"cycle":7}` &&
					slices.Equal(<-runner.ran, []string{"log", "--json", "-n", "2"})
			}},
		{`{"jsonrpc":"2.0","id":13,"method":"tools/list"}`, 13.0, 0,
			func(r map[string]any) bool { tools, _ := r["tools"].([]any); return len(tools) == len(mcpTools) }},
		{`{"jsonrpc":"2.0","id":14,"method":"resources/read","params":{"uri":"evolve://cycle/x"}}`, 14.0, rpcInvalidParams,
			func(r map[string]any) bool { return true }},
		{`{"jsonrpc":"2.0","id":15,"method":"resources/templates/list"}`, 15.0, 0,
			func(r map[string]any) bool { l, _ := r["resourceTemplates"].([]any); return len(l) == 1 }},
		{`{"jsonrpc":"2.0","id":16,"method":"ping","params":` + strings.Repeat(" ", mcpMaxMessage) + `{}}`, nil, rpcParseError, nil},
		{`{"jsonrpc":"2.0","id":17,"method":"ping"}`, 17.0, 0, nil}, // read on after a line too long
	}
	for _, st := range steps {
		s.send(st.send)
		if st.id == "none" {
			continue
		}
		m := s.next()
		if m["id"] != st.id || errCode(m) != st.code {
			t.Fatalf("%.80s: got %v", st.send, m)
		}
		if st.want != nil && st.code == 0 {
			res, _ := m["result"].(map[string]any)
			if !st.want(res) {
				t.Fatalf("%.80s: got %v", st.send, m)
			}
		}
	}
	// A notification is never answered: the next line answered is the ping's.
	s.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}`)
	s.send(`{"jsonrpc":"2.0","id":18,"method":"ping"}`)
	if m := s.next(); m["id"] != 18.0 {
		t.Fatalf("after a notification: %v", m)
	}
	s.in.Close()
	if err := <-s.done; err != nil {
		t.Fatal(err)
	}
}

func text(r map[string]any) string {
	content, _ := r["content"].([]any)
	var b strings.Builder
	for _, c := range content {
		if m, _ := c.(map[string]any); m["type"] == "text" {
			b.WriteString(m["text"].(string))
		}
	}
	return b.String()
}

// TestMCPCancel: a notifications/cancelled ends the command of the request
// it names, which is answered; so is a request still running when the
// client closes its end.
func TestMCPCancel(t *testing.T) {
	runner := &fakeRunner{ran: make(chan []string, 16), out: `{}`, block: true}
	s := newMCPSession(t, runner.run)
	s.send(`{"jsonrpc":"2.0","id":"f","method":"tools/call","params":{"name":"cycle_finish"}}`)
	<-runner.ran // running, until cancelled
	s.send(`{"jsonrpc":"2.0","id":"f","method":"ping"}`)
	if m := s.next(); m["id"] != "f" || errCode(m) != rpcInvalidRequest {
		t.Fatalf("a second request with the id of one running: %v", m)
	}
	s.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"f","reason":"enough"}}`)
	m := s.next()
	if res, _ := m["result"].(map[string]any); m["id"] != "f" || res["isError"] != true || !strings.Contains(text(res), "interrupted") {
		t.Fatalf("the cancelled request: %v", m)
	}

	s.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"status"}}`)
	s.in.Close()
	if m := s.next(); m["id"] != 2.0 || errCode(m) != 0 {
		t.Fatalf("a request sent before the end of input: %v", m)
	}
	if err := <-s.done; err != nil {
		t.Fatal(err)
	}
}

// FuzzMCPMessage: whatever a line holds, the server answers it with at
// most one line, and that line is JSON-RPC 2.0.
func FuzzMCPMessage(f *testing.F) {
	for _, seed := range []string{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, `{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"log","arguments":{"limit":-1}}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`, `[]`, `{"id":1e400}`, "\x00\xff", `{"jsonrpc":"2.0","id":-0.5,"method":"resources/read","params":{"uri":"evolve://cycle/1"}}`} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, line string) {
		runner := &fakeRunner{ran: make(chan []string, 1), out: "{}"}
		var out strings.Builder
		if err := newMCPServer(runner.run).serve(context.Background(), strings.NewReader(line+"\n"), &out); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		if out.Len() == 0 {
			return
		}
		if len(lines) > strings.Count(line, "\n")+1 {
			t.Fatalf("%d lines for %d messages: %q", len(lines), strings.Count(line, "\n")+1, out.String())
		}
		for _, l := range lines {
			var m map[string]any
			if err := json.Unmarshal([]byte(l), &m); err != nil || m["jsonrpc"] != "2.0" {
				t.Fatalf("not JSON-RPC 2.0: %q", l)
			}
			if _, ok := m["id"]; !ok {
				t.Fatalf("no id: %q", l)
			}
		}
	})
}
