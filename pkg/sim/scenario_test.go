package sim

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/engine"
	"github.com/gantry-sched/gantry/pkg/placement"
	"github.com/gantry-sched/gantry/pkg/plan"
	"github.com/gantry-sched/gantry/pkg/resources"
)

func TestNodeFailureEvictsWholeGangAndRequeues(t *testing.T) {
	objs := MakeWorld().Pool("od", 3, 8, api.CapacityOnDemand).Queue("cq", 24, "od").
		Job("gang", 2, 8, 0, time.Hour, 10*time.Minute).
		Event(api.ClusterEvent{Meta: api.Meta{Name: "fail"}, Type: api.EventNodeFail, At: 25 * time.Minute, Nodes: []string{"od-0"}}).
		Obj()
	log, _ := runLog(t, objs, 1)
	got := fmt.Sprint(eventsOf(log, "ns/gang"))
	want := fmt.Sprint([]EventKind{EvSubmitted, EvAdmitted, EvPlaced, EvEvicted, EvRequeued, EvAdmitted, EvPlaced, EvFinished})
	if got != want {
		t.Fatalf("events of ns/gang = %s, want %s", got, want)
	}
	var evicted, placedAgain, finished EventRecord
	placedN := 0
	for _, r := range log {
		switch {
		case r.Workload == "ns/gang" && r.Event == EvEvicted:
			evicted = r
		case r.Workload == "ns/gang" && r.Event == EvPlaced:
			if placedN++; placedN == 2 {
				placedAgain = r
			}
		case r.Workload == "ns/gang" && r.Event == EvFinished:
			finished = r
		}
	}
	// 25 minutes run, last checkpoint at 20: 5 minutes of 16 GPUs lost.
	if want := int64(16000 * 5 * 60); evicted.LostGPUMilliSeconds != want {
		t.Errorf("lost = %d milli-GPU-s, want %d", evicted.LostGPUMilliSeconds, want)
	}
	if len(placedAgain.Pods) != 2 {
		t.Fatalf("re-placement pods = %+v, want the whole gang of 2", placedAgain.Pods)
	}
	for _, p := range placedAgain.Pods {
		if p.Node == "od-0" {
			t.Errorf("pod %s placed on the failed node", p.Name)
		}
	}
	// Resumes from the 20-minute checkpoint: 40 more minutes after the failure at 25m.
	if want := Seconds(65 * time.Minute); finished.T != want {
		t.Errorf("finished at %v s, want %v s", time.Duration(finished.T), time.Duration(want))
	}
}

func TestSpotInterruptionCheckpointsAndLandsOnDemand(t *testing.T) {
	objs := MakeWorld().Pool("spot", 1, 8, api.CapacitySpot).Pool("od", 1, 8, api.CapacityOnDemand).
		Queue("cq", 8, "spot", "od").
		Job("train", 1, 8, 0, time.Hour, 15*time.Minute).
		Event(api.ClusterEvent{Meta: api.Meta{Name: "reclaim"}, Type: api.EventSpotInterruption, At: 20 * time.Minute,
			Pool: "spot", Notice: 2 * time.Minute}).
		Obj()
	log, _ := runLog(t, objs, 1)
	got := fmt.Sprint(eventsOf(log, "ns/train"))
	want := fmt.Sprint([]EventKind{EvSubmitted, EvAdmitted, EvPlaced, EvInterrupted, EvEvicted, EvRequeued, EvAdmitted, EvPlaced, EvFinished})
	if got != want {
		t.Fatalf("events = %s, want %s", got, want)
	}
	var placements []EventRecord
	var evicted EventRecord
	for _, r := range log {
		if r.Workload == "ns/train" && r.Event == EvPlaced {
			placements = append(placements, r)
		}
		if r.Workload == "ns/train" && r.Event == EvEvicted {
			evicted = r
		}
	}
	if placements[0].Flavor != "spot" || placements[1].Flavor != "od" {
		t.Errorf("flavors = %s then %s, want spot then od", placements[0].Flavor, placements[1].Flavor)
	}
	if evicted.T != Seconds(22*time.Minute) {
		t.Errorf("evicted at %v, want at the end of the 2m notice (22m)", time.Duration(evicted.T))
	}
	// It checkpointed at the notice (20m): only the 2 notice minutes are lost.
	if want := int64(8000 * 120); evicted.LostGPUMilliSeconds != want {
		t.Errorf("lost = %d, want %d", evicted.LostGPUMilliSeconds, want)
	}
}

