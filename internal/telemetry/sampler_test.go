package telemetry

import "testing"

// TestParseSampler checks every OTEL_TRACES_SAMPLER name the server
// knows, with and without the parentbased_ prefix, and the names it
// refuses.
func TestParseSampler(t *testing.T) {
	for _, tc := range []struct {
		name, arg string
		want      sampler
		bad       bool
	}{
		{name: "always_on", want: newSampler(false, 1)},
		{name: "always_off", want: newSampler(false, 0)},
		{name: "traceidratio", arg: "0.25", want: newSampler(false, 0.25)},
		{name: "traceidratio", want: newSampler(false, 1)},
		{name: "parentbased_always_on", want: newSampler(true, 1)},
		{name: "parentbased_always_off", want: newSampler(true, 0)},
		{name: "parentbased_traceidratio", arg: "0.5", want: newSampler(true, 0.5)},
		{name: "parentbased_parentbased_always_on", bad: true},
		{name: "parentbased_", bad: true},
		{name: "always", bad: true},
		{name: "traceidratio", arg: "2", bad: true},
	} {
		got, err := parseSampler(tc.name, tc.arg)
		if tc.bad {
			if err == nil {
				t.Errorf("parseSampler(%q, %q) = %+v, want an error", tc.name, tc.arg, got)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("parseSampler(%q, %q) = %+v, %v; want %+v", tc.name, tc.arg, got, err, tc.want)
		}
	}
}
