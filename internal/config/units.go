package config

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"os"
	"strconv"
	"strings"
	"time"
)

// Size is an amount of bytes. In the file it is a plain integer (bytes) or
// a string with a binary unit: B, KiB, MiB, GiB or TiB (powers of 1024),
// case-insensitive, with optional space between number and unit ("64MiB",
// "4 KiB", "1024"). KB, MB, GB and TB are refused: they mean powers of 1000
// to some readers and of 1024 to others. The string may use ${NAME}
// environment references.
type Size uint64

var sizeUnits = []struct {
	name string
	mult uint64
}{
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"tib", 1 << 40},
	{"b", 1},
}

// ambiguousUnits are the decimal-looking units a Size refuses, with the
// binary unit to write instead.
var ambiguousUnits = map[string]string{
	"kb": "KiB", "mb": "MiB", "gb": "GiB", "tb": "TiB",
	"k": "KiB", "m": "MiB", "g": "GiB", "t": "TiB",
}

// ParseSize parses a size as written in the configuration file, without
// environment expansion.
func ParseSize(s string) (Size, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, errors.New("empty size")
	}
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, fmt.Errorf("invalid size %q: want a number of bytes or a number with a unit, e.g. \"64MiB\"", s)
	}
	n, err := strconv.ParseUint(t[:i], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("invalid size %q: too large", s)
	}
	unit := strings.ToLower(strings.TrimSpace(t[i:]))
	if unit == "" {
		return Size(n), nil
	}
	for _, u := range sizeUnits {
		if unit == u.name {
			hi, lo := bits.Mul64(n, u.mult)
			if hi != 0 {
				return 0, fmt.Errorf("invalid size %q: too large", s)
			}
			return Size(lo), nil
		}
	}
	if bin, ok := ambiguousUnits[unit]; ok {
		return 0, fmt.Errorf("invalid size %q: %q is ambiguous (powers of 1000 or of 1024?); write %q (powers of 1024) or a number of bytes", s, strings.TrimSpace(t[i:]), t[:i]+bin)
	}
	return 0, fmt.Errorf("invalid size %q: unknown unit %q (use B, KiB, MiB, GiB or TiB)", s, t[i:])
}

// String formats s with the largest binary unit that divides it exactly,
// e.g. "64MiB", "1500B".
func (s Size) String() string {
	n := uint64(s)
	for _, u := range []struct {
		name string
		mult uint64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n != 0 && n%u.mult == 0 {
			return strconv.FormatUint(n/u.mult, 10) + u.name
		}
	}
	return strconv.FormatUint(n, 10) + "B"
}

// MarshalText implements encoding.TextMarshaler with [Size.String].
func (s Size) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler: ${NAME} references are
// expanded from the environment, then the result is parsed with
// [ParseSize].
func (s *Size) UnmarshalText(b []byte) error { return unmarshalExpanded(b, ParseSize, s) }

// unmarshalExpanded expands the ${NAME} references in b from the
// environment and stores what parse makes of the result in dst.
func unmarshalExpanded[T any](b []byte, parse func(string) (T, error), dst *T) error {
	str, err := expand(string(b), os.LookupEnv)
	if err != nil {
		return err
	}
	v, err := parse(str)
	if err != nil {
		return err
	}
	*dst = v
	return nil
}

// Duration is a length of time, written as a Go duration string such as
// "5s", "250ms" or "1m30s". A bare number is refused because its unit
// would be a guess. The string may use ${NAME} environment references.
type Duration time.Duration

// ParseDuration parses a duration as written in the configuration file,
// without environment expansion.
func ParseDuration(s string) (Duration, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, errors.New("empty duration")
	}
	if _, err := strconv.ParseFloat(t, 64); err == nil {
		return 0, fmt.Errorf("invalid duration %q: add a unit, e.g. \"%ss\" or \"%sms\"", s, t, t)
	}
	d, err := time.ParseDuration(t)
	if err != nil {
		return 0, fmt.Errorf("invalid duration %q: want e.g. \"5s\", \"250ms\" or \"1m30s\"", s)
	}
	return Duration(d), nil
}

// String formats d like time.Duration.String.
func (d Duration) String() string { return time.Duration(d).String() }

// Std returns d as a time.Duration.
func (d Duration) Std() time.Duration { return time.Duration(d) }

// MarshalText implements encoding.TextMarshaler with [Duration.String].
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler: ${NAME} references are
// expanded from the environment, then the result is parsed with
// [ParseDuration].
func (d *Duration) UnmarshalText(b []byte) error { return unmarshalExpanded(b, ParseDuration, d) }

// maxMemory is the most linear memory a wasm32 module can address.
const maxMemory = Size(math.MaxUint32) + 1

// Rate is a call rate as written in the configuration file: a count per
// second, minute or hour ("10/s", "30/m", "100/h"; "second", "minute"
// and "hour" are accepted too). The zero value is no limit.
type Rate struct {
	// Count calls per Per.
	Count float64
	Per   time.Duration
}

// ParseRate parses a rate as written in the configuration file, without
// environment expansion.
func ParseRate(s string) (Rate, error) {
	n, unit, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok {
		return Rate{}, fmt.Errorf("invalid rate %q: write a count per unit, e.g. \"10/s\", \"30/m\" or \"100/h\"", s)
	}
	count, err := strconv.ParseFloat(strings.TrimSpace(n), 64)
	if err != nil || !(count > 0 && count <= 1e9) {
		return Rate{}, fmt.Errorf("invalid rate %q: the count must be a positive number up to 1e9", s)
	}
	var per time.Duration
	switch strings.TrimSpace(unit) {
	case "s", "second":
		per = time.Second
	case "m", "minute":
		per = time.Minute
	case "h", "hour":
		per = time.Hour
	default:
		return Rate{}, fmt.Errorf("invalid rate %q: the unit must be s, m or h", s)
	}
	return Rate{Count: count, Per: per}, nil
}

// PerSecond is the rate in calls a second; 0 for the zero value.
func (r Rate) PerSecond() float64 {
	if r.Per <= 0 {
		return 0
	}
	return r.Count / r.Per.Seconds()
}

// IsZero reports whether r is no limit.
func (r Rate) IsZero() bool { return r.Per <= 0 }

// String is r as the configuration file writes it ("10/s").
func (r Rate) String() string {
	if r.IsZero() {
		return ""
	}
	unit := map[time.Duration]string{time.Second: "s", time.Minute: "m", time.Hour: "h"}[r.Per]
	return strconv.FormatFloat(r.Count, 'g', -1, 64) + "/" + unit
}

// MarshalText implements encoding.TextMarshaler with [Rate.String].
func (r Rate) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler: ${NAME} references are
// expanded from the environment, then the result is parsed with
// [ParseRate].
func (r *Rate) UnmarshalText(b []byte) error { return unmarshalExpanded(b, ParseRate, r) }
