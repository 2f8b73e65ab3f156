package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// mcpServer is the protocol side of git evolve mcp: JSON-RPC 2.0 messages,
// one a line, on standard input and output (the Model Context Protocol's
// stdio transport; a line may also hold a batch, an array of them),
// answering the lifecycle, tools and resources requests with the tools and
// resources of mcp_cmd.go. It offers nothing else: no prompts, no logging,
// no subscriptions, no requests of its own.
//
// It is ours rather than the protocol's Go SDK because of what the SDK costs
// every git-evolve process, not only this one: its packages and what they
// import (net/http, JSON Schema, OAuth) took 2.4–3.4 ms of each start and 8
// MB of the binary (docs/benchmarks.md). The SDK's client stays the judge of
// this server in TestMCPServer.
type mcpServer struct {
	runner mcpRunner

	mu  sync.Mutex // out, inFlight
	out io.Writer
	// inFlight cancels a request being answered, by its id as sent.
	inFlight map[string]context.CancelCauseFunc
}

// mcpVersions are the protocol versions the server speaks, newest first:
// a client asking for another is answered with the newest, and decides.
// (Versions from 2026-07-28 on begin with server/discover, which a server
// of these versions answers as an unknown method; a client then falls back
// to initialize.)
var mcpVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// mcpMaxMessage bounds a message read: a longer line is read past and
// answered with a parse error. The largest a client sends is a tool's
// arguments.
const mcpMaxMessage = 4 << 20

// JSON-RPC's error codes.
const (
	rpcParseError     = -32700
	rpcInvalidRequest = -32600
	rpcMethodNotFound = -32601
	rpcInvalidParams  = -32602
	rpcInternalError  = -32603
)

type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *rpcError) Error() string { return e.Message }

// rpcMessage is what a line may hold: a request, a notification (no id),
// or a response (result or error, which this server never asked for).
type rpcMessage struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

type rpcResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

