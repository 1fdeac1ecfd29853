package view

import (
	"time"

	"github.com/gantry-sched/gantry/pkg/resources"
)

// Snapshot is the whole scheduler at one moment.
type Snapshot struct {
	// Source names where the snapshot comes from: "simulation" or the API server's URL.
	Source string `json:"source"`
	// At is when the snapshot was taken: wall time on a cluster; on a simulation the
	// simulated time since the start (Elapsed) is what counts and At is the zero time.
	At      time.Time     `json:"at,omitzero"`
	Elapsed time.Duration `json:"elapsed,omitempty"`

	Cohorts   []Cohort   `json:"cohorts,omitempty"`   // sorted by name
	Queues    []Queue    `json:"queues,omitempty"`    // ClusterQueues, sorted by name
	Workloads []Workload `json:"workloads,omitempty"` // sorted by ClusterQueue, then position, then ID
	Nodes     []Node     `json:"nodes,omitempty"`     // sorted by name
}

// Cohort is one cohort of the tree.
type Cohort struct {
	Name   string `json:"name"`
	Parent string `json:"parent,omitempty"`
	// Queues are the ClusterQueues directly under it.
	Queues []string `json:"queues,omitempty"`
}

// Queue is one ClusterQueue.
type Queue struct {
	Name   string `json:"name"`
	Cohort string `json:"cohort,omitempty"`
	// Held is true when the queue's stopPolicy stops new admissions.
	Held bool `json:"held,omitempty"`
	// Quota is nominal quota, usage and borrowing per flavor and resource.
	Quota []QuotaRow `json:"quota,omitempty"`
	// GPU totals over flavors, in GPU-equivalents (MIG instances at their share of a
	// GPU), so queues with MIG and whole-GPU quota compare.
	NominalGPU  resources.MilliGPU `json:"nominalMilliGPU"`
	UsedGPU     resources.MilliGPU `json:"usedMilliGPU"`
	BorrowedGPU resources.MilliGPU `json:"borrowedMilliGPU"`
	// FairShare is the queue's weighted share of the cohort, in permille (Kueue's
	// dominant resource share); 0 when nothing is borrowed, math.MaxInt64 when it
	// borrows with fair-sharing weight 0.
	FairShare int64 `json:"fairSharePermille,omitempty"`
	Pending   int   `json:"pending"`
	Admitted  int   `json:"admitted"`
}

// QuotaRow is one flavor/resource of a ClusterQueue, in the resource's canonical unit
// (milli-GPU, millicores, bytes, pods).
type QuotaRow struct {
	Flavor   string           `json:"flavor"`
	Resource resources.Name   `json:"resource"`
	Nominal  resources.Amount `json:"nominal"`
	Used     resources.Amount `json:"used"`
	Borrowed resources.Amount `json:"borrowed"`
	// BorrowingLimit is nil when unlimited.
	BorrowingLimit *resources.Amount `json:"borrowingLimit,omitempty"`
}

// Phase is where a workload is in its life.
type Phase string

const (
	Pending  Phase = "Pending"
	Admitted Phase = "Admitted" // quota reserved and placed; pods may still be starting
	Running  Phase = "Running"
	Evicted  Phase = "Evicted" // evicted, not yet back in its queue (then Pending again)
	Finished Phase = "Finished"
	NotYet   Phase = "NotSubmitted" // a simulation's workload submitted later
)

// Workload is one job as Gantry schedules it.
type Workload struct {
	ID           string `json:"id"` // namespace/name
	LocalQueue   string `json:"localQueue,omitempty"`
	ClusterQueue string `json:"clusterQueue,omitempty"`
	Priority     int32  `json:"priority"`
	Phase        Phase  `json:"phase"`
	// Pods and GPU are the gang's size: pods asked for and GPU-equivalents over them.
	Pods int                `json:"pods"`
	GPU  resources.MilliGPU `json:"milliGPU"`
	// Layer, Reason and Details say why a pending workload waits: the layer holding it
	// (admission or placement), the stable reason code and the evidence in words.
	Layer   string   `json:"layer,omitempty"`
	Reason  string   `json:"reason,omitempty"`
	Details []string `json:"details,omitempty"`
	// Remedy is the cheapest change that would admit it, in words, when one is known.
	Remedy string `json:"remedy,omitempty"`
	// Position is the 1-based place in its ClusterQueue's order (0: not pending).
	Position int `json:"position,omitempty"`
	// ETA is how long from the snapshot until the workload is expected to start; nil when
	// unknown. ETABasis says what the estimate rests on.
	ETA      *time.Duration `json:"eta,omitempty"`
	ETABasis string         `json:"etaBasis,omitempty"`
	// Waited is how long it has been pending (since queued or last evicted).
	Waited time.Duration `json:"waited,omitempty"`
	// Nodes are the nodes its pods are bound to, sorted.
	Nodes []string `json:"nodes,omitempty"`
	// Owner is the job object the workload stands for ("PyTorchJob/bert-pretrain"),
	// when it was made from one: a live cluster names the Workload after it
	// ("pytorchjob-bert-pretrain"), a simulation after the job itself.
	Owner string `json:"owner,omitempty"`
	// Placements are the gang's placed pods with their nodes and device IDs.
	Placements []Pod `json:"placements,omitempty"`
	// Progress is the run time done so far: on a simulation the work done (saved
	// progress while pending), on a cluster the time since its current admission.
	Progress time.Duration `json:"progress,omitempty"`
	// Preemptions counts how often it was preempted.
	Preemptions int `json:"preemptions,omitempty"`
}

// Pod is one placed pod of a workload.
type Pod struct {
	Name    string   `json:"name"`
	Node    string   `json:"node,omitempty"`
	Devices []string `json:"devices,omitempty"` // device IDs as pkg/devices writes them
}

// Node is one node and its GPUs.
type Node struct {
	Name         string `json:"name"`
	Pool         string `json:"pool,omitempty"`
	CapacityType string `json:"capacityType,omitempty"`
	Ready        bool   `json:"ready"`
	GPUs         []GPU  `json:"gpus,omitempty"` // by index
}

// GPU is one physical GPU of a node.
type GPU struct {
	Index   int    `json:"index"`
	Model   string `json:"model"`
	Mode    string `json:"mode"` // exclusive, mig, time-slicing, mps
	Healthy bool   `json:"healthy"`
	// Allocated is the share of the GPU in use, in milli-GPU (1000 = whole).
	Allocated resources.MilliGPU `json:"allocatedMilliGPU"`
	// Devices are what the GPU is cut into (one whole device, MIG instances or shared
	// replicas), each with its holder; a whole GPU nobody holds has one free device.
	Devices []Device `json:"devices,omitempty"`
}

// Device is one schedulable unit of a GPU.
type Device struct {
	// ID is the device ID as the device layer writes it (pkg/devices).
	ID string `json:"id"`
	// Profile is the MIG profile ("3g.40gb") or "" for a whole GPU or a replica.
	Profile string `json:"profile,omitempty"`
	// Share is the device's part of the GPU in milli-GPU.
	Share resources.MilliGPU `json:"milliGPU"`
	// Holder is the workload (namespace/name) holding it, "pod:namespace/name" for a
	// pod no workload accounts for (bound without Gantry); "" when free.
	Holder string `json:"holder,omitempty"`
}
