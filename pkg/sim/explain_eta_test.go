package sim

import (
	"strings"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
)

// A workload held by quota gets an ETA estimated from the expected ends of the running
// workloads of its cohort tree, and the explanation says which estimate it is.
func TestExplainQuotaETA(t *testing.T) {
	cases := []struct {
		name      string
		objs      *api.Objects
		wantETA   time.Duration // 0: no ETA
		wantBasis string        // in ETABasis ("" with no ETA)
	}{
		// want: c needs 6 of 8; a (4, ends 1h) and b (4, ends 40m) run: once b ends, 4 are free
		// (not enough), once a ends too, 8: ETA 1h.
		{name: "second end frees enough", wantETA: time.Hour, wantBasis: "estimated from quota",
			objs: MakeWorld().Pool("h", 2, 8, api.CapacityOnDemand).Queue("cq", 8, "h").
				Job("a", 1, 4, 0, time.Hour, 0).Job("b", 1, 4, 0, 40*time.Minute, 0).Job("c", 1, 6, time.Minute, time.Hour, 0).Obj()},
		// want: a runs without a known end: no estimate.
		{name: "unknown end gives no ETA", wantETA: 0,
			objs: MakeWorld().Pool("h", 1, 8, api.CapacityOnDemand).Queue("cq", 8, "h").
				Job("a", 1, 8, 0, 0, 0).Job("c", 1, 6, time.Minute, time.Hour, 0).Obj()},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newTestSim(t, c.objs)
			if err := s.RunUntil(10 * time.Minute); err != nil {
				t.Fatal(err)
			}
			e, err := s.Explain("ns/c")
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case c.wantETA == 0 && e.ETA != nil:
				t.Errorf("ETA = %v, want none", time.Duration(*e.ETA))
			case c.wantETA > 0 && (e.ETA == nil || *e.ETA != Seconds(c.wantETA)):
				t.Errorf("ETA = %v, want %s (%s)", e.ETA, c.wantETA, e.ETABasis)
			}
			if !strings.Contains(e.ETABasis, c.wantBasis) || (c.wantBasis == "") != (e.ETABasis == "") {
				t.Errorf("ETA basis %q, want %q", e.ETABasis, c.wantBasis)
			}
		})
	}
}
