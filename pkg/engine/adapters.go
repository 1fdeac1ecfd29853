package engine

import (
	"fmt"
	"math/rand"
	"strconv"
	"time"

	"github.com/gantry-sched/gantry/pkg/admission"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/dra"
	"github.com/gantry-sched/gantry/pkg/placement"
	"github.com/gantry-sched/gantry/pkg/plan"
)

// admissionQuota adapts *admission.Quota (a per-cycle clone) to Quota.
type admissionQuota struct {
	q         *admission.Quota
	protected func(api.WorkloadID) bool
}

var _ Quota = admissionQuota{}

// NewAdmissionQuota adapts an admission.Quota the caller cloned for this cycle.
// protected (may be nil) names workloads admission must not choose as victims
// (minimum runtime, disruption budget).
func NewAdmissionQuota(q *admission.Quota, protected func(api.WorkloadID) bool) Quota {
	return admissionQuota{q: q, protected: protected}
}

func (a admissionQuota) Assign(w *api.Workload, cq string) admission.Assignment {
	return a.q.Assign(w, cq)
}

func (a admissionQuota) AssignWithout(w *api.Workload, cq string, without map[string]bool) admission.Assignment {
	return a.q.AssignWithout(w, cq, without)
}

func (a admissionQuota) Victims(w *api.Workload, as admission.Assignment) admission.PreemptionResult {
	return a.q.FindVictims(w, as, a.protected)
}

func (a admissionQuota) Admit(w *api.Workload, as admission.Assignment) error {
	return a.q.Admit(w, as)
}

func (a admissionQuota) Share(cq string) int64 { return a.q.Share(cq) }

func (a admissionQuota) AssignBlocked(w *api.Workload, cq string) admission.Assignment {
	return a.q.AssignBlocked(w, cq)
}

func (a admissionQuota) FitsAfter(as admission.Assignment, held []admission.Assignment, gone []api.WorkloadID) bool {
	return a.q.FitsAfter(as, held, gone)
}

func (a admissionQuota) MayHold(cq string) bool { return a.q.MayHold(cq) }

func (a admissionQuota) WithHeld(held []admission.Assignment) Quota {
	return admissionQuota{q: a.q.WithHeld(held), protected: a.protected}
}

func (a admissionQuota) FitsHeld(as admission.Assignment, own []admission.FlavorAmount, extra []admission.Assignment, gone []api.WorkloadID) bool {
	return a.q.FitsHeld(as, own, extra, gone)
}

func (a admissionQuota) Hold(cq string, usage []admission.FlavorAmount) { a.q.Hold(cq, usage, 1) }

func (a admissionQuota) ShortHeld(p Pending, own []admission.FlavorAmount) bool {
	if len(own) > 0 {
		a.q.Hold(p.ClusterQueue, own, -1)
		defer a.q.Hold(p.ClusterQueue, own, 1)
	}
	return a.Short(p)
}

func (a admissionQuota) Unreclaimable(as admission.Assignment) []admission.FlavorAmount {
	return a.q.Unreclaimable(as)
}

// Short asks the question the scheduler compiled for p's queue and shape when it has
// one (Pending.short), else compiles it.
func (a admissionQuota) Short(p Pending) bool {
	if p.short != nil {
		return a.q.ShortBy(p.short)
	}
	return a.q.Short(p.Workload, p.ClusterQueue)
}

// PlacerConfig configures the placement adapter.
type PlacerConfig struct {
	Flavors []api.ResourceFlavor
	// Scorers rank nodes for ClusterQueues without their own placement policy; empty
	// means placement's defaults.
	Scorers []placement.WeightedScorer
	// ClusterQueues with a Placement policy use their own scorers.
	ClusterQueues []api.ClusterQueue
	// Shapes feeds the fragmentation scorer of queue policies (nil: no shape data).
	Shapes *placement.ShapeStats
	// Seed seeds the tie-breaking source (placement ties only).
	Seed int64
	// Grace is the notice a placement victim gets.
	Grace time.Duration
	// Classes are the cluster's DeviceClasses, compiled (nil: no pod set may ask for
	// devices through DRA claims).
	Classes *dra.Classes
}

