package mcp_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/mcp"
	"github.com/wasmcp/wasmcp/internal/mcp/mcptest"
)

// taskMeta is the _meta of a 2026-07-28 request with the tasks extension.
const taskMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`

// FuzzTasks creates a task that waits for input (mcptest's task_ask),
// then feeds arbitrary lines in which TASKID stands for its id and META
// for a 2026-07-28 _meta with the tasks extension: the task methods'
// params (taskId, inputResponses, cursor, taskIds) never crash or hang
// the server, and every output line is JSON.
func FuzzTasks(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"taskId":"TASKID",META}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tasks/update","params":{"taskId":"TASKID","inputResponses":{"name":{"action":"accept","content":{"name":"x"}}},META}}` + "\n" +
			`{"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"taskId":"TASKID",META}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tasks/update","params":{"taskId":"TASKID","inputResponses":5,META}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tasks/update","params":{"taskId":"TASKID","inputResponses":{"bogus":null,"name":[]},META}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tasks/cancel","params":{"taskId":"TASKID",META}}` + "\n" +
			`{"jsonrpc":"2.0","id":3,"method":"tasks/cancel","params":{"taskId":"TASKID",META}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"taskId":7,META}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tasks/list","params":{"cursor":"x",META}}`,
		`{"jsonrpc":"2.0","id":2,"method":"subscriptions/listen","params":{"notifications":{"taskIds":["TASKID",1]},META}}`,
		`{"jsonrpc":"2.0","id":2,"method":"subscriptions/listen","params":{"notifications":{"taskIds":["TASKID"]},META}}` + "\n" +
			`{"jsonrpc":"2.0","id":3,"method":"tasks/cancel","params":{"taskId":"TASKID",META}}`,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}` + "\n" +
			`{"jsonrpc":"2.0","id":2,"method":"tasks/list","params":{"cursor":"TASKID"}}` + "\n" +
			`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"task_ask","task":{"ttl":-1}}}` + "\n" +
			`{"jsonrpc":"2.0","id":4,"method":"tasks/result","params":{"taskId":"TASKID"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p := mcptest.New(&mcptest.Options{Tasks: true})
		s := mcp.NewServer(p, &mcp.Options{DrainTimeout: 20 * time.Millisecond, MaxMessageBytes: 1 << 16})
		defer s.Close()
		inW, outR, done := mcptest.ServeStdio(context.Background(), s)
		lines := make(chan []byte, 1024)
		go func() {
			defer close(lines)
			sc := bufio.NewScanner(outR)
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				lines <- append([]byte(nil), sc.Bytes()...)
			}
		}()
		create := `{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"task_ask",` + taskMeta + `}}` + "\n"
		if _, err := io.WriteString(inW, create); err != nil {
			t.Fatal(err)
		}
		var id string
		for id == "" {
			select {
			case l := <-lines:
				var m struct {
					ID     string `json:"id"`
					Result struct {
						TaskID string `json:"taskId"`
					} `json:"result"`
				}
				if json.Unmarshal(l, &m) == nil && m.ID == "c" {
					if m.Result.TaskID == "" {
						t.Fatalf("task_ask made no task: %s", l)
					}
					id = m.Result.TaskID
				}
			case <-time.After(wait):
				t.Fatal("no CreateTaskResult")
			}
		}
		in := strings.NewReplacer("TASKID", id, "META", taskMeta).Replace(string(data))
		go func() {
			_, _ = io.WriteString(inW, in+"\n")
			inW.Close()
		}()
		var out [][]byte
		timeout := time.After(wait)
	read:
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					break read
				}
				out = append(out, l)
			case <-timeout:
				s.Close()
				t.Fatal("ServeStdio hung")
			}
		}
		if err := <-done; err != nil {
			t.Fatalf("ServeStdio = %v", err)
		}
		for _, l := range out {
			if !json.Valid(bytes.TrimSpace(l)) {
				t.Fatalf("invalid output line %q", l)
			}
		}
	})
}
