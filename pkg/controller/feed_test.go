package controller

import (
	"testing"
	"time"

	"github.com/gantry-sched/gantry/internal/testing/k8s"
	"github.com/gantry-sched/gantry/pkg/admission"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/engine"
	"github.com/gantry-sched/gantry/pkg/resources"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// feedObjects is ClusterQueue cq with 4 GPUs of quota and LocalQueue ns/lq.
func feedObjects() *api.Objects {
	return &api.Objects{
		Flavors: []api.ResourceFlavor{{Meta: api.Meta{Name: "h"}}},
		ClusterQueues: []api.ClusterQueue{{Meta: api.Meta{Name: "cq"}, QueueingStrategy: api.BestEffortFIFO,
			ResourceGroups: []api.ResourceGroup{{CoveredResources: []resources.Name{resources.NvidiaGPU},
				Flavors: []api.FlavorQuotas{{Name: "h", Resources: []api.ResourceQuota{{Name: resources.NvidiaGPU, Nominal: 4}}}}}}}},
		LocalQueues: []api.LocalQueue{{Meta: api.Meta{Name: "lq", Namespace: "ns"}, ClusterQueue: "cq"}},
	}
}

// feedScheduler is a scheduler over feedObjects with its quota and an empty cluster.
func feedScheduler(t *testing.T) (*engine.Scheduler, *admission.Quota, *cluster.Snapshot) {
	t.Helper()
	objs := feedObjects()
	s, err := engine.Build(objs, engine.DefaultPolicy())
	if err != nil {
		t.Fatal(err)
	}
	quota, err := admission.NewQuota(objs, admission.Options{})
	if err != nil {
		t.Fatal(err)
	}
	empty, err := cluster.NewSnapshot(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s, quota, empty
}

// trackedGPUs is a pending Workload ns/name of one pod with gpus GPUs, converted.
func trackedGPUs(t *testing.T, f *feeder, name string, gpus int64, generation int64) *tracked {
	t.Helper()
	obj := k8s.MakeWorkload("ns", name).Obj()
	obj.Generation = generation
	obj.Spec.PodSets[0].Requests = corev1.ResourceList{"nvidia.com/gpu": *resource.NewQuantity(gpus, resource.DecimalSI)}
	model, err := f.model(&obj, 0)
	if err != nil {
		t.Fatal(err)
	}
	return &tracked{obj: &obj, model: model, cq: "cq"}
}

// TestFeederReportsOnlyChanges: a pass whose state did not change tells the scheduler
// nothing (parked workloads stay parked); a foreign pod leaving wakes the workloads the
// nodes refused, a changed spec is submitted anew, a deleted workload is finished.
func TestFeederReportsOnlyChanges(t *testing.T) {
	s, quota, empty := feedScheduler(t)
	f := newFeeder()
	big, small := trackedGPUs(t, f, "big", 8, 1), trackedGPUs(t, f, "small", 1, 1) // over quota; no node
	cs := &cycleState{byID: map[api.WorkloadID]*tracked{"ns/big": big, "ns/small": small}, occupants: map[string]bool{"pod:ns/x": true}}
	observe := func(cs *cycleState) {
		t.Helper()
		if _, errs := f.observe(s, cs, 1); len(errs) > 0 {
			t.Fatalf("observe: %v", errs)
		}
	}
	observe(cs)
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	p := s.Cycle(engine.World{Now: now, Cluster: empty, Quota: quota})
	s.Committed(p, nil)
	if s.Parked("ns/big") != engine.ParkedQuota || s.Parked("ns/small") != engine.ParkedNodes {
		t.Fatalf("parked big %v, small %v; want quota and nodes (plan %+v)", s.Parked("ns/big"), s.Parked("ns/small"), p)
	}

	observe(cs)
	if s.Parked("ns/big") != engine.ParkedQuota || s.Parked("ns/small") != engine.ParkedNodes {
		t.Errorf("an unchanged pass woke big (%v) or small (%v)", s.Parked("ns/big"), s.Parked("ns/small"))
	}
	if got, _ := f.model(big.obj, 0); got != big.model {
		t.Errorf("an unchanged workload was converted again")
	}

	cs.occupants = map[string]bool{}
	observe(cs)
	if s.Parked("ns/small") != engine.NotParked || s.Parked("ns/big") != engine.ParkedQuota {
		t.Errorf("after a foreign pod left: small %v, big %v; want small woken, big still parked", s.Parked("ns/small"), s.Parked("ns/big"))
	}

	cs.byID["ns/big"] = trackedGPUs(t, f, "big", 8, 2)
	observe(cs)
	if s.Parked("ns/big") != engine.NotParked {
		t.Errorf("big after a spec change: %v, want submitted anew (not parked)", s.Parked("ns/big"))
	}

	delete(cs.byID, "ns/big")
	observe(cs)
	if _, known := s.Resolution("ns/big"); known {
		t.Errorf("deleted big is still known to the scheduler")
	}
}

// TestFeederStartsAndRequeues: an admitted workload seen for the first time is
// submitted and started; one that lost its admission is requeued.
func TestFeederStartsAndRequeues(t *testing.T) {
	s, quota, empty := feedScheduler(t)
	considered := func() int64 {
		s.Cycle(engine.World{Now: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), Cluster: empty, Quota: quota})
		_, c := s.Stats()
		return c
	}
	f := newFeeder()
	run := trackedGPUs(t, f, "run", 1, 1)
	run.obj.Status.Admission = &v1alpha1.Admission{ClusterQueue: "cq"}
	cs := &cycleState{byID: map[api.WorkloadID]*tracked{"ns/run": run}}
	if _, errs := f.observe(s, cs, 0); len(errs) > 0 || !f.known["ns/run"].running {
		t.Fatalf("errors %v, known %+v; want ns/run started", errs, f.known["ns/run"])
	}
	if c := considered(); c != 0 {
		t.Errorf("a started workload was handed to a cycle as pending (%d)", c)
	}
	if changed, _ := f.observe(s, cs, 0); changed {
		t.Errorf("observing the same state again reported a change")
	}
	run.obj.Status.Admission = nil
	if _, errs := f.observe(s, cs, 0); len(errs) > 0 || f.known["ns/run"].running {
		t.Fatalf("errors %v, known %+v; want ns/run requeued", errs, f.known["ns/run"])
	}
	if c := considered(); c != 1 {
		t.Errorf("requeued ns/run handed to %d cycles, want the next one", c)
	}
}
