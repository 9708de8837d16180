package loadgen

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Result is the outcome of one throughput run. It is written as one JSON
// line per run and read back by Summarize.
type Result struct {
	Kind      string `json:"kind"`      // "throughput"
	Name      string `json:"name"`      // configuration, e.g. "stdio/wasmcp-c"
	Round     int    `json:"round"`     // which round of run.sh (runs of one round are paired)
	Transport string `json:"transport"` // "stdio" or "http"
	Mode      Mode   `json:"mode"`
	// InFlight is the requests kept outstanding (stdio) or the number of
	// concurrent clients (HTTP).
	InFlight    int     `json:"in_flight"`
	Calls       int     `json:"calls"`
	Seconds     float64 `json:"seconds"`
	CallsPerSec float64 `json:"calls_per_s"`
	P50us       float64 `json:"p50_us"`
	P90us       float64 `json:"p90_us"`
	P99us       float64 `json:"p99_us"`
	MaxUs       float64 `json:"max_us"`
	// ServerCPUus is the server process's CPU time (user+system) per call
	// over the measured window, 0 when unknown; ClientCPUus is the load
	// generator's own.
	ServerCPUus float64 `json:"server_cpu_us_per_call"`
	ClientCPUus float64 `json:"client_cpu_us_per_call"`
	Errors      int     `json:"errors"`
	FirstError  string  `json:"first_error,omitempty"`
	Load1       float64 `json:"load1"` // 1-minute load average at the end
}

// setTimes fills the rate and the latency percentiles.
func (r *Result) setTimes(window time.Duration, lat []time.Duration) {
	r.Seconds = window.Seconds()
	if window > 0 {
		r.CallsPerSec = float64(r.Calls) / window.Seconds()
	}
	slices.Sort(lat)
	r.P50us = us(Percentile(lat, 50))
	r.P90us = us(Percentile(lat, 90))
	r.P99us = us(Percentile(lat, 99))
	if len(lat) > 0 {
		r.MaxUs = us(lat[len(lat)-1])
	}
	r.Load1 = Load1()
}

// String formats r on one line.
func (r *Result) String() string {
	s := fmt.Sprintf("%-24s %9.0f calls/s  p50 %7.0f µs  p99 %7.0f µs  max %7.0f µs  (%d calls in %.2fs, %d in flight)",
		r.Name, r.CallsPerSec, r.P50us, r.P99us, r.MaxUs, r.Calls, r.Seconds, r.InFlight)
	if r.ServerCPUus > 0 {
		s += fmt.Sprintf("  server CPU %.1f µs/call", r.ServerCPUus)
	}
	s += fmt.Sprintf("  client CPU %.1f µs/call  load %.2f", r.ClientCPUus, r.Load1)
	if r.Errors > 0 {
		s += fmt.Sprintf("  ERRORS %d (first: %s)", r.Errors, r.FirstError)
	}
	return s
}

// Percentile returns the p-th percentile (nearest rank) of sorted values.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted))*p/100+0.5) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

func perCall(d time.Duration, calls int) float64 {
	if calls == 0 {
		return 0
	}
	return us(d) / float64(calls)
}

// clockTick is the unit of /proc/PID/stat times (USER_HZ, 100 on Linux).
const clockTick = 10 * time.Millisecond

// ProcCPU returns the CPU time (user + system) process pid has used, from
// /proc/PID/stat. Its resolution is 10 ms.
func ProcCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may contain spaces; fields after it
	// start after the last ')'. utime and stime are fields 14 and 15.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("unexpected /proc/%d/stat", pid)
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("unexpected /proc/%d/stat", pid)
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("unexpected /proc/%d/stat", pid)
	}
	return time.Duration(ut+st) * clockTick, nil
}

// selfCPU returns this process's CPU time (user + system).
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Load1 returns the 1-minute load average, or 0 if unknown.
func Load1() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}
