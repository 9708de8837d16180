package loadgen

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"
)

// ColdStartOptions configure ColdStart.
type ColdStartOptions struct {
	Args        []string // server command line (stdio)
	Mode        Mode
	Runs        int // measured runs (default 11)
	ExpectTools int // tools/list must list this many tools (0: any)
	Verbose     bool
}

// ColdStartResult is the time from starting the server process to the
// first tools/list answer.
type ColdStartResult struct {
	Kind     string    `json:"kind"` // "coldstart"
	Name     string    `json:"name"`
	Runs     int       `json:"runs"`
	Tools    int       `json:"tools"`
	MedianMs float64   `json:"median_ms"`
	MinMs    float64   `json:"min_ms"`
	MaxMs    float64   `json:"max_ms"`
	Samples  []float64 `json:"samples_ms"`
	Load1    float64   `json:"load1"`
}

// ColdStart starts the server o.Runs+1 times; each time it measures from
// just before the process starts until the first tools/list response
// (after initialize in legacy mode). The first start is not counted: it
// warms the compilation cache.
func ColdStart(o ColdStartOptions) (*ColdStartResult, error) {
	runs := o.Runs
	if runs <= 0 {
		runs = 11
	}
	res := &ColdStartResult{Kind: "coldstart", Runs: runs}
	var samples []time.Duration
	for i := 0; i <= runs; i++ {
		d, tools, err := coldStartOnce(o)
		if err != nil {
			return nil, err
		}
		if o.ExpectTools > 0 && tools != o.ExpectTools {
			return nil, fmt.Errorf("tools/list listed %d tools, want %d", tools, o.ExpectTools)
		}
		res.Tools = tools
		if i > 0 {
			samples = append(samples, d)
			res.Samples = append(res.Samples, ms(d))
		}
	}
	slices.Sort(samples)
	res.MedianMs = ms(Percentile(samples, 50))
	res.MinMs = ms(samples[0])
	res.MaxMs = ms(samples[len(samples)-1])
	res.Load1 = Load1()
	return res, nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func coldStartOnce(o ColdStartOptions) (time.Duration, int, error) {
	p, err := StartProc(o.Args, o.Verbose)
	if err != nil {
		return 0, 0, err
	}
	defer p.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := NewConn(p.Stdout, p.Stdin, o.Mode)
	if err := c.Initialize(ctx); err != nil {
		return 0, 0, fmt.Errorf("%w%s", err, p.StderrTail())
	}
	resp, err := c.Call(ctx, "tools/list", nil)
	d := time.Since(p.Started)
	if err != nil {
		return 0, 0, fmt.Errorf("tools/list: %w%s", err, p.StderrTail())
	}
	if resp.Error != nil {
		return 0, 0, fmt.Errorf("tools/list: %w", resp.Error)
	}
	// Count every tool, following pagination (after the timing).
	tools := 0
	for {
		var r struct {
			Tools      []json.RawMessage `json:"tools"`
			NextCursor string            `json:"nextCursor"`
		}
		if err := json.Unmarshal(resp.Result, &r); err != nil {
			return 0, 0, fmt.Errorf("tools/list: %v", err)
		}
		tools += len(r.Tools)
		if r.NextCursor == "" {
			break
		}
		if resp, err = c.Call(ctx, "tools/list", json.RawMessage(`{"cursor":`+strconv.Quote(r.NextCursor)+`}`)); err != nil {
			return 0, 0, err
		}
		if resp.Error != nil {
			return 0, 0, fmt.Errorf("tools/list: %w", resp.Error)
		}
	}
	return d, tools, nil
}

// RunawayOptions configure Runaway.
type RunawayOptions struct {
	Args     []string // server command line (stdio)
	Mode     Mode
	EchoTool string        // a tool of another plugin, called throughout
	SpinTool string        // a tool that never returns
	Deadline time.Duration // the spin plugin's configured timeout
	Runaways int           // spin calls kept running at once (default 1)
	Baseline time.Duration // echo-only phase before the runaways start
	Duration time.Duration // echo phase while runaways run
	Interval time.Duration // pause between echo calls (one at a time)
	Verbose  bool
}

// Latency summarises a set of latencies.
type Latency struct {
	N     int     `json:"n"`
	P50us float64 `json:"p50_us"`
	P99us float64 `json:"p99_us"`
	MaxUs float64 `json:"max_us"`
}

func latencyOf(l []time.Duration) Latency {
	slices.Sort(l)
	out := Latency{N: len(l), P50us: us(Percentile(l, 50)), P99us: us(Percentile(l, 99))}
	if len(l) > 0 {
		out.MaxUs = us(l[len(l)-1])
	}
	return out
}

// RunawayResult reports how promptly runaway calls were stopped and how
// another plugin's latency held meanwhile.
type RunawayResult struct {
	Kind       string  `json:"kind"` // "runaway"
	Name       string  `json:"name"`
	DeadlineMs float64 `json:"deadline_ms"`
	Runaways   int     `json:"runaways"`
	// Spins is how many runaway calls ended; TimedOut how many of them
	// ended with -32001 as they should. Overshoot is the time from the
	// deadline to the client receiving the error.
	Spins           int     `json:"spins"`
	TimedOut        int     `json:"timed_out"`
	FirstBad        string  `json:"first_bad,omitempty"`
	OvershootP50Ms  float64 `json:"overshoot_p50_ms"`
	OvershootMaxMs  float64 `json:"overshoot_max_ms"`
	TimeoutMsInData float64 `json:"timeout_ms_in_data"`
	EchoBaseline    Latency `json:"echo_baseline"`
	EchoDuring      Latency `json:"echo_during"`
	EchoErrors      int     `json:"echo_errors"`
	Load1           float64 `json:"load1"`
}

// Runaway measures, on one server, echo latency alone and then while
// o.Runaways calls of an endless tool run, restarted as each is stopped.
func Runaway(o RunawayOptions) (*RunawayResult, error) {
	if o.Runaways <= 0 {
		o.Runaways = 1
	}
	p, err := StartProc(o.Args, o.Verbose)
	if err != nil {
		return nil, err
	}
	defer p.Stop()
	ctx := context.Background()
	c := NewConn(p.Stdout, p.Stdin, o.Mode)
	if err := c.Initialize(ctx); err != nil {
		return nil, fmt.Errorf("%w%s", err, p.StderrTail())
	}
	res := &RunawayResult{Kind: "runaway", DeadlineMs: ms(o.Deadline), Runaways: o.Runaways}
	n := 0
	echo := func(d time.Duration) ([]time.Duration, error) {
		var lat []time.Duration
		end := time.Now().Add(d)
		for time.Now().Before(end) {
			n++
			t := time.Now()
			err := c.CallEcho(ctx, o.EchoTool, "runaway-check-"+strconv.Itoa(n))
			l := time.Since(t)
			if err != nil {
				if _, ok := err.(*RPCError); !ok {
					return nil, fmt.Errorf("echo: %w%s", err, p.StderrTail())
				}
				res.EchoErrors++
			} else {
				lat = append(lat, l)
			}
			time.Sleep(o.Interval)
		}
		return lat, nil
	}
	// Warm the echo plugin, then measure it alone.
	if _, err := echo(200 * time.Millisecond); err != nil {
		return nil, err
	}
	base, err := echo(o.Baseline)
	if err != nil {
		return nil, err
	}
	res.EchoBaseline = latencyOf(base)

	var (
		mu        sync.Mutex
		overshoot []time.Duration
		wg        sync.WaitGroup
		stop      = make(chan struct{})
	)
	spinParams := json.RawMessage(`{"name":` + strconv.Quote(o.SpinTool) + `,"arguments":{}}`)
	for range o.Runaways {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				t := time.Now()
				resp, err := c.Call(ctx, "tools/call", spinParams)
				d := time.Since(t)
				mu.Lock()
				res.Spins++
				switch {
				case err != nil:
					if res.FirstBad == "" {
						res.FirstBad = err.Error()
					}
				case resp.Error != nil && resp.Error.Code == -32001:
					res.TimedOut++
					overshoot = append(overshoot, d-o.Deadline)
					var data struct {
						TimeoutMs float64 `json:"timeoutMs"`
					}
					if json.Unmarshal(resp.Error.Data, &data) == nil {
						res.TimeoutMsInData = data.TimeoutMs
					}
				default:
					if res.FirstBad == "" {
						b, _ := json.Marshal(resp)
						res.FirstBad = "unexpected answer after " + d.Round(time.Millisecond).String() + ": " + string(b)
					}
				}
				mu.Unlock()
				if err != nil {
					return
				}
			}
		}()
	}
	during, err := echo(o.Duration)
	close(stop)
	wg.Wait()
	if err != nil {
		return nil, err
	}
	res.EchoDuring = latencyOf(during)
	slices.Sort(overshoot)
	res.OvershootP50Ms = ms(Percentile(overshoot, 50))
	if len(overshoot) > 0 {
		res.OvershootMaxMs = ms(overshoot[len(overshoot)-1])
	}
	res.Load1 = Load1()
	return res, nil
}
