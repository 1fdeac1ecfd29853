package controller

import (
	"testing"
	"time"

	"github.com/gantry-sched/gantry/internal/testing/k8s"
)

// passCount reads how many passes the running controller has made (the cycle
// duration histogram's sample count).
func (f *fixture) passCount() uint64 {
	f.t.Helper()
	mfs, err := f.reg.Gather()
	if err != nil {
		f.t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "gantry_cycle_duration_seconds" {
			return mf.GetMetric()[0].GetHistogram().GetSampleCount()
		}
	}
	return 0
}

// TestPassesAreEventDriven: an idle cluster gets (next to) no passes, not a polling loop; a new
// Job wakes the controller, which admits and binds it well within the 30 s resync.
func TestPassesAreEventDriven(t *testing.T) {
	f := newFixture(t)
	f.create(k8s.MakeNode("ev-1").H100(4).Obj(), k8s.MakeFlavor("h100").Obj(),
		k8s.MakeClusterQueue("ev-cq").Quota("h100", "nvidia.com/gpu", "4").Obj(), k8s.MakeLocalQueue("", "lq", "ev-cq").Obj())
	f.startController()
	f.eventually(10*time.Second, "first pass", func() (bool, string) { return f.passCount() > 0, "no pass yet" })
	// Let the start-up writes settle, then watch an idle second.
	var idle uint64
	f.eventually(10*time.Second, "controller idle", func() (bool, string) {
		before := f.passCount()
		time.Sleep(time.Second)
		idle = f.passCount()
		return idle == before, "still passing"
	})
	// A polling loop at the 100 ms interval would make about 20 passes in 2 s. Cleanup
	// of earlier tests' namespaces (watched cluster-wide) may still cause a stray one.
	time.Sleep(2 * time.Second)
	if n := f.passCount(); n-idle > 2 {
		t.Errorf("%d passes in 2 idle seconds; want at most 2 (passes must be event-driven)", n-idle)
	}
	f.create(k8s.MakeJob("", "wake").Queue("lq").Pods(1).GPUs("1").Obj())
	f.waitBound("wake", 1)
	if n := f.passCount(); n <= idle {
		t.Errorf("pass count %d did not grow after a Job was created", n)
	}
}