// serve answers the messages on in, writing to out, until in ends or ctx is
// cancelled; then it cancels the requests still being answered and waits
// for them.
func (s *mcpServer) serve(ctx context.Context, in io.Reader, out io.Writer) error {
	s.out = out
	s.inFlight = map[string]context.CancelCauseFunc{}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
	}()
	type line struct {
		data    []byte
		tooLong bool
		err     error
	}
	lines := make(chan line)
	go func() {
		br := bufio.NewReaderSize(in, 64<<10)
		for {
			data, tooLong, err := readMessage(br, mcpMaxMessage)
			select {
			case lines <- line{data, tooLong, err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case l := <-lines:
			if len(l.data) > 0 || l.tooLong {
				s.handle(ctx, &wg, l.data, l.tooLong)
			}
			if errors.Is(l.err, io.EOF) {
				// The client said all it will: what it asked is answered.
				wg.Wait()
				return nil
			}
			if l.err != nil {
				return l.err
			}
		}
	}
}

// readMessage reads one line of at most max bytes, without its newline; a
// longer one is read to its end and dropped (tooLong).
func readMessage(br *bufio.Reader, max int) (data []byte, tooLong bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			if len(data)+len(chunk) > max+1 {
				tooLong, data = true, nil
			} else {
				data = append(data, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimSuffix(data, []byte("\n")), tooLong, err
	}
}

// handle answers one line: a message, or a batch of them (an array, which
// the 2025-03-26 version of the protocol has clients send). What is
// malformed and notifications are dealt with at once; a request is answered
// in a goroutine of its own, so that a cancellation can reach it, and a
// batch in one goroutine, whose answers are written as one array.
func (s *mcpServer) handle(ctx context.Context, wg *sync.WaitGroup, data []byte, tooLong bool) {
	data = bytes.TrimSpace(data)
	switch {
	case tooLong:
		s.write(errorResponse(nil, rpcParseError, fmt.Sprintf("the message is longer than %d bytes", mcpMaxMessage)))
		return
	case len(data) == 0:
		return
	case data[0] == '[':
		var elems []json.RawMessage
		if err := json.Unmarshal(data, &elems); err != nil {
			s.write(unreadMessage(data, "not a batch of JSON-RPC messages: ", err))
			return
		}
		if len(elems) == 0 {
			s.write(errorResponse(nil, rpcInvalidRequest, "an empty batch"))
			return
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			var out []*rpcResponse
			for _, e := range elems {
				resp, run := s.prepare(ctx, e)
				if run != nil {
					resp = run()
				}
				if resp != nil {
					out = append(out, resp)
				}
			}
			if len(out) > 0 {
				s.write(out)
			}
		}()
		return
	}
	resp, run := s.prepare(ctx, data)
	if run == nil {
		if resp != nil {
			s.write(resp)
		}
		return
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		if resp := run(); resp != nil {
			s.write(resp)
		}
	}()
}

// prepare reads one message. It returns the answer when there is one at
// once (an error), or run, which answers the request (nil when the client
// cancelled it: a cancelled request is not answered); both nil for a
// notification or a response.
func (s *mcpServer) prepare(ctx context.Context, data []byte) (*rpcResponse, func() *rpcResponse) {
	var m rpcMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return unreadMessage(data, "not a JSON-RPC message: ", err), nil
	}
	id := m.ID
	if !validID(id) {
		id = nil
	}
	switch {
	case m.JSONRPC != "2.0":
		return errorResponse(id, rpcInvalidRequest, `not a JSON-RPC 2.0 message ("jsonrpc": "2.0")`), nil
	case m.Method == "" && (m.Result != nil || m.Error != nil):
		return nil, nil // a response: this server sends no requests
	case m.Method == "":
		return errorResponse(id, rpcInvalidRequest, "a request needs a method"), nil
	case m.ID == nil:
		s.notified(m.Method, m.Params)
		return nil, nil
	case id == nil:
		return errorResponse(nil, rpcInvalidRequest, "a request's id is a string or an integer"), nil
	}
	rctx, cancel := context.WithCancelCause(ctx)
	s.mu.Lock()
	if _, dup := s.inFlight[string(id)]; dup {
		s.mu.Unlock()
		cancel(nil)
		// Answered with no id: with the id, the client would take it for
		// the answer to the request of that id still running.
		return errorResponse(nil, rpcInvalidRequest, "a request with id "+string(id)+" is being answered already"), nil
	}
	s.inFlight[string(id)] = cancel
	s.mu.Unlock()
	return nil, func() *rpcResponse {
		result, err := s.call(rctx, m.Method, m.Params)
		s.mu.Lock()
		delete(s.inFlight, string(id))
		s.mu.Unlock()
		cancelled := errors.Is(context.Cause(rctx), errCancelledByClient)
		cancel(nil)
		if cancelled {
			return nil
		}
		return response(id, result, err)
	}
}

// errCancelledByClient is why a request the client cancelled ended.
var errCancelledByClient = errors.New("cancelled by the client")

// validID says whether id is one JSON-RPC allows: a string or an integer.
func validID(id json.RawMessage) bool {
	if len(id) == 0 {
		return false
	}
	switch c := id[0]; {
	case c == '"':
		var s string
		return json.Unmarshal(id, &s) == nil
	case c == '-' || (c >= '0' && c <= '9'):
		var n json.Number
		if json.Unmarshal(id, &n) != nil {
			return false
		}
		_, err := n.Int64() // an integer, as JSON-RPC asks, that every client reads
		return err == nil
	}
	return false
}

// notified acts on a notification: a cancellation ends the request it
// names, which is then not answered; the others (initialized, progress,
// roots) need nothing.
func (s *mcpServer) notified(method string, params json.RawMessage) {
	if method != "notifications/cancelled" {
		return
	}
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil || !validID(p.RequestID) {
		return
	}
	s.mu.Lock()
	cancel := s.inFlight[string(p.RequestID)]
	s.mu.Unlock()
	if cancel != nil {
		cancel(errCancelledByClient)
	}
}

// unreadMessage is the answer to data, which did not decode (err): a parse
// error when it is not JSON, else an invalid request.
func unreadMessage(data []byte, what string, err error) *rpcResponse {
	code := rpcParseError
	if json.Valid(data) {
		code = rpcInvalidRequest
	}
	return errorResponse(nil, code, what+err.Error())
}

func errorResponse(id json.RawMessage, code int, msg string) *rpcResponse {
	return response(id, nil, &rpcError{Code: code, Message: msg})
}

// response is the answer to the request id (null when it could not be
// read): result, or err when not nil.
func response(id json.RawMessage, result any, err error) *rpcResponse {
	if id == nil {
		id = json.RawMessage("null")
	}
	resp := &rpcResponse{JSONRPC: "2.0", ID: id}
	var re *rpcError
	switch {
	case errors.As(err, &re):
		resp.Error = re
	case err != nil:
		resp.Error = &rpcError{Code: rpcInternalError, Message: err.Error()}
	case result == nil:
		resp.Result = struct{}{}
	default:
		resp.Result = result
	}
	return resp
}

// write writes one line: a response, or a batch's.
func (s *mcpServer) write(v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		buf.Reset()
		_ = enc.Encode(errorResponse(nil, rpcInternalError, err.Error()))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, _ = s.out.Write(buf.Bytes()) // Encode ends the line
}

// call answers one request.
func (s *mcpServer) call(ctx context.Context, method string, params json.RawMessage) (any, error) {
	switch method {
	case "initialize":
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		if err := decodeParams(params, &p); err != nil {
			return nil, err
		}
		version := mcpVersions[0]
		if slices.Contains(mcpVersions, p.ProtocolVersion) {
			version = p.ProtocolVersion
		}
		return map[string]any{
			"protocolVersion": version,
			"capabilities":    map[string]any{"tools": map[string]any{}, "resources": map[string]any{}},
			"serverInfo":      map[string]any{"name": "git-evolve", "version": currentVersion().Version},
			"instructions":    mcpInstructions,
		}, nil
	case "ping":
		return nil, nil
	case "tools/list":
		tools := make([]map[string]any, 0, len(mcpTools))
		for _, t := range mcpTools {
			tools = append(tools, map[string]any{"name": t.name, "description": t.description, "inputSchema": t.schema})
		}
		return map[string]any{"tools": tools}, nil
	case "tools/call":
		var p struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}
		if err := decodeParams(params, &p); err != nil {
			return nil, err
		}
		i := slices.IndexFunc(mcpTools, func(t mcpTool) bool { return t.name == p.Name })
		if i < 0 {
			return nil, &rpcError{Code: rpcInvalidParams, Message: fmt.Sprintf("unknown tool %q", p.Name)}
		}
		return s.callTool(ctx, mcpTools[i], p.Arguments), nil
	case "resources/list":
		return map[string]any{"resources": []map[string]any{{"uri": "evolve://ledger", "name": "ledger", "mimeType": "application/jsonl",
			"description": "Every record of the ledger, one canonical JSON line each (git evolve export)."}}}, nil
	case "resources/templates/list":
		return map[string]any{"resourceTemplates": []map[string]any{{"uriTemplate": "evolve://cycle/{n}", "name": "cycle", "mimeType": "application/json",
			"description": "The record of cycle n (git evolve show --json n)."}}}, nil
	case "resources/read":
		var p struct {
			URI string `json:"uri"`
		}
		if err := decodeParams(params, &p); err != nil {
			return nil, err
		}
		return s.readResource(ctx, p.URI)
	}
	return nil, &rpcError{Code: rpcMethodNotFound, Message: "method not found: " + method}
}

