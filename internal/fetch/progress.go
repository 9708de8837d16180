package fetch

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// progress reports a long download on w: nothing during its first
// second, then, once a second, the bytes read so far — a bar redrawn in
// place when w is a terminal and the size is known, plain lines
// otherwise.
type progress struct {
	r     io.Reader
	w     io.Writer
	tty   bool
	label string
	total int64 // 0 when unknown
	start time.Time
	last  time.Time
	n     int64
}

func newProgress(r io.Reader, w io.Writer, label string, total int64) *progress {
	now := time.Now()
	return &progress{r: r, w: w, tty: isTerminal(w), label: label, total: total, start: now, last: now}
}

// isTerminal reports whether w is a character device.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

func (p *progress) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.n += int64(n)
	if now := time.Now(); now.Sub(p.last) >= time.Second {
		p.last = now
		p.print(false)
	}
	if err == io.EOF && p.last != p.start {
		p.print(true)
	}
	return n, err
}

func (p *progress) print(done bool) {
	mib := float64(p.n) / (1 << 20)
	secs := time.Since(p.start).Seconds()
	if p.tty && p.total > 0 {
		const width = 30
		filled := int(int64(width) * min(p.n, p.total) / p.total)
		end := ""
		if done {
			end = "\n"
		}
		fmt.Fprintf(p.w, "\rwasmcp: %s [%s%s] %.1f/%.1f MiB %.0fs%s", p.label, strings.Repeat("#", filled), strings.Repeat(" ", width-filled), mib, float64(p.total)/(1<<20), secs, end)
		return
	}
	verb := "downloading"
	if done {
		verb = "downloaded"
	}
	fmt.Fprintf(p.w, "wasmcp: %s %s: %.1f MiB in %.0fs\n", verb, p.label, mib, secs)
}