func TestEventLogIsDeterministic(t *testing.T) {
	build := func() *api.Objects {
		w := MakeWorld().Pool("spot", 2, 8, api.CapacitySpot).Pool("od", 2, 8, api.CapacityOnDemand).Queue("cq", 32, "spot", "od")
		for i := 0; i < 12; i++ {
			w.Job(fmt.Sprintf("j%02d", i), int32(1+i%2), int64(1+i%4), time.Duration(i)*time.Minute, time.Duration(10+i*3)*time.Minute, 5*time.Minute)
		}
		return w.Event(api.ClusterEvent{Meta: api.Meta{Name: "r"}, Type: api.EventSpotInterruption, At: 7 * time.Minute, Pool: "spot", Notice: time.Minute, ReturnAfter: 20 * time.Minute}).Obj()
	}
	_, a := runLog(t, build(), 7)
	_, b := runLog(t, build(), 7)
	if !bytes.Equal(a, b) {
		t.Fatal("two runs with the same inputs and seed wrote different event logs")
	}
	if bytes.Count(a, []byte(`"event":"finished"`)) != 12 {
		t.Errorf("want all 12 jobs finished; log:\n%s", a)
	}
}

func TestMIGRelayoutDrainsAndReturnsWithNewLayout(t *testing.T) {
	mig := devices.Sharing{Mode: devices.MIG, MIGStrategy: devices.MIGMixed, Layout: "all-1g.10gb"}
	objs := MakeWorld().Pool("h", 1, 1, api.CapacityOnDemand).Queue("cq", 8, "h").Covers("cq", "nvidia.com/mig-1g.10gb", 7).
		Job("whole", 1, 1, 0, time.Hour, 5*time.Minute).
		Job("slices", 1, 0, 12*time.Minute, 30*time.Minute, 0).
		Requests("slices", resources.Vector{"nvidia.com/mig-1g.10gb": 3}).
		Event(api.ClusterEvent{Meta: api.Meta{Name: "relayout"}, Type: api.EventMIGRelayout, At: 10 * time.Minute,
			Nodes: []string{"h-0"}, Sharing: &mig, ReconfigureTime: 5 * time.Minute}).
		Obj()
	log, _ := runLog(t, objs, 1)
	ev, ok := firstOf(log, "ns/whole", EvEvicted)
	if !ok || ev.T != Seconds(10*time.Minute) {
		t.Fatalf("whole GPU job evicted = %v at %v, want drained at 10m", ok, time.Duration(ev.T))
	}
	if ev.LostGPUMilliSeconds != 0 {
		t.Errorf("drain lost %d milli-GPU-s, want 0 (it checkpoints before the drain)", ev.LostGPUMilliSeconds)
	}
	placed, ok := firstOf(log, "ns/slices", EvPlaced)
	if !ok || placed.T != Seconds(15*time.Minute) {
		t.Fatalf("MIG job placed = %v at %v, want when the node returns at 15m", ok, time.Duration(placed.T))
	}
	if n := len(placed.Pods[0].Devices); n != 3 || !strings.Contains(placed.Pods[0].Devices[0], "mig-1g.10gb") {
		t.Errorf("devices = %v, want three 1g.10gb instances", placed.Pods[0].Devices)
	}
	// The whole-GPU job cannot run on the MIG layout: it stays pending with a reason.
	if got := fmt.Sprint(eventsOf(log, "ns/whole")); strings.Contains(got, "finished") {
		t.Errorf("whole-GPU job finished on a MIG-only node: %s", got)
	}
}

func TestPreemptionChainDoesNotCycle(t *testing.T) {
	objs := MakeWorld().Pool("h", 1, 8, api.CapacityOnDemand).Queue("cq", 8, "h").
		Job("low", 1, 8, 0, time.Hour, 10*time.Minute).
		Job("mid", 1, 8, 10*time.Minute, time.Hour, 10*time.Minute).
		Job("high", 1, 8, 20*time.Minute, 30*time.Minute, 0).
		Priority("mid", 5).Priority("high", 10).Obj()
	log, _ := runLog(t, objs, 1)
	preemptedBy := map[string][]string{}
	for _, r := range log {
		if r.Event == EvPreempted {
			preemptedBy[r.Workload] = append(preemptedBy[r.Workload], r.By)
		}
	}
	want := map[string][]string{"ns/low": {"ns/mid"}, "ns/mid": {"ns/high"}}
	if fmt.Sprint(preemptedBy) != fmt.Sprint(want) {
		t.Fatalf("preemptions = %v, want %v (each once, along the priority chain)", preemptedBy, want)
	}
	for victim, bys := range preemptedBy {
		for _, by := range bys {
			for _, back := range preemptedBy[by] {
				if back == victim {
					t.Errorf("cycle: %s preempted %s and was preempted by it", by, victim)
				}
			}
		}
	}
	for _, w := range []string{"ns/low", "ns/mid", "ns/high"} {
		if _, ok := firstOf(log, w, EvFinished); !ok {
			t.Errorf("%s never finished", w)
		}
	}
}

