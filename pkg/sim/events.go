package sim

import (
	"strconv"
	"time"

	"github.com/gantry-sched/gantry/pkg/resources"
)

// EventKind is the "event" field of an event log record.
type EventKind string

// The event kinds of the log, in the order a workload usually meets them.
const (
	EvSubmitted   EventKind = "submitted"   // the workload entered its queue
	EvAdmitted    EventKind = "admitted"    // quota reserved (always followed by placed in the same cycle)
	EvPlaced      EventKind = "placed"      // every gang pod bound to a node and devices; it runs
	EvReserved    EventKind = "reserved"    // not startable now; capacity reserved with an ETA
	EvRejected    EventKind = "rejected"    // not admitted this cycle; Reason says which layer and why
	EvNeverFits   EventKind = "never-fits"  // no placement could ever start it on this cluster; Reason says why
	EvPreempted   EventKind = "preempted"   // preemption notice given (grace period to checkpoint)
	EvInterrupted EventKind = "interrupted" // spot interruption notice reached the workload's nodes
	EvEvicted     EventKind = "evicted"     // pods removed; LostGPUMilliSeconds says the lost work
	EvRequeued    EventKind = "requeued"    // back in its queue with its saved progress
	EvFinished    EventKind = "finished"    // ran to completion
	// Cluster-level records (Workload empty): node changes and quota changes.
	EvNode  EventKind = "node"
	EvQuota EventKind = "quota"
)

// Seconds is a simulated time or duration written to JSON as a number of seconds, with up
// to three decimals and no float formatting (so logs are byte-identical across runs).
type Seconds time.Duration

// MarshalJSON writes whole seconds as an integer and sub-second times with milliseconds.
func (s Seconds) MarshalJSON() ([]byte, error) {
	ms := time.Duration(s).Milliseconds()
	neg := ms < 0
	if neg {
		ms = -ms
	}
	out := strconv.FormatInt(ms/1000, 10)
	if frac := ms % 1000; frac != 0 {
		f := strconv.FormatInt(frac+1000, 10)[1:] // zero-padded to 3 digits
		for f[len(f)-1] == '0' {
			f = f[:len(f)-1]
		}
		out += "." + f
	}
	if neg {
		out = "-" + out
	}
	return []byte(out), nil
}

// Duration returns s as a time.Duration.
func (s Seconds) Duration() time.Duration { return time.Duration(s) }

// PodRecord is one pod of a placed workload: where it runs and on which devices.
type PodRecord struct {
	Name    string   `json:"name"`
	Node    string   `json:"node,omitempty"`
	Devices []string `json:"devices,omitempty"`
}

// EventRecord is one line of the event log (`gantry simulate --events FILE`). The first
// eight fields are the required format; fields that do not apply are omitted.
// The rest are Gantry additions that the KPI code needs and that cannot be derived from
// the required fields alone.
type EventRecord struct {
	T            Seconds     `json:"t"`
	Event        EventKind   `json:"event"`
	Workload     string      `json:"workload,omitempty"` // "namespace/name"
	ClusterQueue string      `json:"clusterQueue,omitempty"`
	Flavor       string      `json:"flavor,omitempty"` // flavors of all resources, "," joined, sorted
	Pods         []PodRecord `json:"pods,omitempty"`
	Reason       string      `json:"reason,omitempty"`
	Victims      []string    `json:"victims,omitempty"`

	// Additions.
	// By names the workload a preempted workload makes room for.
	By         string `json:"by,omitempty"`
	LocalQueue string `json:"localQueue,omitempty"`
	Priority   int32  `json:"priority,omitempty"`
	// GPUMilli is the workload's whole GPU demand in the common unit (all gang pods).
	GPUMilli resources.MilliGPU `json:"gpuMilli,omitempty"`
	// Borrowing is set on admitted when the admission borrows quota from the cohort.
	Borrowing bool `json:"borrowing,omitempty"`
	// Layer that holds a rejected workload: "admission" (quota) or "placement" (cluster).
	Layer string `json:"layer,omitempty"`
	// ETA of a reserved workload (absolute simulated time).
	ETA *Seconds `json:"eta,omitempty"`
	// LostGPUMilliSeconds on evicted: work since the last checkpoint, times the
	// workload's GPU milli (milli-GPU × seconds; divide by 3.6e6 for GPU-hours).
	LostGPUMilliSeconds int64 `json:"lostGpuMilliSeconds,omitempty"`
	// Node names the node of an EvNode record; Change says what happened to it
	// ("added", "removed", "failed", "recovered", "notice", "draining", "relayout").
	Node   string `json:"node,omitempty"`
	Change string `json:"change,omitempty"`
}

// GPUState is one GPU's allocation at a sample.
type GPUState struct {
	Index     int
	Model     string // devices.ModelID
	Mode      string // devices.SharingMode
	Allocated resources.MilliGPU
	// Pieces counts MIG instances or replicas that are free on this GPU (0 for whole GPUs).
	FreePieces int
	Healthy    bool
}

// NodeState is one node at a sample.
type NodeState struct {
	Name         string
	Pool         string
	CapacityType string
	Ready        bool // false while failed, drained, interrupted or reconfiguring
	GPUs         []GPUState
}

// QueueState is one ClusterQueue at a sample, in the common GPU unit and per resource.
type QueueState struct {
	Name    string
	Cohort  string
	Nominal resources.Vector // sum of nominal quota over flavors, per resource
	Usage   resources.Vector // admitted usage, per resource
	// Borrowed is usage above nominal (per resource, zero where none).
	Borrowed resources.Vector
	Pending  int
	Running  int
}

// PendingShape is one pending workload's per-pod GPU request, for stranded-capacity KPIs.
type PendingShape struct {
	Workload string
	Queue    string
	Pods     int
	PerPod   resources.Vector // the GPU part of a pod's requests
}

// ClusterState is a sample of the whole simulated cluster. The simulator samples after
// every instant at which something changed, so the state is constant between two
// consecutive samples (KPIs integrate it piecewise).
type ClusterState struct {
	T       Seconds
	Nodes   []NodeState  // sorted by name
	Queues  []QueueState // sorted by name
	Pending []PendingShape
}

// Observer consumes the simulation as it runs: every event log record, and a state
// sample whenever the state changed. The KPI collector and the report implement it.
// Observers must not modify what they receive.
type Observer interface {
	OnEvent(EventRecord)
	OnSample(ClusterState)
}

// EventFilter is an Observer that names the event kinds it reads: it is handed only
// those, and a kind no observer reads (nor the kept log) is not even built. Rejection
// records render their reason as text, and a fleet-size run rejects millions of times.
type EventFilter interface {
	WantsEvent(EventKind) bool
}

// ObserverFuncs adapts plain functions to Observer; nil functions are skipped.
type ObserverFuncs struct {
	Event  func(EventRecord)
	Sample func(ClusterState)
}

// OnEvent calls f.Event when set.
func (f ObserverFuncs) OnEvent(r EventRecord) {
	if f.Event != nil {
		f.Event(r)
	}
}

// OnSample calls f.Sample when set.
func (f ObserverFuncs) OnSample(s ClusterState) {
	if f.Sample != nil {
		f.Sample(s)
	}
}

var _ Observer = ObserverFuncs{}
