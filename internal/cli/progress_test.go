package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/pkg/sim"
)

// Off a terminal, a long run prints a plain line every progressEvery of wall time (the
// first after progressAfter) and a last one; a short run prints nothing.
func TestProgressLinesOffATerminal(t *testing.T) {
	run := func(step time.Duration, events int) string {
		var out bytes.Buffer
		clock := time.Unix(0, 0)
		p := newProgress(&out, 10000, func() time.Time { return clock })
		for i := 1; i <= events; i++ {
			clock = clock.Add(step)
			kind := sim.EvPlaced
			if i%2 == 0 {
				kind = sim.EvFinished
			}
			p.OnEvent(sim.EventRecord{T: sim.Seconds(i), Event: kind})
		}
		p.done()
		return out.String()
	}
	if got := run(time.Millisecond, 1024); got != "" {
		t.Errorf("a 1-second run printed %q, want nothing", got)
	}
	got := run(10*time.Millisecond, 5120) // 51 s of wall time, checked every 512 events
	lines := strings.Split(strings.TrimSpace(got), "\n")
	if len(lines) < 4 || len(lines) > 7 {
		t.Fatalf("%d lines for a 51-second run, want one every 10 s and a last one:\n%s", len(lines), got)
	}
	if want := "progress: 2560/10000 workloads finished"; !strings.HasPrefix(lines[len(lines)-1], want) {
		t.Errorf("last line %q, want it to start %q", lines[len(lines)-1], want)
	}
	if strings.Contains(got, "\r") {
		t.Error("a carriage return off a terminal")
	}
}