func TestReservationETAIsMet(t *testing.T) {
	objs := MakeWorld().Pool("h", 1, 8, api.CapacityOnDemand).Queue("cq", 16, "h").
		Job("running", 1, 6, 0, time.Hour, 0).
		Job("big", 1, 8, 10*time.Minute, 30*time.Minute, 0).
		Job("small", 1, 1, 15*time.Minute, 20*time.Minute, 0).Obj()
	log, _ := runLog(t, objs, 1)
	res, ok := firstOf(log, "ns/big", EvReserved)
	if !ok || res.ETA == nil {
		t.Fatalf("big was not reserved; log: %v", eventsOf(log, "ns/big"))
	}
	placed, _ := firstOf(log, "ns/big", EvPlaced)
	// Tolerance: the ETA is exact in the simulator (durations are known); allow 1s.
	if d := time.Duration(placed.T - *res.ETA); d < 0 || d > time.Second {
		t.Errorf("big placed at %v, ETA was %v", time.Duration(placed.T), time.Duration(*res.ETA))
	}
	// small ends before the ETA, so backfill lets it run at once.
	if sp, ok := firstOf(log, "ns/small", EvPlaced); !ok || sp.T != Seconds(15*time.Minute) {
		t.Errorf("small placed at %v (found %v), want backfilled at 15m", time.Duration(sp.T), ok)
	}
}

func TestExplainReservedWorkloadHasETA(t *testing.T) {
	objs := MakeWorld().Pool("h", 1, 8, api.CapacityOnDemand).Queue("cq", 16, "h").
		Job("running", 1, 6, 0, time.Hour, 0).
		Job("big", 1, 8, 10*time.Minute, 30*time.Minute, 0).Obj()
	cfg := engine.Config{Preemption: true, Reservations: true, Grace: time.Minute}
	s, err := New(objs, Options{Policy: engine.Policy{Config: cfg, Seed: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.RunUntil(20 * time.Minute); err != nil {
		t.Fatal(err)
	}
	e, err := s.Explain("ns/big")
	if err != nil {
		t.Fatal(err)
	}
	if e.Phase != plan.Pending || e.Reason != string(placement.Reserved) || e.ETA == nil || *e.ETA != Seconds(time.Hour) {
		t.Fatalf("explain = %+v, want pending, reserved, ETA 1h", e)
	}
	if _, err := s.Explain("ns/nope"); err == nil {
		t.Error("explaining an unknown workload gave no error")
	}
	if e.ETABasis == "" {
		t.Errorf("reserved with an ETA but no basis: %+v", e)
	}
}

func TestQuotaChangeAndNodeAddDriveReevaluation(t *testing.T) {
	more := []api.ResourceGroup{{CoveredResources: []resources.Name{resources.NvidiaGPU},
		Flavors: []api.FlavorQuotas{{Name: "h", Resources: []api.ResourceQuota{{Name: resources.NvidiaGPU, Nominal: 16}}}}}}
	extra := api.NodePool{Meta: api.Meta{Name: "h2"}, Count: 1, GPUModel: "H100", GPUsPerNode: 8, CPU: 64000, Memory: 512 << 30,
		NodeLabels: map[string]string{"pool": "h"}}
	objs := MakeWorld().Pool("h", 1, 8, api.CapacityOnDemand).Queue("cq", 8, "h").
		Job("a", 1, 8, 0, time.Hour, 0).
		Job("b", 1, 8, time.Minute, time.Hour, 0).
		Event(api.ClusterEvent{Meta: api.Meta{Name: "raise"}, Type: api.EventQuotaChange, At: 10 * time.Minute, ClusterQueue: "cq", ResourceGroups: more}).
		Event(api.ClusterEvent{Meta: api.Meta{Name: "grow"}, Type: api.EventNodeAdd, At: 20 * time.Minute, AddPool: &extra}).
		Obj()
	log, _ := runLog(t, objs, 1)
	var steps []string
	for _, r := range log {
		if r.Workload == "ns/b" && (r.Event == EvRejected || r.Event == EvReserved) {
			steps = append(steps, fmt.Sprintf("%s/%s@%v", r.Event, r.Layer, time.Duration(r.T)))
		}
	}
	// Quota first holds b; after the quota change the nodes do (a reservation for when a
	// ends); the node added at 20m runs it before that.
	if want := "[rejected/admission@1m0s reserved/placement@10m0s]"; fmt.Sprint(steps) != want {
		t.Errorf("b's steps = %v, want %s", steps, want)
	}
	if p, ok := firstOf(log, "ns/b", EvPlaced); !ok || p.T != Seconds(20*time.Minute) || p.Pods[0].Node != "h2-0" {
		t.Errorf("b placed = %+v (found %v), want on h2-0 at 20m", p, ok)
	}
}
