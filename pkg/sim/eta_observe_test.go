package sim

import (
	"strings"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/plan"
)

// PendingETAOf gives explain's quota ETA, and with another belief about the running
// workloads' ends, the ETA that belief implies.
func TestPendingETAOf(t *testing.T) {
	// c needs 6 of 8 GPUs; a (4, ends 1h) and b (4, ends 40m) run.
	objs := MakeWorld().Pool("h", 2, 8, api.CapacityOnDemand).Queue("cq", 8, "h").
		Job("a", 1, 4, 0, time.Hour, 0).Job("b", 1, 4, 0, 40*time.Minute, 0).Job("c", 1, 6, time.Minute, time.Hour, 0).Obj()
	halfHour := func(_ *api.Workload, started, _ time.Duration) (time.Duration, bool) {
		return started + 30*time.Minute, true
	}
	unknown := func(*api.Workload, time.Duration, time.Duration) (time.Duration, bool) { return 0, false }
	tests := []struct {
		name string
		end  RunningEnd
		want time.Duration // 0: no ETA
	}{
		{name: "explain's ends", want: time.Hour},
		{name: "every run ends at 30m", end: halfHour, want: 30 * time.Minute},
		{name: "no end known", end: unknown},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestSim(t, objs)
			if err := s.RunUntil(10 * time.Minute); err != nil {
				t.Fatal(err)
			}
			got, ok := s.PendingETAOf("ns/c", tc.end)
			if !ok || got.Layer != plan.LayerAdmission || got.Reservation != nil {
				t.Fatalf("PendingETAOf = %+v, %v: want a quota hold", got, ok)
			}
			at, has := got.ETA()
			if has != (tc.want > 0) || (has && at != Seconds(tc.want)) {
				t.Errorf("ETA = %v (%v), want %v", time.Duration(at), has, tc.want)
			}
			if tc.end == nil {
				e, _ := s.Explain("ns/c")
				if e.ETA == nil || *e.ETA != at {
					t.Errorf("explain's ETA %v differs from %v", e.ETA, at)
				}
			}
			if _, ok := s.PendingETAOf("ns/a", tc.end); ok {
				t.Error("a running workload has a pending ETA")
			}
		})
	}
}

// SetArrivalPriority ranks a workload before it arrives and is refused after.
func TestSetArrivalPriority(t *testing.T) {
	objs := MakeWorld().Pool("h", 1, 8, api.CapacityOnDemand).Queue("cq", 8, "h").
		Job("a", 1, 8, 0, time.Hour, 0).Job("b", 1, 8, time.Minute, time.Hour, 0).Obj()
	s := newTestSim(t, objs)
	if err := s.SetArrivalPriority("ns/b", 7); err != nil {
		t.Fatal(err)
	}
	if err := s.RunUntil(2 * time.Minute); err != nil {
		t.Fatal(err)
	}
	if got := s.objs.Workloads[1].Priority; got != 7 {
		t.Errorf("b's priority %d, want 7", got)
	}
	for _, tc := range []struct{ id, want string }{{"ns/b", "its priority is fixed"}, {"ns/zz", "not found"}} {
		if err := s.SetArrivalPriority(api.WorkloadID(tc.id), 1); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.id, err, tc.want)
		}
	}
}