const mcpInstructions = "git-evolve's evolve loop: measure the goals, take the next work, open a cycle, change the working tree, finish the cycle (the gate judges it). Every tool returns the JSON of the git evolve command of the same name."

// decodeParams reads a request's params into v: an object, or none.
func decodeParams(params json.RawMessage, v any) error {
	if len(params) == 0 || string(params) == "null" {
		return nil
	}
	if err := json.Unmarshal(params, v); err != nil {
		return &rpcError{Code: rpcInvalidParams, Message: "the params: " + err.Error()}
	}
	return nil
}

// callTool runs the command of tool t with the arguments given.
func (s *mcpServer) callTool(ctx context.Context, t mcpTool, arguments json.RawMessage) *toolCallResult {
	in := map[string]any{}
	if len(arguments) > 0 && string(arguments) != "null" {
		if err := json.Unmarshal(arguments, &in); err != nil {
			return toolError("the arguments are not a JSON object: " + err.Error())
		}
	}
	args, err := t.args(in)
	if err != nil {
		return toolError(err.Error())
	}
	stdout, stderr, code := s.runner(ctx, args)
	return toolResult(stdout, stderr, code)
}

// readResource reads the ledger, or one cycle.
func (s *mcpServer) readResource(ctx context.Context, uri string) (any, error) {
	contents := func(mime string, text []byte) any {
		return map[string]any{"contents": []map[string]any{{"uri": uri, "mimeType": mime, "text": string(text)}}}
	}
	notFound := &rpcError{Code: rpcInvalidParams, Message: "Resource not found", Data: mustJSON(map[string]string{"uri": uri})}
	if uri == "evolve://ledger" {
		stdout, stderr, code := s.runner(ctx, []string{"export"})
		if code != 0 {
			return nil, fmt.Errorf("git evolve export: %s", strings.TrimSpace(string(stderr)))
		}
		return contents("application/jsonl", stdout), nil
	}
	n, ok := strings.CutPrefix(uri, "evolve://cycle/")
	if _, err := strconv.Atoi(n); !ok || err != nil {
		return nil, notFound
	}
	stdout, _, code := s.runner(ctx, []string{"show", "--json", "--", n})
	if code != 0 {
		return nil, notFound
	}
	return contents("application/json", stdout), nil
}

// toolCallResult is a tools/call result: the command's output as text, its
// JSON object as structured content, and whether it failed.
type toolCallResult struct {
	Content           []textContent  `json:"content"`
	StructuredContent map[string]any `json:"structuredContent,omitempty"`
	IsError           bool           `json:"isError,omitempty"`
}

type textContent struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// toolResult is a command's output as a tool's: its JSON (structured when
// it is one object), its messages, and an error when it did not exit 0.
func toolResult(stdout, stderr []byte, code int) *toolCallResult {
	text := strings.TrimSpace(string(stdout))
	res := &toolCallResult{IsError: code != 0}
	var obj map[string]any
	if json.Unmarshal(stdout, &obj) == nil {
		res.StructuredContent = obj
	}
	if msg := strings.TrimSpace(string(stderr)); msg != "" {
		if text != "" {
			text += "\n"
		}
		text += msg
	}
	if code != 0 {
		text += fmt.Sprintf("\n(exit %d)", code)
	}
	res.Content = []textContent{{Type: "text", Text: strings.TrimSpace(text)}}
	return res
}

func toolError(msg string) *toolCallResult {
	return &toolCallResult{IsError: true, Content: []textContent{{Type: "text", Text: msg}}}
}
