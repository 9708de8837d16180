package mcp_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/mcp"
)

var update = flag.Bool("update", false, "rewrite the golden transcripts in testdata/transcripts")

// A transcript (testdata/transcripts/*.txtar) is a txtar archive: a
// comment, then a file "in" with one client message a line (blank lines
// and lines starting with # are skipped) and a file "out" with what the
// server answered: each input line as "> line", followed by the lines
// answered to it as "< line". TestTranscripts plays every transcript over
// each transport and wants the same "out" from all of them; -update
// rewrites "out" from stdio (the other transports must still agree).

// txtarFile is one file of a txtar archive.
type txtarFile struct {
	name string
	data []byte
}

// parseTxtar splits a txtar archive (golang.org/x/tools/txtar's format:
// "-- name --" lines start files) into its comment and files.
func parseTxtar(data []byte) (comment []byte, files []txtarFile) {
	var cur *txtarFile
	for len(data) > 0 {
		line := data
		rest := []byte(nil)
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, rest = data[:i+1], data[i+1:]
		}
		data = rest
		t := bytes.TrimRight(line, "\r\n")
		if bytes.HasPrefix(t, []byte("-- ")) && bytes.HasSuffix(t, []byte(" --")) && len(t) >= 6 {
			files = append(files, txtarFile{name: strings.TrimSpace(string(t[3 : len(t)-3]))})
			cur = &files[len(files)-1]
			continue
		}
		if cur == nil {
			comment = append(comment, line...)
		} else {
			cur.data = append(cur.data, line...)
		}
	}
	return comment, files
}

// formatTxtar is the inverse of parseTxtar.
func formatTxtar(comment []byte, files []txtarFile) []byte {
	var b bytes.Buffer
	b.Write(comment)
	for _, f := range files {
		fmt.Fprintf(&b, "-- %s --\n", f.name)
		b.Write(f.data)
		if len(f.data) > 0 && f.data[len(f.data)-1] != '\n' {
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}

func TestTxtarRoundTrip(t *testing.T) {
	cases := []string{
		"",
		"just a comment\n",
		"c\n-- in --\na\nb\n-- out --\n> a\n",
		"-- empty --\n-- x --\nline\n",
	}
	for _, c := range cases {
		com, files := parseTxtar([]byte(c))
		if got := string(formatTxtar(com, files)); got != c {
			t.Errorf("round trip of %q gave %q", c, got)
		}
	}
	_, files := parseTxtar([]byte("-- a --\n-- not a marker\n-- b --\nx"))
	if len(files) != 2 || string(files[0].data) != "-- not a marker\n" || string(files[1].data) != "x" {
		t.Errorf("files %+v", files)
	}
}

// transcriptConn is a client connection over one transport: say sends one
// message line and returns the lines the server answered to it.
type transcriptConn interface {
	say(line string) []string
}

// transcriptOptions pin what the server says of itself.
func transcriptOptions() *mcp.Options { return &mcp.Options{Name: "wasmcp", Version: "transcript"} }

// transports are the transports every transcript runs over.
var transports = []struct {
	name string
	open func(t *testing.T) transcriptConn
}{
	{"stdio", openStdioTranscript},
	{"streamable-http", openStreamableTranscript},
	{"http+sse", openSSETranscript},
}

func TestTranscripts(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "transcripts", "*.txtar"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no transcripts: %v", err)
	}
	for _, path := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txtar"), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			comment, files := parseTxtar(data)
			var in []string
			outIdx := -1
			for i, f := range files {
				switch f.name {
				case "in":
					for _, l := range strings.Split(string(f.data), "\n") {
						if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
							in = append(in, l)
						}
					}
				case "out":
					outIdx = i
				}
			}
			if len(in) == 0 {
				t.Fatal("no input lines")
			}
			var first string
			for i, tr := range transports {
				got := playTranscript(tr.open(t), in)
				if i == 0 {
					first = got
					if *update {
						if outIdx < 0 {
							files = append(files, txtarFile{name: "out"})
							outIdx = len(files) - 1
						}
						files[outIdx].data = []byte(got)
						if err := os.WriteFile(path, formatTxtar(comment, files), 0o644); err != nil {
							t.Fatal(err)
						}
					} else if outIdx < 0 || string(files[outIdx].data) != got {
						t.Errorf("%s: transcript differs from the golden file (run with -update to accept):\n%s", tr.name, got)
					}
					continue
				}
				if got != first {
					t.Errorf("%s answers differently from %s:\n%s", tr.name, transports[0].name, diffLines(first, got))
				}
			}
		})
	}
}

// playTranscript says every line and formats what came back.
func playTranscript(c transcriptConn, in []string) string {
	var b strings.Builder
	for _, l := range in {
		b.WriteString("> " + l + "\n")
		for _, r := range c.say(l) {
			b.WriteString("< " + r + "\n")
		}
	}
	return b.String()
}

// diffLines shows the first line where two transcripts differ.
func diffLines(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) || i < len(bl); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return fmt.Sprintf("line %d:\n  want %s\n  got  %s", i+1, x, y)
		}
	}
	return "(equal)"
}

