package main

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
)

func TestHeapFloor(t *testing.T) {
	// The goal check assumes the default pace, whatever GOGC the test
	// process was started with.
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	for _, tc := range []struct {
		name, gogc, memlimit string
		floor                bool
	}{
		{name: "default", floor: true},
		{name: "GOGC set", gogc: "100"},
		{name: "GOMEMLIMIT set", memlimit: "1GiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("GOGC", tc.gogc)
			t.Setenv("GOMEMLIMIT", tc.memlimit)
			ballast = nil
			defer func() { ballast = nil }()
			setHeapFloor()
			if got := ballast != nil; got != tc.floor {
				t.Fatalf("ballast set = %v, want %v", got, tc.floor)
			}
			runtime.GC()
			s := []metrics.Sample{{Name: "/gc/heap/goal:bytes"}}
			metrics.Read(s)
			goal := s[0].Value.Uint64()
			if tc.floor && goal < 2*ballastSize {
				t.Errorf("heap goal %d MiB with the floor, want at least %d MiB", goal>>20, 2*ballastSize>>20)
			}
			runtime.KeepAlive(ballast)
		})
	}
}
