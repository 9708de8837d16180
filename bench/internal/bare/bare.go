// Package bare is the ceiling of wasmcp's benchmarks: it decodes JSON-RPC
// requests and answers each with a minimal tools/call-shaped result, with
// no MCP semantics at all (no schema, no validation, no dispatch). Whatever
// a real server does per call costs time on top of this.
package bare

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
)

// request is the part of a JSON-RPC request the echo reads.
type request struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name      string `json:"name"`
		Arguments struct {
			Text string `json:"text"`
		} `json:"arguments"`
	} `json:"params"`
}

// content is one text content block.
type content struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// toolResult is the minimal tools/call result.
type toolResult struct {
	Content    []content `json:"content"`
	ResultType string    `json:"resultType"`
}

// initResult is the minimal initialize result, so that MCP clients that
// insist on a handshake can talk to the echo.
type initResult struct {
	ProtocolVersion string         `json:"protocolVersion"`
	Capabilities    map[string]any `json:"capabilities"`
	ServerInfo      map[string]any `json:"serverInfo"`
}

// response is a JSON-RPC response.
type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result"`
}

// answer decodes one request and returns its encoded response, or nil for
// a notification (no id) or a line that is not a request.
func answer(line []byte) []byte {
	var req request
	if err := json.Unmarshal(line, &req); err != nil || len(req.ID) == 0 {
		return nil
	}
	var res any
	if req.Method == "initialize" {
		res = initResult{
			ProtocolVersion: "2025-11-25",
			Capabilities:    map[string]any{"tools": map[string]any{}},
			ServerInfo:      map[string]any{"name": "bareecho", "version": "1.0.0"},
		}
	} else {
		res = toolResult{Content: []content{{Type: "text", Text: req.Params.Arguments.Text}}, ResultType: "complete"}
	}
	out, err := json.Marshal(response{JSONRPC: "2.0", ID: req.ID, Result: res})
	if err != nil {
		return nil
	}
	return out
}

// ServeStdio answers newline-delimited requests from r on w, one at a time
// in one goroutine, flushing whenever no further input is buffered. It
// returns nil at EOF.
func ServeStdio(r io.Reader, w io.Writer) error {
	br := bufio.NewReaderSize(r, 64<<10)
	bw := bufio.NewWriterSize(w, 64<<10)
	var long []byte
	for {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			long = append(long, line...)
			continue
		}
		if long != nil {
			line = append(long, line...)
			long = nil
		}
		if line = bytes.TrimSpace(line); len(line) > 0 {
			if out := answer(line); out != nil {
				bw.Write(out)
				bw.WriteByte('\n')
			}
		}
		if err != nil {
			ferr := bw.Flush()
			if err == io.EOF {
				return ferr
			}
			return err
		}
		if br.Buffered() == 0 {
			if err := bw.Flush(); err != nil {
				return err
			}
		}
	}
}

// Handler is the bare net/http JSON handler: it decodes the POSTed request
// and writes the response as application/json.
func Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "POST only", http.StatusMethodNotAllowed)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, 4<<20))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		out := answer(body)
		if out == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(out)
	})
}
