package api

import (
	"time"

	"github.com/gantry-sched/gantry/pkg/resources"
	corev1 "k8s.io/api/core/v1"
)

// Well-known labels and annotations read from user objects.
const (
	LabelKueueQueueName   = "kueue.x-k8s.io/queue-name"
	LabelGantryQueueName  = "gantry.dev/queue-name"
	LabelKueuePriority    = "kueue.x-k8s.io/priority-class"
	LabelKueueMaxExecTime = "kueue.x-k8s.io/max-exec-time-seconds"

	AnnotationRequiredTopology      = "kueue.x-k8s.io/podset-required-topology"
	AnnotationPreferredTopology     = "kueue.x-k8s.io/podset-preferred-topology"
	AnnotationSliceRequiredTopology = "kueue.x-k8s.io/podset-slice-required-topology"
	AnnotationSliceSize             = "kueue.x-k8s.io/podset-slice-size"
	// AnnotationUnconstrainedTopology ("true"/"false"): topology-aware placement with no
	// level constraint; pods fill the tightest gaps across domains.
	AnnotationUnconstrainedTopology = "kueue.x-k8s.io/podset-unconstrained-topology"
	// AnnotationPodSetGroupName: pod sets of one workload with the same group name land
	// in one domain of the required/preferred level they share (Kueue: exactly 2 pod
	// sets, one of them with a single pod, e.g. a leader and its workers).
	AnnotationPodSetGroupName = "kueue.x-k8s.io/podset-group-name"
	// AnnotationSliceRequiredTopologyConstraints is Kueue's multi-layer slice constraint:
	// a JSON array of {"topology": level, "size": n}, coarsest first, 1 to 3 entries.
	AnnotationSliceRequiredTopologyConstraints = "kueue.x-k8s.io/podset-slice-required-topology-constraints"

	AnnotationVolcanoGroupName = "scheduling.k8s.io/group-name"

	// Simulator timing. On a real cluster submit-at and checkpoint-every are ignored;
	// duration is read as the runtime the user expects (it dates ETAs and reservations).
	AnnotationSubmitAt        = "gantry.dev/submit-at"
	AnnotationDuration        = "gantry.dev/duration"
	AnnotationCheckpointEvery = "gantry.dev/checkpoint-every"
	AnnotationMinRuntime      = "gantry.dev/min-runtime"
	AnnotationGangName        = "gantry.dev/gang"
	AnnotationGangSize        = "gantry.dev/gang-size"
)

// OwnerRef names the user object a workload was made from.
type OwnerRef struct {
	APIVersion string
	Kind       string // Job, JobSet, PyTorchJob, MPIJob, RayJob, RayCluster, Pod, PodGroup
	Name       string
}

// TopologyMode says how strictly a topology level binds a pod set.
type TopologyMode string

const (
	TopologyRequired  TopologyMode = "Required"
	TopologyPreferred TopologyMode = "Preferred"
	// TopologyUnconstrained: no common domain; pods are packed into the domains with the
	// least room first (Kueue's podset-unconstrained-topology).
	TopologyUnconstrained TopologyMode = "Unconstrained"
)

// MaxInnerSlices is how many slice layers Kueue allows under the outermost one (3 in all).
const MaxInnerSlices = 2

// SliceLayer is one inner layer of a multi-layer slice constraint: every Size pods
// share one domain of Level.
type SliceLayer struct {
	Level string
	Size  int32
}

// TopologyRequest asks for the pods of a pod set to share one domain of a topology level
// (a node-label key such as "topology.gantry.dev/rack" or "kubernetes.io/hostname").
type TopologyRequest struct {
	Mode  TopologyMode
	Level string
	// SliceLevel/SliceSize: every group of SliceSize pods must share one domain of
	// SliceLevel (Kueue's podset-slice-required-topology).
	SliceLevel string
	SliceSize  int32
	// InnerSlices are the further slice layers inside SliceLevel, coarsest first, each
	// Size dividing the one above (Kueue's podset-slice-required-topology-constraints
	// after its first entry, which is SliceLevel/SliceSize); unused entries have Size 0.
	// An array, not a slice, so that a TopologyRequest stays comparable.
	InnerSlices [MaxInnerSlices]SliceLayer
	// Group (Kueue's podset-group-name): the pod sets of a workload with the same Group
	// are placed together in one domain of Level.
	Group string
	// HighestTierAllowed is Volcano networkTopology's bound: index into the Topology's
	// levels counted from the narrowest (1 = narrowest). 0 means unset.
	HighestTierAllowed int32
}

// PodSet is a group of identical pods inside a workload.
type PodSet struct {
	Name     string
	Count    int32
	MinCount int32 // pods of this set in the gang; 0 means Count
	// Requests per pod: requests, or limits for extended resources without requests, the
	// way Kubernetes defaults them; init containers counted as the scheduler counts them.
	Requests resources.Vector
	// ContainerGPU is the most GPU units (nvidia.com/gpu or .shared) one container of a
	// pod asks for; 0 when unknown (a trace), and then the pod counts as one container.
	ContainerGPU      int64
	NodeSelector      map[string]string
	Affinity          *corev1.NodeSelector // required node affinity (terms ORed)
	Tolerations       []corev1.Toleration
	PriorityClassName string
	SchedulerName     string
	Topology          *TopologyRequest
	// Claims are the pods' DRA resource claims (spec.resourceClaims), resolved. The
	// quota amounts their devices count as are already in Requests.
	Claims []PodClaim
}

// GangCount is the number of pods of this set that must start together.
func (p PodSet) GangCount() int32 {
	if p.MinCount > 0 && p.MinCount < p.Count {
		return p.MinCount
	}
	return p.Count
}

// Timing is the simulator's view of a workload's life.
type Timing struct {
	SubmitAt        time.Duration // offset from simulation start
	Duration        time.Duration // uninterrupted run time; 0 = runs until the end
	CheckpointEvery time.Duration // 0 = never checkpoints (all progress lost on preemption)
}

// Workload is what every job kind becomes: pod sets that start together, a queue, a priority.
type Workload struct {
	Meta
	Owner         OwnerRef
	Queue         string // LocalQueue name in the workload's namespace
	PriorityClass string
	// PrioritySource says which kind of class PriorityClass names.
	PrioritySource PriorityClassKind
	// Priority is resolved by the loader from the class (0 when none).
	Priority int32
	PodSets  []PodSet
	// MinMember is the gang size over all pod sets (PodGroup minMember); 0 means the sum
	// of the pod sets' gang counts.
	MinMember  int32
	MaxRuntime time.Duration // kueue.x-k8s.io/max-exec-time-seconds: used for reservations
	MinRuntime time.Duration // not preempted before running this long
	Timing     Timing
}

// ID returns "namespace/name".
func (w *Workload) ID() WorkloadID { return WorkloadID(w.Namespace + "/" + w.Name) }

// TotalRequests sums requests over all pods of all pod sets (Count pods each).
func (w *Workload) TotalRequests() resources.Vector {
	total := resources.Vector{}
	for _, ps := range w.PodSets {
		total.AddInPlace(ps.Requests.Scale(int64(ps.Count)))
	}
	return total
}

// GangSize is the number of pods that must be placed together.
func (w *Workload) GangSize() int32 {
	if w.MinMember > 0 {
		return w.MinMember
	}
	var n int32
	for _, ps := range w.PodSets {
		n += ps.GangCount()
	}
	return n
}
