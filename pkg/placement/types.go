package placement

import (
	"math/rand"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/devices"
	corev1 "k8s.io/api/core/v1"
)

// FlavorConstraint is what an admitted flavor adds to the pods of one pod set: the
// flavor's node labels (a node selector) and tolerations, and the topology the flavor
// names for topology-aware placement.
type FlavorConstraint struct {
	Flavor       string
	NodeLabels   map[string]string
	Tolerations  []corev1.Toleration
	TopologyName string
}

// FlavorConstraints holds the constraint of each pod set, keyed by pod set name. A pod
// set without an entry has no flavor constraint.
type FlavorConstraints map[string]FlavorConstraint

// FlavorConstraintOf is the constraint a ResourceFlavor puts on pods assigned to it.
func FlavorConstraintOf(f api.ResourceFlavor) FlavorConstraint {
	return FlavorConstraint{Flavor: f.Name, NodeLabels: f.NodeLabels, Tolerations: f.Tolerations, TopologyName: f.TopologyName}
}

// Options tune one placement.
type Options struct {
	// Scorers rank feasible nodes; empty means DefaultScorers.
	Scorers []WeightedScorer
	// Rand breaks ties between equally scored nodes; nil takes the first in node order.
	// Pass a seeded source so runs are reproducible.
	Rand *rand.Rand
	// FitCache, when set, remembers device fits across placements (see FitCache): a
	// caller placing many workloads on overlays of one snapshot skips repeated Fit calls
	// on nodes that did not change. Decisions are the same with or without it.
	FitCache *FitCache
	// Quiet skips the per-node diagnosis of a failed placement (every node checked
	// again, each rejection formatted): callers that only ask whether a gang fits, such
	// as reservation walks, get a Diagnosis without Counts, NearMiss or FitNodes.
	Quiet bool
	// Claims compiles the DRA claims of pod sets that have them (nil: such a pod set
	// cannot be placed, and its Diagnosis says so).
	Claims *DeviceClaims
}

// PodPlacement is one pod's place: its pod set, index in the set, node and devices.
type PodPlacement struct {
	PodSet  string
	Index   int
	Node    string
	Devices devices.Assignment
}

// Placement is where a whole workload lands. Pods are in pod-set order, then index; the
// gang's pods come first in each set, then the extra pods that also fitted.
type Placement struct {
	Workload api.WorkloadID
	Pods     []PodPlacement
}
