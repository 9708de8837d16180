package loadgen

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Ratio is a throughput ratio between two configurations and the target
// it is held to (0: informational).
type Ratio struct {
	Label    string
	Num, Den string
	Target   float64
}

// DefaultRatios are the ratios of wasmcp's performance targets.
var DefaultRatios = []Ratio{
	{"stdio: wasmcp C / native Go SDK", "stdio/wasmcp-c", "stdio/native", 3},
	{"stdio: wasmcp C / bare echo", "stdio/wasmcp-c", "stdio/bare", 0.6}, // issue 15; DESIGN.md said 0.5
	{"stdio: wasmcp Go / native Go SDK", "stdio/wasmcp-go", "stdio/native", 2},
	{"stdio: wasmcp component / wasmcp C", "stdio/wasmcp-component", "stdio/wasmcp-c", 0.5}, // issue 25: within 2x the C echo's cost
	{"stdio: native Go SDK / bare echo", "stdio/native", "stdio/bare", 0},
	{"stdio 2026-07-28: wasmcp C / native Go SDK", "stdio/wasmcp-c-modern", "stdio/native-modern", 0},
	{"HTTP: wasmcp C / native Go SDK", "http/wasmcp-c", "http/native", 3},
	{"HTTP: wasmcp C / bare net/http", "http/wasmcp-c", "http/bare", 0},
	{"HTTP: wasmcp Go / native Go SDK", "http/wasmcp-go", "http/native", 0},
	{"HTTP: wasmcp component / wasmcp C", "http/wasmcp-component", "http/wasmcp-c", 0},
	{"HTTP: native Go SDK / bare net/http", "http/native", "http/bare", 0},
	{"cluster: 3 replicas behind nginx / 1 replica behind nginx", "cluster/3-nginx", "cluster/1-nginx", 0},
	{"cluster: 3 replicas behind nginx / 1 replica direct", "cluster/3-nginx", "cluster/1-direct", 0},
	{"cluster: 1 replica behind nginx / 1 replica direct", "cluster/1-nginx", "cluster/1-direct", 0},
	{"cluster: 1 replica direct / the same without [cluster]", "cluster/1-direct", "cluster/1-direct-nocluster", 0},
}

