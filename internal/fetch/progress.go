package fetch

import (
	"fmt"
	"io"
	"time"
)

// progress reports a long download on w: nothing during its first
// second, then a line a second with the bytes read so far.
type progress struct {
	r     io.Reader
	w     io.Writer
	label string
	start time.Time
	last  time.Time
	n     int64
}

func newProgress(r io.Reader, w io.Writer, label string) *progress {
	now := time.Now()
	return &progress{r: r, w: w, label: label, start: now, last: now}
}

func (p *progress) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.n += int64(n)
	if now := time.Now(); now.Sub(p.last) >= time.Second {
		p.last = now
		fmt.Fprintf(p.w, "wasmcp: downloading %s: %.1f MiB in %.0fs\n", p.label, float64(p.n)/(1<<20), now.Sub(p.start).Seconds())
	}
	if err == io.EOF && p.last != p.start {
		fmt.Fprintf(p.w, "wasmcp: downloaded %s: %.1f MiB in %.1fs\n", p.label, float64(p.n)/(1<<20), time.Since(p.start).Seconds())
	}
	return n, err
}
