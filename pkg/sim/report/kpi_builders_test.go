package report

import (
	"time"

	"github.com/gantry-sched/gantry/pkg/resources"
	"github.com/gantry-sched/gantry/pkg/sim"
)

// Fluent builders for hand-built event sequences and state samples.

type eventBuilder struct{ r sim.EventRecord }

// MakeEvent starts an event of kind for workload at t seconds.
func MakeEvent(t int64, kind sim.EventKind, workload string) *eventBuilder {
	return &eventBuilder{r: sim.EventRecord{T: sim.Seconds(time.Duration(t) * time.Second), Event: kind, Workload: workload}}
}

func (b *eventBuilder) CQ(name string) *eventBuilder { b.r.ClusterQueue = name; return b }
func (b *eventBuilder) Lost(milliSec int64) *eventBuilder {
	b.r.LostGPUMilliSeconds = milliSec
	return b
}
func (b *eventBuilder) Obj() sim.EventRecord { return b.r }

type nodeBuilder struct{ n sim.NodeState }

// MakeNode starts a ready node with no GPUs.
func MakeNode(name string) *nodeBuilder {
	return &nodeBuilder{n: sim.NodeState{Name: name, Ready: true}}
}

// GPU adds a healthy GPU of model and mode with allocated milli-GPU.
func (b *nodeBuilder) GPU(model, mode string, allocated resources.MilliGPU) *nodeBuilder {
	b.n.GPUs = append(b.n.GPUs, sim.GPUState{Index: len(b.n.GPUs), Model: model, Mode: mode, Allocated: allocated, Healthy: true})
	return b
}

// MIG adds a MIG GPU with allocated milli and free instances.
func (b *nodeBuilder) MIG(model string, allocated resources.MilliGPU, freePieces int) *nodeBuilder {
	b.n.GPUs = append(b.n.GPUs, sim.GPUState{Index: len(b.n.GPUs), Model: model, Mode: "mig", Allocated: allocated, FreePieces: freePieces, Healthy: true})
	return b
}

func (b *nodeBuilder) Down() *nodeBuilder { b.n.Ready = false; return b }
func (b *nodeBuilder) Obj() sim.NodeState { return b.n }

type stateBuilder struct{ s sim.ClusterState }

// MakeState starts a sample at t seconds.
func MakeState(t int64) *stateBuilder {
	return &stateBuilder{s: sim.ClusterState{T: sim.Seconds(time.Duration(t) * time.Second)}}
}

func (b *stateBuilder) Node(n *nodeBuilder) *stateBuilder {
	b.s.Nodes = append(b.s.Nodes, n.Obj())
	return b
}

// Queue adds a ClusterQueue with nominal, used and borrowed whole GPUs.
func (b *stateBuilder) Queue(name string, nominal, used, borrowed int64) *stateBuilder {
	b.s.Queues = append(b.s.Queues, sim.QueueState{Name: name,
		Nominal:  resources.Vector{resources.NvidiaGPU: resources.Amount(nominal)},
		Usage:    resources.Vector{resources.NvidiaGPU: resources.Amount(used)},
		Borrowed: resources.Vector{resources.NvidiaGPU: resources.Amount(borrowed)}})
	return b
}

// Pending adds a pending workload with one pod of the given per-pod GPU request.
func (b *stateBuilder) Pending(name string, perPod resources.Vector) *stateBuilder {
	b.s.Pending = append(b.s.Pending, sim.PendingShape{Workload: name, Pods: 1, PerPod: perPod})
	return b
}

func (b *stateBuilder) Obj() sim.ClusterState { return b.s }

// secs is n whole seconds as Seconds.
func secs(n int64) sim.Seconds { return sim.Seconds(time.Duration(n) * time.Second) }

// QueueOf adds a ClusterQueue with nominal quota, usage and borrowing as given, for
// quotas that name several GPU resources (MIG profiles, gpu-milli).
func (b *stateBuilder) QueueOf(name string, nominal, used, borrowed resources.Vector) *stateBuilder {
	b.s.Queues = append(b.s.Queues, sim.QueueState{Name: name, Nominal: nominal, Usage: used, Borrowed: borrowed})
	return b
}
