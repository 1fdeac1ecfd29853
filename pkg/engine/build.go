package engine

import (
	"fmt"
	"math/rand"
	"time"

	"github.com/gantry-sched/gantry/pkg/admission"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/dra"
	"github.com/gantry-sched/gantry/pkg/placement"
)

// Policy is the scheduling policy a driver chooses; everything else the engine needs
// comes from the loaded objects. The simulator, `explain`, every `bench` and the
// controller build their scheduler with Build from a Policy, so none of them can leave
// out a part of the engine another one has.
type Policy struct {
	Config
	// Placement ranks nodes for ClusterQueues without a placement policy of their own;
	// empty means placement's defaults (placement.DefaultScorersFor the live shapes).
	Placement api.PlacementPolicy
	// Seed seeds tie-breaking (the cycle's and placement's): same inputs and seed, same
	// decisions.
	Seed int64
	// RetryAll hands every pending workload to every cycle instead of parking the
	// inadmissible ones until a relevant change (same decisions, slower; comparisons).
	RetryAll bool
	// Classes are DeviceClasses a driver compiled against the nodes it schedules on
	// (the controller's live nodes: its objects carry no Node objects, and an
	// allocationMode All claim is charged by the nodes' devices); nil: Build compiles
	// the objects' classes against the nodes the objects describe (CompileClasses).
	Classes *dra.Classes
}

// DefaultPolicy is what `gantry simulate` and `gantry controller` run unless told
// otherwise: preemption and backfill reservations on, a two-minute notice.
func DefaultPolicy() Policy {
	return Policy{Config: Config{Preemption: true, Reservations: true, Grace: 2 * time.Minute}, Seed: 42}
}

// Build wires the scheduler from the loaded objects: the queue resolver (LocalQueues,
// namespace selectors, stop policies), the placement layer with every ClusterQueue's
// own scorers, preemption policy and disruption budget, the fragmentation scorer's
// shape statistics (learned from the live workloads and nodes, see syncShapes), the
// ResourceFlavors for flavor fallback, and the DeviceClasses, compiled once here for
// every pod set's DRA claims. objs.Workloads are not submitted: drivers Submit
// each when it arrives.
func Build(objs *api.Objects, pol Policy) (*Scheduler, error) {
	if objs == nil {
		return nil, fmt.Errorf("engine: no objects")
	}
	resolver, err := admission.NewResolver(objs)
	if err != nil {
		return nil, err
	}
	shapes := placement.NewShapeStats()
	var scorers []placement.WeightedScorer
	if len(pol.Placement.Scorers) > 0 {
		if scorers, err = placement.ScorersFor(pol.Placement, shapes); err != nil {
			return nil, err
		}
	}
	classes := pol.Classes
	if classes == nil {
		if classes, err = CompileClasses(objs); err != nil {
			return nil, err
		}
	}
	placer, err := NewQueuePlacer(PlacerConfig{Flavors: objs.Flavors, ClusterQueues: objs.ClusterQueues,
		Shapes: shapes, Scorers: scorers, Seed: pol.Seed, Grace: pol.Grace, Classes: classes})
	if err != nil {
		return nil, err
	}
	eng, err := New(pol.Config, placer)
	if err != nil {
		return nil, err
	}
	s := &Scheduler{eng: eng, resolver: resolver, flavors: map[string]api.ResourceFlavor{},
		roots: cohortRoots(objs), wls: map[api.WorkloadID]*entry{}, retryAll: pol.RetryAll,
		pendingByCQ: map[string]map[*entry]struct{}{}, headOf: map[string]*entry{}, headsDirty: map[string]bool{}, holdMemo: map[string]headHold{},
		rng: rand.New(rand.NewSource(pol.Seed)), seed: pol.Seed, parked: newParkedIndex(), quotaClasses: map[quotaClass]int32{},
		queueFacts: map[*api.ClusterQueue]*queueFacts{}, seekers: map[string]*seekerSet{},
		active: &entrySet{}, running: &entrySet{}, leaving: &entrySet{}, protected: &entrySet{},
		nominated: map[api.WorkloadID][]api.WorkloadID{}, preemptedBy: map[api.WorkloadID]api.WorkloadID{},
		census: placement.NewShapeCensus(), shapes: shapes, liveDefault: scorers == nil}
	for _, f := range objs.Flavors {
		s.flavors[f.Name] = f
	}
	for _, cq := range objs.ClusterQueues {
		if cq.AdmissionFairSharing.Enabled && s.lqUsage == nil {
			s.lqUsage = admission.NewLocalQueueUsage(resolver, 0)
		}
		b := cq.DisruptionBudget
		if b.MaxGPUs > 0 && b.Window <= 0 {
			s.keepHistory = true // a budget without a window counts every preemption
		}
		s.maxWindow = max(s.maxWindow, b.Window)
		s.flavorChoices = s.flavorChoices || severalFlavors(cq)
	}
	return s, nil
}

// cohortRoots resolves every ClusterQueue's cohort root once: quota freed anywhere in
// a tree can be borrowed anywhere in it. A parent cycle stops at the repeat (the
// loader rejects them).
func cohortRoots(objs *api.Objects) map[string]string {
	parent := make(map[string]string, len(objs.Cohorts))
	for _, c := range objs.Cohorts {
		parent[c.Name] = c.Parent
	}
	roots := make(map[string]string, len(objs.ClusterQueues))
	for _, cq := range objs.ClusterQueues {
		if cq.Cohort == "" {
			roots[cq.Name] = "cq:" + cq.Name
			continue
		}
		root, seen := cq.Cohort, map[string]bool{cq.Cohort: true}
		for parent[root] != "" && !seen[parent[root]] {
			root = parent[root]
			seen[root] = true
		}
		roots[cq.Name] = "cohort:" + root
	}
	return roots
}
