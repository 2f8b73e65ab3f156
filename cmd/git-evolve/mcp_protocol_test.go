package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
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
	block bool          // cycle finish waits to be cancelled
	ended chan struct{} // closed by a cycle finish cancelled
}

func (f *fakeRunner) run(ctx context.Context, args []string) ([]byte, []byte, int) {
	select {
	case f.ran <- args:
	default:
	}
	if f.block && args[0] == "cycle" && args[1] == "finish" {
		<-ctx.Done()
		close(f.ended)
		return nil, []byte("interrupted"), 1
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
			var batch []map[string]any
			if json.Unmarshal(sc.Bytes(), &batch) == nil && len(batch) > 0 {
				m = map[string]any{"jsonrpc": "2.0", "batch": []any{}}
				for _, r := range batch {
					if r["jsonrpc"] != "2.0" {
						m["not JSON-RPC 2.0"] = sc.Text()
					}
					m["batch"] = append(m["batch"].([]any), r)
				}
			} else if err := json.Unmarshal(sc.Bytes(), &m); err != nil || m["jsonrpc"] != "2.0" {
				m = map[string]any{"not JSON-RPC 2.0": sc.Text()} // next fails on it
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
		if bad, ok := m["not JSON-RPC 2.0"]; ok {
			s.t.Fatalf("not a JSON-RPC 2.0 line: %q", bad)
		}
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
		{`[]`, nil, rpcInvalidRequest, nil},
		{`[{"jsonrpc":"2.0","id":9,"method":"ping"`, nil, rpcParseError, nil},
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
				var ran []string
				select {
				case ran = <-runner.ran:
				default:
				}
				return r["isError"] == nil && sc["cycle"] == 7.0 && text(r) == `{"cycle":7}` && slices.Equal(ran, []string{"log", "--json", "-n", "2"})
			}},
		{`{"jsonrpc":"2.0","id":13,"method":"tools/list"}`, 13.0, 0,
			func(r map[string]any) bool { tools, _ := r["tools"].([]any); return len(tools) == len(mcpTools) }},
		{`{"jsonrpc":"2.0","id":14,"method":"resources/read","params":{"uri":"evolve://cycle/x"}}`, 14.0, rpcInvalidParams,
			func(e map[string]any) bool {
				data, _ := e["data"].(map[string]any)
				return e["message"] == "Resource not found" && data["uri"] == "evolve://cycle/x"
			}},
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
		if st.want != nil {
			res, _ := m["result"].(map[string]any)
			if st.code != 0 {
				res, _ = m["error"].(map[string]any)
			}
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
	runner := &fakeRunner{ran: make(chan []string, 16), out: `{}`, block: true, ended: make(chan struct{})}
	s := newMCPSession(t, runner.run)
	s.send(`{"jsonrpc":"2.0","id":"f","method":"tools/call","params":{"name":"cycle_finish"}}`)
	<-runner.ran // running, until cancelled
	s.send(`{"jsonrpc":"2.0","id":"f","method":"ping"}`)
	if m := s.next(); m["id"] != nil || errCode(m) != rpcInvalidRequest {
		t.Fatalf("a second request with the id of one running: %v (want an error with no id)", m)
	}
	// Cancelled, the command ends and the request is not answered: the
	// next line is the ping's.
	s.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"f","reason":"enough"}}`)
	select {
	case <-runner.ended:
	case <-time.After(time.Minute):
		t.Fatal("the cancelled command did not end")
	}
	s.send(`{"jsonrpc":"2.0","id":"p","method":"ping"}`)
	if m := s.next(); m["id"] != "p" {
		t.Fatalf("after a cancellation: %v (want the ping's answer only)", m)
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
			var ms []map[string]any
			if json.Unmarshal([]byte(l), &ms) != nil || len(ms) == 0 { // not a batch's answers
				var m map[string]any
				if err := json.Unmarshal([]byte(l), &m); err != nil {
					t.Fatalf("not JSON: %q", l)
				}
				ms = []map[string]any{m}
			}
			for _, m := range ms {
				if _, ok := m["id"]; !ok || m["jsonrpc"] != "2.0" {
					t.Fatalf("not JSON-RPC 2.0: %q", l)
				}
			}
		}
	})
}

// A batch (an array of messages, as clients of the 2025-03-26 version send)
// is answered with one array: an answer for each request, none for the
// notifications, in order; a batch of notifications alone gets no line.
func TestMCPBatch(t *testing.T) {
	runner := &fakeRunner{ran: make(chan []string, 16), out: `{"cycle":3}`}
	s := newMCPSession(t, runner.run)
	s.send(`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},` +
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"status"}},{"jsonrpc":"2.0","id":3,"method":"nope"},7]`)
	s.send(`[{"jsonrpc":"2.0","method":"notifications/initialized"}]`)
	s.send(`{"jsonrpc":"2.0","id":4,"method":"ping"}`)
	// Two lines, in either order: the batch's array and the ping's answer.
	var got, single []string
	for i := 0; i < 2; i++ {
		m := s.next()
		if batch, ok := m["batch"].([]any); ok {
			for _, e := range batch {
				r := e.(map[string]any)
				got = append(got, fmt.Sprintf("%v:%d", r["id"], errCode(r)))
			}
			continue
		}
		single = append(single, fmt.Sprintf("%v:%d", m["id"], errCode(m)))
	}
	want := fmt.Sprintf("1:0 2:0 3:%d <nil>:%d", rpcMethodNotFound, rpcInvalidRequest)
	if strings.Join(got, " ") != want || strings.Join(single, " ") != "4:0" {
		t.Errorf("the batch answered %q and the lines after it %q; want %q and \"4:0\"", strings.Join(got, " "), strings.Join(single, " "), want)
	}
}
