package sim

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/engine"
	"github.com/gantry-sched/gantry/pkg/plan"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// liveWorld: two nodes of 8 GPUs (od-0, od-1) in ClusterQueue cq (16 GPUs). From the
// dump: a DaemonSet pod on each node (cpu only), a system pod holding 2 GPUs on od-1
// (no device annotation: the device plugin's pick), and ns/running on GPUs 2-7 of od-0
// for an hour; ns/waiting (4 GPUs) is pending.
func liveWorld() *api.Objects {
	objs := MakeWorld().Pool("od", 2, 8, api.CapacityOnDemand).Queue("cq", 16, "od").
		Job("running", 1, 6, 0, time.Hour, 0).Job("waiting", 1, 4, 0, time.Hour, 0).Obj()
	cpu := resources.Vector{resources.CPU: 500}
	gpus := func(n int64) resources.Vector { return resources.Vector{resources.NvidiaGPU: resources.Amount(n)} }
	objs.Live.Pods = []api.LivePod{
		{Name: "kube-system/agent-0", Node: "od-0", Requests: cpu},
		{Name: "kube-system/agent-1", Node: "od-1", Requests: cpu},
		{Name: "kube-system/gpu-burner", Node: "od-1", Requests: gpus(2)},
		{Name: "ns/running", Node: "od-0", Workload: "ns/running", PodSet: "main", Requests: gpus(6),
			Devices: []string{"GPU-2", "GPU-3", "GPU-4", "GPU-5", "GPU-6", "GPU-7"}},
	}
	return objs
}

func newLiveSim(t *testing.T, objs *api.Objects) *Simulator {
	t.Helper()
	s, err := New(objs, Options{KeepLog: true, Policy: engine.Policy{Config: engine.Config{Preemption: true, Reservations: true}, Seed: 1}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestLiveStartAtZero(t *testing.T) {
	s := newLiveSim(t, liveWorld())
	if err := s.RunUntil(time.Second); err != nil {
		t.Fatal(err)
	}
	placed := map[string]string{}
	for _, r := range s.Log() {
		if r.Event == EvPlaced {
			for _, p := range r.Pods {
				placed[r.Workload] = p.Node + "[" + strings.Join(p.Devices, " ") + "]@" + fmt.Sprint(r.T)
			}
		}
	}
	if got := placed["ns/running"]; got != "od-0[GPU-2 GPU-3 GPU-4 GPU-5 GPU-6 GPU-7]@0" {
		t.Errorf("running placed %q, want on od-0 GPUs 2-7 at 0s", got)
	}
	// od-0 has 2 GPUs left, od-1 6 (the system pod holds 2): only od-1 fits 4.
	if got := placed["ns/waiting"]; !strings.HasPrefix(got, "od-1[") || strings.Contains(got, "GPU-0 ") {
		t.Errorf("waiting placed %q, want on od-1 off the system pod's GPUs 0-1", got)
	}
	st := s.State()
	var alloc []string
	for _, n := range st.Nodes {
		var milli resources.MilliGPU
		for _, g := range n.GPUs {
			milli += g.Allocated
		}
		alloc = append(alloc, n.Name+"="+fmt.Sprint(milli))
	}
	if got := strings.Join(alloc, ","); got != "od-0=6000,od-1=6000" {
		t.Errorf("allocated GPUs %s, want od-0=6 (running) and od-1=6 (system 2 + waiting 4)", got)
	}
	if u := st.Queues[0].Usage[resources.NvidiaGPU]; u != 10 || st.Queues[0].Running != 2 {
		t.Errorf("cq usage %d running %d, want 10 GPUs charged (6 running + 4 waiting; the system pod is not charged) by 2 workloads", u, st.Queues[0].Running)
	}
}

func TestLiveRunningFinishes(t *testing.T) {
	s := newLiveSim(t, liveWorld())
	if err := s.Run(); err != nil {
		t.Fatal(err)
	}
	for _, r := range s.Log() {
		if r.Event == EvFinished && r.Workload == "ns/running" {
			if r.T != Seconds(time.Hour) {
				t.Fatalf("running finished at %v, want 1h (its duration from t=0)", r.T)
			}
			return
		}
	}
	t.Fatal("ns/running never finished")
}

// Capacity-only pods leave with their node.
func TestLiveOccupantsLeaveWithNode(t *testing.T) {
	objs := liveWorld()
	objs.Events = []api.ClusterEvent{{Meta: api.Meta{Name: "gone"}, Type: api.EventNodeRemove, At: time.Minute, Nodes: []string{"od-1"}}}
	s := newLiveSim(t, objs)
	if err := s.RunUntil(2 * time.Minute); err != nil {
		t.Fatal(err)
	}
	for _, bp := range s.snap.Pods() {
		if bp.Node == "od-1" {
			t.Fatalf("pod %s still on removed node od-1", bp.Ref)
		}
	}
}

func TestLiveErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*api.Objects)
		want string
	}{
		{"unknown node", func(o *api.Objects) { o.Live.Pods[0].Node = "od-9" }, `pod kube-system/agent-0 (<generated>): bound to node "od-9", which is not in the cluster`},
		{"device taken twice", func(o *api.Objects) { o.Live.Pods[2].Node, o.Live.Pods[2].Devices = "od-0", []string{"GPU-2", "GPU-3"} },
			"pod ns/running (<generated>): does not fit on node od-0 as the dump has it: pod ns/running/main-0: node od-0: device GPU-2: GPU is already in use"},
		{"over quota", func(o *api.Objects) { o.ClusterQueues[0].ResourceGroups[0].Flavors[0].Resources[0].Nominal = 4 },
			"workload ns/running: its pods are bound but ClusterQueue cq has no quota left for it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs := liveWorld()
			tc.edit(objs)
			_, err := New(objs, Options{Policy: engine.DefaultPolicy()})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

// explain at t=0, before any cycle, already shows the dump's running workload on its node.
func TestLiveExplainAtZero(t *testing.T) {
	s := newLiveSim(t, liveWorld())
	ex, err := s.Explain("ns/running")
	if err != nil {
		t.Fatal(err)
	}
	if ex.Phase != plan.Running || !ex.Submitted || ex.ClusterQueue != "cq" || len(ex.Pods) != 1 || ex.Pods[0].Node != "od-0" {
		t.Fatalf("explain = %+v, want running in cq on od-0", ex)
	}
}
