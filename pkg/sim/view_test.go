package sim

import (
	"slices"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/engine"
	"github.com/gantry-sched/gantry/pkg/resources"
	"github.com/gantry-sched/gantry/pkg/view"
)

// viewWorld: one 8-GPU queue over two 8-GPU nodes. "a" takes the quota for an hour, so
// "b" waits for quota; "c" is submitted at 2h.
func viewWorld() *api.Objects {
	return MakeWorld().Pool("od", 2, 8, "on-demand").Queue("cq", 8, "od").
		Job("a", 1, 8, 0, time.Hour, 0).
		Job("b", 1, 8, 0, 30*time.Minute, 0).
		Job("c", 1, 4, 2*time.Hour, 10*time.Minute, 0).Obj()
}

func newViewSim(t *testing.T, at time.Duration) *Simulator {
	t.Helper()
	s, err := New(viewWorld(), Options{Policy: engine.Policy{Config: engine.Config{Preemption: true, Reservations: true, Grace: time.Minute}, Seed: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.RunUntil(at); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestViewWorkloadsAtTimes(t *testing.T) {
	cases := []struct {
		at                        time.Duration
		wantPhase                 map[string]view.Phase
		wantUsedGPU               resources.MilliGPU
		wantPending, wantAdmitted int
		wantHeldBy                string // the workload holding GPUs, "" for none
	}{
		{at: 10 * time.Minute, wantPhase: map[string]view.Phase{"ns/a": view.Running, "ns/b": view.Pending, "ns/c": view.NotYet},
			wantUsedGPU: 8000, wantPending: 1, wantAdmitted: 1, wantHeldBy: "ns/a"},
		{at: 70 * time.Minute, wantPhase: map[string]view.Phase{"ns/a": view.Finished, "ns/b": view.Running, "ns/c": view.NotYet},
			wantUsedGPU: 8000, wantAdmitted: 1, wantHeldBy: "ns/b"},
		{at: 3 * time.Hour, wantPhase: map[string]view.Phase{"ns/a": view.Finished, "ns/b": view.Finished, "ns/c": view.Finished}},
	}
	for _, c := range cases {
		t.Run(FormatDuration(Seconds(c.at)), func(t *testing.T) {
			s := newViewSim(t, c.at)
			v := s.View()
			if v.Elapsed != c.at || v.Source != "simulation" {
				t.Errorf("elapsed %s source %q, want %s simulation", v.Elapsed, v.Source, c.at)
			}
			for _, w := range v.Workloads {
				if w.Phase != c.wantPhase[w.ID] {
					t.Errorf("%s: phase %s, want %s", w.ID, w.Phase, c.wantPhase[w.ID])
				}
				sameAsExplain(t, s, w)
			}
			if len(v.Queues) != 1 {
				t.Fatalf("queues %+v, want cq only", v.Queues)
			}
			q := v.Queues[0]
			if q.NominalGPU != 8000 || q.UsedGPU != c.wantUsedGPU || q.Pending != c.wantPending || q.Admitted != c.wantAdmitted {
				t.Errorf("queue %+v: want nominal 8000, used %d, pending %d, admitted %d", q, c.wantUsedGPU, c.wantPending, c.wantAdmitted)
			}
			if got := holders(v.Nodes); !slices.Equal(got, nonEmpty(c.wantHeldBy)) {
				t.Errorf("GPU holders %v, want %v", got, nonEmpty(c.wantHeldBy))
			}
		})
	}
}

// sameAsExplain checks a view workload against Explain at the same time: the view
// must never tell another story than `gantry explain`.
func sameAsExplain(t *testing.T, s *Simulator, w view.Workload) {
	t.Helper()
	e, err := s.Explain(api.WorkloadID(w.ID))
	if err != nil {
		t.Fatal(err)
	}
	if w.Layer != e.Layer || w.Reason != e.Reason || w.Remedy != e.Remedy || w.Position != e.Position ||
		!slices.Equal(w.Details, e.Details) || w.ETABasis != e.ETABasis || w.Preemptions != e.Preemptions {
		t.Errorf("%s: view %+v differs from explain %+v", w.ID, w, e)
	}
	switch {
	case (w.ETA == nil) != (e.ETA == nil):
		t.Errorf("%s: view ETA %v, explain ETA %v", w.ID, w.ETA, e.ETA)
	case w.ETA != nil && *w.ETA != e.ETA.Duration()-s.Now():
		t.Errorf("%s: view ETA %s from now, explain ETA at %s (now %s)", w.ID, *w.ETA, e.ETA.Duration(), s.Now())
	}
	if len(w.Placements) != len(e.Pods) {
		t.Errorf("%s: %d placements, explain has %d pods", w.ID, len(w.Placements), len(e.Pods))
	}
}

// holders lists the distinct workloads holding a device, sorted.
func holders(nodes []view.Node) []string {
	var out []string
	for _, n := range nodes {
		for _, g := range n.GPUs {
			for _, d := range g.Devices {
				if d.Holder != "" {
					out = append(out, d.Holder)
				}
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}

func TestViewPendingWorkloadWaitsForQuota(t *testing.T) {
	s := newViewSim(t, 10*time.Minute)
	v := s.View()
	var b *view.Workload
	for i := range v.Workloads {
		if v.Workloads[i].ID == "ns/b" {
			b = &v.Workloads[i]
		}
	}
	if b == nil {
		t.Fatal("ns/b missing from the view")
	}
	if b.Layer != "admission" || b.Position < 1 || b.Waited != 10*time.Minute || b.GPU != 8000 || b.Pods != 1 {
		t.Errorf("ns/b: %+v: want held by admission with a position, waiting 10m, 8 GPUs in 1 pod", *b)
	}
	// a ends at 1h and frees the quota b needs: 50 minutes from now.
	if b.ETA == nil || *b.ETA != 50*time.Minute {
		t.Errorf("ns/b: ETA %v, want 50m from now", b.ETA)
	}
}

func TestViewNodesShowDevicesAndHolders(t *testing.T) {
	v := newViewSim(t, 10*time.Minute).View()
	if len(v.Nodes) != 2 {
		t.Fatalf("nodes %d, want 2", len(v.Nodes))
	}
	var allocated resources.MilliGPU
	held := 0
	for _, n := range v.Nodes {
		if !n.Ready || n.Pool != "od" || len(n.GPUs) != 8 {
			t.Errorf("node %s: ready %v pool %q %d GPUs, want ready, od, 8", n.Name, n.Ready, n.Pool, len(n.GPUs))
		}
		for _, g := range n.GPUs {
			allocated += g.Allocated
			if len(g.Devices) != 1 || g.Devices[0].Share != resources.MilliPerGPU {
				t.Errorf("node %s GPU %d: devices %+v, want one whole GPU", n.Name, g.Index, g.Devices)
			}
			for _, d := range g.Devices {
				if d.Holder == "ns/a" {
					held++
				}
			}
		}
	}
	if allocated != 8000 || held != 8 {
		t.Errorf("allocated %d milli-GPU over %d devices held by ns/a, want 8000 over 8", allocated, held)
	}
}

// Two 8-GPU queues share cohort "org": a 16-GPU job of "left" borrows all of "right"'s
// quota; "right" is held.
func TestViewQueuesBorrowingAndHeld(t *testing.T) {
	objs := MakeWorld().Pool("od", 2, 8, "on-demand").Queue("left", 8, "od").Job("big", 2, 8, 0, time.Hour, 0).Obj()
	left := objs.ClusterQueues[0]
	left.Cohort = "org"
	right := left
	right.Meta = api.Meta{Name: "right"}
	right.StopPolicy = api.StopHold
	objs.ClusterQueues = []api.ClusterQueue{left, right}
	s, err := New(objs, Options{Policy: engine.DefaultPolicy()})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.RunUntil(time.Minute); err != nil {
		t.Fatal(err)
	}
	v := s.View()
	if len(v.Queues) != 2 || len(v.Cohorts) != 1 || !slices.Equal(v.Cohorts[0].Queues, []string{"left", "right"}) {
		t.Fatalf("queues %+v cohorts %+v, want left and right under org", v.Queues, v.Cohorts)
	}
	l, r := v.Queues[0], v.Queues[1]
	if l.UsedGPU != 16000 || l.BorrowedGPU != 8000 || l.FairShare <= 0 || l.Held || l.Admitted != 1 {
		t.Errorf("left %+v: want 16 used, 8 borrowed, a fair share, not held, 1 admitted", l)
	}
	if r.UsedGPU != 0 || r.BorrowedGPU != 0 || r.FairShare != 0 || !r.Held {
		t.Errorf("right %+v: want nothing used, no share, held", r)
	}
	if len(l.Quota) != 1 || l.Quota[0].Flavor != "od" || l.Quota[0].Used != 16 || l.Quota[0].Borrowed != 8 {
		t.Errorf("left quota rows %+v, want od nvidia.com/gpu 16 used, 8 borrowed", l.Quota)
	}
}
