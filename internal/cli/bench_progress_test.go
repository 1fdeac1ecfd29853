package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestBenchMeterOnlyBesideTables: machine output gets no progress at all, and the nil
// meter's helpers hand the bench package nothing to call.
func TestBenchMeterOnlyBesideTables(t *testing.T) {
	var out bytes.Buffer
	for _, o := range []outputFormat{outputJSON, outputYAML} {
		m := benchMeter(&out, o)
		if m != nil {
			t.Fatalf("-o %s: a progress meter", o)
		}
		if p := newStepMeter(m, "cycles timed", func() string { return "" }).progress(); p != nil {
			t.Errorf("-o %s: a progress callback", o)
		}
		if _, obs := simRun(m, 10, ""); len(obs) != 0 {
			t.Errorf("-o %s: %d simulation observers", o, len(obs))
		}
	}
	if benchMeter(&out, outputTable) == nil {
		t.Error("-o table: no progress meter")
	}
}

// TestStepMeterLines: off a terminal, a bench run's steps print a line every 10 s of
// wall time after the first 2 s, and a last one; a short run prints nothing.
func TestStepMeterLines(t *testing.T) {
	run := func(steps int, each time.Duration) string {
		var out bytes.Buffer
		clock := time.Unix(0, 0)
		s := newStepMeter(newProgressMeter(&out, func() time.Time { return clock }), "cycles timed", func() string { return "burst" })
		report := s.progress()
		for i := 1; i <= steps; i++ {
			clock = clock.Add(each)
			report(i, steps)
		}
		s.finish()
		return out.String()
	}
	if got := run(5, 200*time.Millisecond); got != "" {
		t.Errorf("a one-second run printed %q", got)
	}
	lines := strings.Split(strings.TrimSpace(run(60, time.Second)), "\n")
	// Lines at 2, 12, 22, 32, 42 and 52 s, then the last at 60 s.
	if len(lines) != 7 {
		t.Fatalf("%d lines for a 60-second run, want 7:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	if want := "progress: 2/60 cycles timed, burst, 2s elapsed"; lines[0] != want {
		t.Errorf("first line %q, want %q", lines[0], want)
	}
	if want := "progress: 60/60 cycles timed, burst, 1m0s elapsed"; lines[6] != want {
		t.Errorf("last line %q, want %q", lines[6], want)
	}
}
