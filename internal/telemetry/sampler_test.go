package telemetry

import (
	"fmt"
	"testing"
)

// TestParseSampler checks every OTEL_TRACES_SAMPLER name the server
// knows, with and without the parentbased_ prefix, and the names it
// refuses.
func TestParseSampler(t *testing.T) {
	const parent = "ParentBased{root:%s,remoteParentSampled:AlwaysOnSampler,remoteParentNotSampled:AlwaysOffSampler,localParentSampled:AlwaysOnSampler,localParentNotSampled:AlwaysOffSampler}"
	for _, tc := range []struct {
		name, arg string
		want      string // the sampler's Description
		bad       bool
	}{
		{name: "always_on", want: "AlwaysOnSampler"},
		{name: "always_off", want: "AlwaysOffSampler"},
		{name: "traceidratio", arg: "0.25", want: "TraceIDRatioBased{0.25}"},
		{name: "traceidratio", want: "TraceIDRatioBased{1}"},
		{name: "parentbased_always_on", want: fmt.Sprintf(parent, "AlwaysOnSampler")},
		{name: "parentbased_always_off", want: fmt.Sprintf(parent, "AlwaysOffSampler")},
		{name: "parentbased_traceidratio", arg: "0.5", want: fmt.Sprintf(parent, "TraceIDRatioBased{0.5}")},
		{name: "parentbased_parentbased_always_on", bad: true},
		{name: "parentbased_", bad: true},
		{name: "always", bad: true},
		{name: "traceidratio", arg: "2", bad: true},
	} {
		got, err := parseSampler(tc.name, tc.arg)
		if tc.bad {
			if err == nil {
				t.Errorf("parseSampler(%q, %q) = %v, want an error", tc.name, tc.arg, got.Description())
			}
			continue
		}
		if err != nil || got.Description() != tc.want {
			t.Errorf("parseSampler(%q, %q) = %v, %v; want %s", tc.name, tc.arg, got, err, tc.want)
		}
	}
}