// placementLayer adapts pkg/placement to Placer.
type placementLayer struct {
	flavors map[string]api.ResourceFlavor
	scorers []placement.WeightedScorer
	perCQ   map[string][]placement.WeightedScorer
	queues  map[string]api.ClusterQueue
	budgets map[string]api.DisruptionBudget
	rng     *rand.Rand
	grace   time.Duration
	// claims compiles pod sets' DRA claims once per pod set.
	claims *placement.DeviceClaims
	// fits remembers device fits per node state across placements and cycles (nodes
	// that did not change keep their answers) and lends choosers their buffers; cycles
	// run one at a time.
	fits *placement.FitCache
	// gpuScratch is the node set of Reserve's free-GPU views (capacity_wake.go).
	gpuScratch cluster.NodeSet
	// oneSet memoizes single pod sets' flavor constraints (oneSetConstraints).
	oneSet map[constraintKey]placement.FlavorConstraints
}

var _ Placer = (*placementLayer)(nil)

// NewPlacer returns the Placer over pkg/placement with cfg.Scorers for every queue.
// cfg.ClusterQueues still give each queue's preemption policy and disruption budget,
// but not its scorers: use NewQueuePlacer for per-queue placement policies.
func NewPlacer(cfg PlacerConfig) Placer {
	return newPlacementLayer(cfg, map[string][]placement.WeightedScorer{})
}

// NewQueuePlacer is NewPlacer that also honours each ClusterQueue's placement policy. A
// policy naming an unknown scorer or a non-positive weight is an error naming the queue.
func NewQueuePlacer(cfg PlacerConfig) (Placer, error) {
	perCQ := map[string][]placement.WeightedScorer{}
	for _, cq := range cfg.ClusterQueues {
		if len(cq.Placement.Scorers) == 0 {
			continue
		}
		ss, err := placement.ScorersFor(cq.Placement, cfg.Shapes)
		if err != nil {
			return nil, fmt.Errorf("clusterqueue %q (%s): %w", cq.Name, cq.Source, err)
		}
		perCQ[cq.Name] = ss
	}
	return newPlacementLayer(cfg, perCQ), nil
}

func newPlacementLayer(cfg PlacerConfig, perCQ map[string][]placement.WeightedScorer) *placementLayer {
	fl := make(map[string]api.ResourceFlavor, len(cfg.Flavors))
	for _, f := range cfg.Flavors {
		fl[f.Name] = f
	}
	queues := make(map[string]api.ClusterQueue, len(cfg.ClusterQueues))
	for _, cq := range cfg.ClusterQueues {
		queues[cq.Name] = cq
	}
	return &placementLayer{flavors: fl, scorers: cfg.Scorers, perCQ: perCQ, queues: queues,
		budgets: placement.BudgetsOf(cfg.ClusterQueues),
		rng:     rand.New(rand.NewSource(cfg.Seed)), grace: cfg.Grace, fits: &placement.FitCache{},
		claims: placement.NewDeviceClaims(cfg.Classes)}
}

// options are the placement options for a workload admitted in clusterQueue; rnd is
// the cycle's source when given, else the placer's own.
func (p *placementLayer) options(clusterQueue string, rnd *rand.Rand) placement.Options {
	if rnd == nil {
		rnd = p.rng
	}
	if ss, ok := p.perCQ[clusterQueue]; ok {
		return placement.Options{Scorers: ss, Rand: rnd, FitCache: p.fits, Claims: p.claims}
	}
	return placement.Options{Scorers: p.scorers, Rand: rnd, FitCache: p.fits, Claims: p.claims}
}

