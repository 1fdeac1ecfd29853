package plan

import (
	"slices"
	"time"

	"github.com/gantry-sched/gantry/pkg/admission"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// Layer names the part of Gantry that holds or decided about a workload.
type Layer string

const (
	LayerAdmission Layer = "admission" // quota, cohort, flavors, queue policy
	LayerPlacement Layer = "placement" // nodes, gangs, topology, devices
	LayerCluster   Layer = "cluster"   // node failure, spot interruption, drain
)

// Plan is what one scheduling cycle decided. It is a value: building it changes nothing;
// a Committer applies it.
type Plan struct {
	Cycle        int64
	At           time.Time
	Admissions   []Admission
	Bindings     []Binding
	Notices      []Notice
	Evictions    []Eviction
	Reservations []Reservation
	Rejections   []Rejection
}

// PodSetAssignment is the flavor chosen for each resource of one pod set.
type PodSetAssignment struct {
	Name    string
	Count   int32
	Flavors map[resources.Name]string
	// Usage is what the pod set charges to quota (per pod requests × Count).
	Usage resources.Vector
}

// Admission reserves quota in a ClusterQueue for a workload. A plan only contains an
// admission together with the bindings of the whole gang: admission is final only when
// placement succeeded.
type Admission struct {
	Workload     api.WorkloadID
	ClusterQueue string
	PodSets      []PodSetAssignment
	// Borrowing is true when the admission uses quota lent by the cohort.
	Borrowing bool
	// Quota is admission's assignment behind PodSets, used by in-process committers
	// (admission.Quota.Admit re-checks it against current usage).
	Quota admission.Assignment `json:"-"`
}

// Usage sums the usage of all pod sets.
func (a Admission) Usage() resources.Vector {
	u := resources.Vector{}
	for _, ps := range a.PodSets {
		u.AddInPlace(ps.Usage)
	}
	return u
}

// Binding puts one pod on a node with exact devices.
type Binding struct {
	Workload api.WorkloadID
	PodSet   string
	Index    int    // pod index within the pod set
	Pod      string // "<workload name>-<pod set>-<index>"
	Node     string
	// Devices are stable device IDs ("GPU-0", "GPU-3/mig-1g.10gb@4", "GPU-2/replica-1").
	Devices []string
	// Requests are the pod's requests (non-GPU resources are charged to the node).
	Requests resources.Vector
	// Assignment is the device layer's value behind Devices, used by in-process committers.
	Assignment devices.Assignment `json:"-"`
}

// Notice starts a graceful preemption: the workload is told to checkpoint and is evicted
// when Grace has passed (the same path a spot interruption takes).
type Notice struct {
	Workload api.WorkloadID
	// By is the workload the victim makes room for (empty for cluster causes).
	By     api.WorkloadID
	Layer  Layer
	Reason string
	Grace  time.Duration
	// EvictAt is when the grace period ends (notice time + Grace, or the victim's own
	// longer checkpoint time); zero when the committer should use Grace from its clock.
	EvictAt time.Time
}

// Eviction removes a workload's pods now; it is requeued with its saved progress.
type Eviction struct {
	Workload api.WorkloadID
	Layer    Layer
	Reason   string
}

// EvictNodeLost is the reason code of an eviction because a node of the gang went away
// (deleted, failed, NotReady too long): the controller's Workload status and the
// simulator's event log both say it.
const EvictNodeLost = "NodeLost"

// Reservation holds capacity for a workload that cannot start now (backfill): the nodes
// it will use and when they are expected to be free.
type Reservation struct {
	Workload api.WorkloadID
	Nodes    []string
	ETA      time.Time
	Reason   string
	// Pods is the planned placement at ETA, pod → node → devices. It is what the
	// reservation holds (per GPU, not per node) and what the next cycle hands back to
	// placement as the previous reservation, so an ETA cannot slip. Empty means the
	// placer gave no device-level plan: the whole Nodes are held.
	Pods []cluster.BoundPod `json:"-"`
	// Waits are the running workloads whose end the reservation waits for.
	Waits []api.WorkloadID `json:",omitempty"`
}

// HoldsSame reports whether r and o hold the same GPUs from the same time (what later
// workloads of a cycle are steered around); the reason and the waits may differ.
func (r Reservation) HoldsSame(o Reservation) bool {
	if !r.ETA.Equal(o.ETA) || !slices.Equal(r.Nodes, o.Nodes) || len(r.Pods) != len(o.Pods) {
		return false
	}
	for i := range r.Pods {
		pa, pb := r.Pods[i], o.Pods[i]
		if pa.Ref != pb.Ref || pa.Node != pb.Node || !slices.Equal(pa.Devices.IDs(), pb.Devices.IDs()) {
			return false
		}
	}
	return true
}

// Rejection says why a workload was not admitted this cycle: a stable code (Reason) from
// the layer that decided, and the typed facts behind it (Evidence: admission's flavor
// assignment, placement's diagnosis, the engine's victims, holds and fallbacks). Explain
// renders them for people; nothing is text before that. A Rejection is cheap to copy:
// its evidence is shared and never changed.
type Rejection struct {
	Workload     api.WorkloadID
	ClusterQueue string
	Layer        Layer
	Reason       Reason
	// Evidence is nil where the reason says it all.
	Evidence *Evidence
	// Position is the workload's 1-based place in its ClusterQueue's order this cycle.
	Position int
}

// IsEmpty reports whether the plan decides nothing.
func (p *Plan) IsEmpty() bool {
	return len(p.Admissions) == 0 && len(p.Bindings) == 0 && len(p.Notices) == 0 &&
		len(p.Evictions) == 0 && len(p.Reservations) == 0 && len(p.Rejections) == 0
}

// BindingsByWorkload groups the bindings by workload, each in plan order: one pass for
// a committer that applies every admission (BindingsOf per admission is quadratic).
func (p *Plan) BindingsByWorkload() map[api.WorkloadID][]Binding {
	out := make(map[api.WorkloadID][]Binding, len(p.Admissions))
	for _, b := range p.Bindings {
		out[b.Workload] = append(out[b.Workload], b)
	}
	return out
}

// BindingsOf returns the bindings of one workload, in plan order.
func (p *Plan) BindingsOf(id api.WorkloadID) []Binding {
	var out []Binding
	for _, b := range p.Bindings {
		if b.Workload == id {
			out = append(out, b)
		}
	}
	return out
}
