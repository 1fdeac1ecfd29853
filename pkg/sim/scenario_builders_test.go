package sim

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/engine"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// world builds a small object set fluently: MakeWorld().Pool("od", 2, 8, "on-demand")...
type world struct{ o api.Objects }

func MakeWorld() *world { return &world{} }

// Pool adds count H100 nodes with gpus GPUs each, of a capacity type, labelled so a
// flavor of the same name selects them.
func (b *world) Pool(name string, count, gpus int, capacity string) *world {
	b.o.NodePools = append(b.o.NodePools, api.NodePool{Meta: api.Meta{Name: name}, Count: count, GPUModel: "H100",
		GPUsPerNode: gpus, CPU: 64000, Memory: 512 << 30, CapacityType: capacity,
		NodeLabels: map[string]string{"pool": name}})
	b.o.Flavors = append(b.o.Flavors, api.ResourceFlavor{Meta: api.Meta{Name: name}, NodeLabels: map[string]string{"pool": name}})
	return b
}

// Queue adds ClusterQueue cq with GPU quota gpus in each named flavor (tried in order),
// and LocalQueue "lq" in namespace "ns" pointing at it.
func (b *world) Queue(cq string, gpus int64, flavors ...string) *world {
	g := api.ResourceGroup{CoveredResources: []resources.Name{resources.NvidiaGPU}}
	for _, f := range flavors {
		g.Flavors = append(g.Flavors, api.FlavorQuotas{Name: f, Resources: []api.ResourceQuota{{Name: resources.NvidiaGPU, Nominal: resources.Amount(gpus)}}})
	}
	b.o.ClusterQueues = append(b.o.ClusterQueues, api.ClusterQueue{Meta: api.Meta{Name: cq}, ResourceGroups: []api.ResourceGroup{g},
		QueueingStrategy: api.BestEffortFIFO, Preemption: api.Preemption{WithinClusterQueue: api.PreemptLowerPriority},
		FlavorFungibility: api.FlavorFungibility{WhenCanBorrow: api.MayStopSearch, WhenCanPreempt: api.TryNextFlavor}})
	b.o.LocalQueues = append(b.o.LocalQueues, api.LocalQueue{Meta: api.Meta{Name: "lq", Namespace: "ns"}, ClusterQueue: cq})
	return b
}

// Job adds a gang of pods × gpusPerPod submitted at submit, running for dur,
// checkpointing every ckpt.
func (b *world) Job(name string, pods int32, gpusPerPod int64, submit, dur, ckpt time.Duration) *world {
	b.o.Workloads = append(b.o.Workloads, api.Workload{Meta: api.Meta{Name: name, Namespace: "ns"}, Queue: "lq",
		PodSets: []api.PodSet{{Name: "main", Count: pods, Requests: resources.Vector{resources.NvidiaGPU: resources.Amount(gpusPerPod)}}},
		Timing:  api.Timing{SubmitAt: submit, Duration: dur, CheckpointEvery: ckpt}})
	return b
}

func (b *world) Event(ev api.ClusterEvent) *world {
	b.o.Events = append(b.o.Events, ev)
	return b
}

func (b *world) Obj() *api.Objects { o := b.o; return &o }

// runLog simulates objs and returns the event log as JSON lines.
func runLog(t *testing.T, objs *api.Objects, seed int64) ([]EventRecord, []byte) {
	t.Helper()
	cfg := engine.Config{Preemption: true, Reservations: true, Grace: 2 * time.Minute}
	s, err := New(objs, Options{KeepLog: true, Policy: engine.Policy{Config: cfg, Seed: seed}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Run(); err != nil {
		t.Fatal(err)
	}
	return s.Log(), encodeLog(t, s.Log())
}

// encodeLog renders records as JSON lines, the format of `gantry simulate --events`.
func encodeLog(t *testing.T, recs []EventRecord) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for _, r := range recs {
		if err := enc.Encode(r); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

// eventsOf returns the records of one workload, kinds only, in order.
func eventsOf(log []EventRecord, wl string) []EventKind {
	var out []EventKind
	for _, r := range log {
		if r.Workload == wl {
			out = append(out, r.Event)
		}
	}
	return out
}

// Priority sets a job's priority.
func (b *world) Priority(name string, p int32) *world {
	for i := range b.o.Workloads {
		if b.o.Workloads[i].Name == name {
			b.o.Workloads[i].Priority = p
		}
	}
	return b
}

// Requests replaces a job's per-pod requests.
func (b *world) Requests(name string, v resources.Vector) *world {
	for i := range b.o.Workloads {
		if b.o.Workloads[i].Name == name {
			b.o.Workloads[i].PodSets[0].Requests = v
		}
	}
	return b
}

// Covers adds resource r with quota n to every flavor of ClusterQueue cq's first group.
func (b *world) Covers(cq string, r resources.Name, n int64) *world {
	for i := range b.o.ClusterQueues {
		if b.o.ClusterQueues[i].Name != cq {
			continue
		}
		g := &b.o.ClusterQueues[i].ResourceGroups[0]
		g.CoveredResources = append(g.CoveredResources, r)
		for f := range g.Flavors {
			g.Flavors[f].Resources = append(g.Flavors[f].Resources, api.ResourceQuota{Name: r, Nominal: resources.Amount(n)})
		}
	}
	return b
}

// record returns the first record of a workload with the given kind (and whether found).
func firstOf(log []EventRecord, wl string, kind EventKind) (EventRecord, bool) {
	for _, r := range log {
		if r.Workload == wl && r.Event == kind {
			return r, true
		}
	}
	return EventRecord{}, false
}