// constraints turns a quota assignment into per pod set flavor constraints (a pod set's
// first resource's flavor decides its nodes; resource groups share node labels in
// practice, as in Kueue).
func (p *placementLayer) constraints(a admission.Assignment) placement.FlavorConstraints {
	if len(a.PodSets) == 1 {
		return p.oneSetConstraints(&a.PodSets[0])
	}
	fc := make(placement.FlavorConstraints, len(a.PodSets))
	for _, ps := range a.PodSets {
		if r, ok := decidingResource(ps.Resources, p.flavors); ok {
			fc[ps.Name] = placement.FlavorConstraintOf(p.flavors[r.Flavor])
		}
	}
	return fc
}

// oneSetConstraints is constraints for a single pod set, shared between calls with the
// same pod set name and deciding flavor: most workloads have one pod set, and a map per
// placement tried was a visible share of what a fleet-size cycle allocates. Placement
// only reads the map. The memo starts over past maxConstraintMemo entries.
func (p *placementLayer) oneSetConstraints(ps *admission.PodSetAssignment) placement.FlavorConstraints {
	r, ok := decidingResource(ps.Resources, p.flavors)
	key := constraintKey{podSet: ps.Name, flavor: r.Flavor, known: ok}
	if fc, hit := p.oneSet[key]; hit {
		return fc
	}
	fc := placement.FlavorConstraints{}
	if ok {
		fc[ps.Name] = placement.FlavorConstraintOf(p.flavors[r.Flavor])
	}
	if p.oneSet == nil || len(p.oneSet) >= maxConstraintMemo {
		p.oneSet = map[constraintKey]placement.FlavorConstraints{}
	}
	p.oneSet[key] = fc
	return fc
}

// constraintKey names a single pod set's constraints: its name and deciding flavor
// (known false: no flavor decides, no constraint).
type constraintKey struct {
	podSet, flavor string
	known          bool
}

// maxConstraintMemo bounds oneSetConstraints' memo (pod set names are few in practice).
const maxConstraintMemo = 4096

// decidingResource is the resource whose flavor places a pod set: the GPU resource of
// a known flavor last in name order, else the first resource in name order when its
// flavor is known (picked without sorting: this runs for every placement tried).
func decidingResource(rs []admission.ResourceAssignment, flavors map[string]api.ResourceFlavor) (admission.ResourceAssignment, bool) {
	var gpu, first *admission.ResourceAssignment
	for k := range rs {
		r := &rs[k]
		if _, known := flavors[r.Flavor]; known && r.Resource.IsGPU() && (gpu == nil || r.Resource > gpu.Resource) {
			gpu = r
		}
		if first == nil || r.Resource < first.Resource {
			first = r
		}
	}
	switch {
	case gpu != nil:
		return *gpu, true
	case first != nil:
		_, known := flavors[first.Flavor]
		return *first, known
	}
	return admission.ResourceAssignment{}, false
}

func (p *placementLayer) fit(c PlaceCall) placement.GangFit {
	w, a := c.Workload, c.Assignment
	fc := p.constraints(a)
	opts := p.options(a.ClusterQueue, c.Rand)
	opts.Quiet = true // preemption and reservation walks ask only whether it fits
	return func(ov *cluster.Overlay) (*placement.Placement, bool) {
		pl, diag := placement.PlaceWorkload(ov, w, fc, opts)
		return &pl, diag == nil
	}
}

func (p *placementLayer) Place(c PlaceCall) PlaceResult {
	fc := p.constraints(c.Assignment)
	opts := p.options(c.Assignment.ClusterQueue, c.Rand)
	opts.Quiet = c.Quiet
	pl, diag := placement.PlaceWorkload(c.Overlay, c.Workload, fc, opts)
	if diag != nil {
		return PlaceResult{Failure: &plan.PlaceFailure{Code: plan.PlacementReason(diag.Code()), Diagnosis: diag}}
	}
	return PlaceResult{OK: true, Bindings: bindingsOf(c.Overlay, c.Workload, &pl)}
}