// Summarize reads result lines (JSON, one per run, as cmd/load -json
// writes them) from r and writes Markdown tables of the medians, the
// ratios and the latency checks to w.
func Summarize(r io.Reader, w io.Writer, ratios []Ratio) error {
	var (
		order []string
		runs  = map[string][]Result{}
		colds []ColdStartResult
		aways []RunawayResult
		loads []float64
		sc    = bufio.NewScanner(r)
	)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] != '{' {
			continue
		}
		var k struct {
			Kind string `json:"kind"`
		}
		if err := json.Unmarshal([]byte(line), &k); err != nil {
			return fmt.Errorf("bad result line %q: %v", line, err)
		}
		switch k.Kind {
		case "throughput":
			var x Result
			if err := json.Unmarshal([]byte(line), &x); err != nil {
				return err
			}
			if _, ok := runs[x.Name]; !ok {
				order = append(order, x.Name)
			}
			runs[x.Name] = append(runs[x.Name], x)
			loads = append(loads, x.Load1)
		case "coldstart":
			var x ColdStartResult
			if err := json.Unmarshal([]byte(line), &x); err != nil {
				return err
			}
			colds = append(colds, x)
		case "runaway":
			var x RunawayResult
			if err := json.Unmarshal([]byte(line), &x); err != nil {
				return err
			}
			aways = append(aways, x)
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}

	if len(order) > 0 {
		fmt.Fprintln(w, "| configuration | runs | calls/s median (min–max) | p50 µs | p99 µs | server CPU µs/call | client CPU µs/call | errors |")
		fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|")
		for _, name := range order {
			rs := runs[name]
			rate := col(rs, func(x Result) float64 { return x.CallsPerSec })
			errs := 0
			for _, x := range rs {
				errs += x.Errors
			}
			fmt.Fprintf(w, "| %s (%d) | %d | **%.0f** (%.0f–%.0f) | %.0f | %.0f | %s | %.1f | %d |\n",
				name, rs[0].InFlight, len(rs), median(rate), slices.Min(rate), slices.Max(rate),
				median(col(rs, func(x Result) float64 { return x.P50us })),
				median(col(rs, func(x Result) float64 { return x.P99us })),
				optional(median(col(rs, func(x Result) float64 { return x.ServerCPUus }))),
				median(col(rs, func(x Result) float64 { return x.ClientCPUus })),
				errs)
		}
		fmt.Fprintf(w, "\nLoad average (1 min) during the runs: median %.2f, range %.2f–%.2f.\n\n", median(loads), slices.Min(loads), slices.Max(loads))

		fmt.Fprintln(w, "| ratio | calls/s: ratio of medians | per-round range | target | met | server CPU per call: denominator ÷ numerator |")
		fmt.Fprintln(w, "|---|---:|---:|---:|---|---:|")
		for _, rt := range ratios {
			num, den := runs[rt.Num], runs[rt.Den]
			if len(num) == 0 || len(den) == 0 {
				continue
			}
			ratio := median(col(num, rate)) / median(col(den, rate))
			per := pairedRatios(num, den)
			rng := "–"
			if len(per) > 0 {
				rng = fmt.Sprintf("%.2f–%.2f", slices.Min(per), slices.Max(per))
			}
			target, met := "–", ""
			if rt.Target > 0 {
				target = fmt.Sprintf("≥ %.2g×", rt.Target)
				met = "no"
				if ratio >= rt.Target {
					met = "yes"
				}
			}
			cpu := "–"
			nc := median(col(num, func(x Result) float64 { return x.ServerCPUus }))
			dc := median(col(den, func(x Result) float64 { return x.ServerCPUus }))
			if nc > 0 && dc > 0 {
				cpu = fmt.Sprintf("%.2f×", dc/nc)
			}
			fmt.Fprintf(w, "| %s | **%.2f×** | %s | %s | %s | %s |\n", rt.Label, ratio, rng, target, met, cpu)
		}
		fmt.Fprintln(w)
	}
	for _, c := range colds {
		fmt.Fprintf(w, "Cold start %s: %d tools, first tools/list answer after median **%.0f ms** (min %.0f, max %.0f, %d runs, warm cache).\n",
			c.Name, c.Tools, c.MedianMs, c.MinMs, c.MaxMs, c.Runs)
	}
	if len(colds) > 0 {
		fmt.Fprintln(w)
	}
	for _, a := range aways {
		fmt.Fprintf(w, "Runaway %s: %d runaway(s) at a time with a %.0f ms deadline; %d of %d calls ended with -32001 (data.timeoutMs %.0f), "+
			"**%.1f ms** after the deadline at the median, %.1f ms at most. Echo on another plugin: p50 %.0f µs / p99 %.0f µs alone (%d calls), p50 %.0f µs / p99 %.0f µs during (%d calls, %d errors).",
			a.Name, a.Runaways, a.DeadlineMs, a.TimedOut, a.Spins, a.TimeoutMsInData, a.OvershootP50Ms, a.OvershootMaxMs,
			a.EchoBaseline.P50us, a.EchoBaseline.P99us, a.EchoBaseline.N, a.EchoDuring.P50us, a.EchoDuring.P99us, a.EchoDuring.N, a.EchoErrors)
		if a.FirstBad != "" {
			fmt.Fprintf(w, " First unexpected answer: %s.", a.FirstBad)
		}
		fmt.Fprintln(w)
	}
	return nil
}

func rate(x Result) float64 { return x.CallsPerSec }

func col(rs []Result, f func(Result) float64) []float64 {
	out := make([]float64, len(rs))
	for i, x := range rs {
		out[i] = f(x)
	}
	return out
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func optional(v float64) string {
	if v == 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f", v)
}

// pairedRatios returns num/den for each round both have a run in.
func pairedRatios(num, den []Result) []float64 {
	byRound := map[int]float64{}
	for _, d := range den {
		byRound[d.Round] = d.CallsPerSec
	}
	var out []float64
	for _, n := range num {
		if d, ok := byRound[n.Round]; ok && d > 0 {
			out = append(out, n.CallsPerSec/d)
		}
	}
	return out
}