// answered returns a test for the line that ends the server's answer to
// line, or nil when line needs none: a request's response, a batch's
// array (or its refusal, without id), the refusal of a line that is no
// message.
func answered(line string) func(string) bool {
	noID := func(r string) bool { return strings.Contains(r, `"id":null`) }
	var v any
	if json.Unmarshal([]byte(line), &v) != nil {
		return noID
	}
	isReq := func(e any) bool {
		o, ok := e.(map[string]any)
		if !ok {
			return true // answered as invalid
		}
		_, hasID := o["id"]
		_, hasMethod := o["method"]
		return hasID && hasMethod || !hasMethod && !hasID
	}
	switch v := v.(type) {
	case []any:
		need := len(v) == 0
		for _, e := range v {
			need = need || isReq(e)
		}
		if !need {
			return nil
		}
		return func(r string) bool { return strings.HasPrefix(r, "[") || noID(r) }
	case map[string]any:
		id, hasID := v["id"]
		if _, hasMethod := v["method"]; !hasMethod || !hasID {
			return nil
		}
		b, _ := json.Marshal(id)
		return func(r string) bool { return strings.Contains(r, `"id":`+string(b)+`,`) || noID(r) }
	}
	return noID
}

// barrierLine is the ping a stream transport sends after each line: every
// answer to the line comes before the ping's (or, for a request that runs
// concurrently, at least one line comes).
func barrierLine(n int) (line, id string) {
	id = fmt.Sprintf(`"barrier-%d"`, n)
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`, id
}

// streamTranscript is the client side of a stream transport (stdio,
// HTTP+SSE): send writes one line, recv returns the next line the server
// wrote.
type streamTranscript struct {
	t    *testing.T
	send func(line string)
	recv func() string
	n    int
}

func (s *streamTranscript) say(line string) []string {
	s.send(line)
	s.n++
	bl, bid := barrierLine(s.n)
	s.send(bl)
	var out []string
	seenBarrier := false
	done := answered(line)
	for !seenBarrier || done != nil {
		r := s.recv()
		if strings.Contains(r, `"id":`+bid) {
			seenBarrier = true
			continue
		}
		out = append(out, r)
		if done != nil && done(r) {
			done = nil
		}
	}
	return out
}

func openStdioTranscript(t *testing.T) transcriptConn {
	c := startStdio(t, nil, transcriptOptions())
	return &streamTranscript{t: t, send: c.send, recv: func() string {
		select {
		case l, ok := <-c.lines:
			if !ok {
				t.Fatal("stdio: the server closed its output")
			}
			return strings.TrimRight(l, "\n")
		case <-time.After(wait):
			t.Fatal("stdio: no answer")
		}
		return ""
	}}
}

// streamableTranscript posts each line to the Streamable HTTP endpoint
// with the headers a client sends: the session's, or those a 2026-07-28
// request's body asks for.
type streamableTranscript struct {
	t       *testing.T
	e       *httpEnv
	session string
	version string
}

func openStreamableTranscript(t *testing.T) transcriptConn {
	return &streamableTranscript{t: t, e: startHTTPWith(t, transcriptOptions(), nil, nil)}
}

func (s *streamableTranscript) say(line string) []string {
	hdr := map[string]string{}
	if s.session != "" {
		hdr["Mcp-Session-Id"] = s.session
		hdr["MCP-Protocol-Version"] = s.version
	}
	var m struct {
		Method string `json:"method"`
		Params struct {
			Name string         `json:"name"`
			URI  string         `json:"uri"`
			Meta map[string]any `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal([]byte(line), &m) == nil {
		if v, ok := m.Params.Meta["io.modelcontextprotocol/protocolVersion"].(string); ok {
			hdr["MCP-Protocol-Version"] = v
			hdr["Mcp-Method"] = m.Method
			if n := m.Params.Name + m.Params.URI; n != "" {
				hdr["Mcp-Name"] = n
			}
		}
	}
	resp := s.e.post(line, hdr)
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" && s.session == "" {
		s.session = sid
	}
	var out []string
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		for _, ev := range readSSE(s.t, resp.Body) {
			if ev.data != "" {
				out = append(out, ev.data)
			}
		}
	} else if b, _ := io.ReadAll(resp.Body); len(b) > 0 {
		out = append(out, string(b))
	}
	resp.Body.Close()
	if s.session != "" && s.version == "" && resp.StatusCode == http.StatusOK && len(out) == 1 {
		var r struct {
			Result struct {
				ProtocolVersion string `json:"protocolVersion"`
			} `json:"result"`
		}
		if json.Unmarshal([]byte(out[0]), &r) == nil {
			s.version = r.Result.ProtocolVersion
		}
	}
	return out
}

// openSSETranscript opens an HTTP+SSE session: GET /sse, then POSTs to
// the endpoint its first event names; answers come on the stream.
func openSSETranscript(t *testing.T) transcriptConn {
	e := startHTTPWith(t, transcriptOptions(), nil, nil)
	c := openSSEClient(t, e)
	return &streamTranscript{t: t, send: func(line string) {
		resp := c.post(line, nil)
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("POST %s: status %d", line, resp.StatusCode)
		}
	}, recv: c.recv}
}