func bindingsOf(ov *cluster.Overlay, w *api.Workload, pl *placement.Placement) []plan.Binding {
	out := make([]plan.Binding, 0, len(pl.Pods))
	for _, pp := range pl.Pods {
		ref := cluster.PodRef{Workload: w.ID(), PodSet: pp.PodSet, Index: pp.Index}
		bp, _ := ov.Pod(ref)
		out = append(out, plan.Binding{
			Workload: w.ID(), PodSet: pp.PodSet, Index: pp.Index,
			Pod:  w.Name + "-" + pp.PodSet + "-" + strconv.Itoa(pp.Index), // fmt's reflection per pod showed at fleet size
			Node: pp.Node, Devices: pp.Devices.IDs(), Requests: bp.Requests, Assignment: pp.Devices,
		})
	}
	return out
}

// Preempt runs placement's victim search under the ClusterQueue's withinClusterQueue
// policy (empty: LowerPriority), every queue's disruption budget and the preemption
// history (past cycles plus earlier preemptions of this cycle).
func (p *placementLayer) Preempt(c PlaceCall) PreemptResult {
	w, a := c.Workload, c.Assignment
	req := placement.PreemptionRequest{
		Preemptor: placement.Preemptor{ID: w.ID(), Priority: w.Priority, Created: w.Created},
		Policy:    p.queues[a.ClusterQueue].Preemption.WithinClusterQueue,
		Running:   c.Running, History: c.History, Now: c.Now, GracePeriod: p.graceFor(c),
		Budgets: p.budgets,
	}
	if req.Policy == api.PreemptNever {
		return PreemptResult{Reason: "ClusterQueue " + a.ClusterQueue + " never preempts"}
	}
	res, err := placement.SelectVictims(c.Overlay, p.fit(c), req)
	if err != nil {
		return PreemptResult{Reason: err.Error()}
	}
	if res.Outcome != placement.PreemptFound {
		return PreemptResult{Reason: res.Summary()}
	}
	out := PreemptResult{Notices: res.Notices, Records: res.Records(c.Now)}
	for _, v := range res.Victims {
		out.Victims = append(out.Victims, v.Workload)
	}
	return out
}

// Preempts reports whether the ClusterQueue's withinClusterQueue policy lets its
// workloads preempt running gangs on the nodes (Preempt refuses otherwise).
func (p *placementLayer) Preempts(clusterQueue string) bool {
	return p.queues[clusterQueue].Preemption.WithinClusterQueue != api.PreemptNever
}

var _ nodePreempter = (*placementLayer)(nil)

// graceFor is the placer's own notice period, else the engine's.
func (p *placementLayer) graceFor(c PlaceCall) time.Duration {
	if p.grace > 0 {
		return p.grace
	}
	return c.Grace
}

// Reserve plans a backfill reservation that does not count on GPUs held by earlier
// heads (c.Held) and keeps last cycle's reservation (c.Previous) while it is valid.
func (p *placementLayer) Reserve(c PlaceCall) (plan.Reservation, bool) {
	w, a := c.Workload, c.Assignment
	req := placement.ReservationRequest{
		Workload: w.ID(), Queue: a.ClusterQueue, Running: c.Ends, Now: c.Now,
		Held: c.Held, Previous: c.Previous, NeedGPUMilli: c.NeedGPUMilli, FreeGPUMilli: c.FreeGPUMilli,
		NoFitNow: c.NoFitNow,
	}
	if needs := gpuPodNeeds(w); len(needs) > 0 {
		v := newOverlayGPUView(c.Overlay, &p.gpuScratch) // one view for the walk's steps, emptied at each
		req.MayFit = func(ov *cluster.Overlay) bool { v.restart(ov); return v.mayFit(needs) }
	}
	res, err := placement.PlanReservation(c.Overlay, p.fit(c), req)
	if err != nil || res.Outcome != placement.Reserved || res.Reservation == nil {
		return plan.Reservation{}, false
	}
	r := res.Reservation
	return plan.Reservation{Workload: w.ID(), Nodes: r.Nodes(), ETA: r.Start, Reason: res.Reason,
		Pods: r.Pods, Waits: r.Waits}, true
}
