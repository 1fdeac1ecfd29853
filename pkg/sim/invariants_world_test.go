package sim

import (
	"fmt"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/engine"
	"github.com/gantry-sched/gantry/pkg/resources"
	"pgregory.net/rapid"
)

// The random worlds of TestInvariantsProperty: whole-GPU H100 and A100 pools (on-demand
// and spot) and an H100 MIG pool, each also a ResourceFlavor of its name; ClusterQueues
// in cohorts with nominal quota, borrowing and lending limits, both queueing strategies,
// random preemption policies and disruption budgets; gangs of 1-4 pods of whole GPUs or
// MIG slices; node failures, removals, additions, spot interruptions and returns, MIG
// re-layouts, quota changes and controller restarts (invariants_restart_test.go) at
// random times.

// invPool is a kind of node of the invariant worlds; its name is also its flavor.
type invPool struct {
	name, model, capacity string
	mig                   bool
}

var invPools = []invPool{
	{name: "h100", model: "H100", capacity: api.CapacityOnDemand},
	{name: "spot", model: "H100", capacity: api.CapacitySpot},
	{name: "a100", model: "A100", capacity: api.CapacityOnDemand},
	{name: "mig", model: "H100", capacity: api.CapacityOnDemand, mig: true},
}

// invWholeFlavors are the flavors offering whole GPUs (nvidia.com/gpu).
var invWholeFlavors = []string{"h100", "spot", "a100"}

// invMIGProfiles are the H100 MIG profiles jobs ask for (nvidia.com/mig-<profile>).
var invMIGProfiles = []string{"1g.10gb", "2g.20gb", "3g.40gb"}

// invMIGLayouts are the layouts of MIG nodes; a re-layout may also disable MIG.
var invMIGLayouts = []string{"all-1g.10gb", "all-balanced", "all-3g.40gb"}

const (
	invHorizon    = 3 * 24 * time.Hour // every run stops here at the latest
	invSubmitSpan = 8 * 60             // minutes over which jobs arrive
	// invRestartSpan is the span of minutes in which the controller restarts: while jobs
	// arrive and for the hours most of them run after.
	invRestartSpan = invSubmitSpan + 6*60
)

// invWorld is one drawn world: the objects, the engine policy, the controller's
// restarts, whether the restarts' decisions are compared with plain passes' (one world
// with restarts in three: those runs are dear) and the stop time.
type invWorld struct {
	objs     *api.Objects
	policy   engine.Policy
	restarts []invRestart
	compare  bool
	until    time.Duration
}

// invRestart is when the controller restarts: at a time, or delay after the instant of
// the run's afterNotice-th preemption notice (not at all when fewer are given).
type invRestart struct {
	at          time.Duration
	afterNotice int
	delay       time.Duration
}

func (r invRestart) String() string {
	if r.afterNotice > 0 {
		return fmt.Sprintf("%s after notice #%d", r.delay, r.afterNotice)
	}
	return "at " + r.at.String()
}

// invShape is the fixed part of a ClusterQueue's quota: its whole-GPU flavors in order,
// whether it covers MIG slices, whether it is in a cohort (limits need one). A quota
// change redraws the amounts and keeps the shape.
type invShape struct {
	whole  []string
	mig    bool
	cohort bool
}

// invBuilder accumulates a world while it is drawn.
type invBuilder struct {
	o      api.Objects
	nodes  []string // every node name any event may target (initial and added)
	mig    []string // MIG-capable nodes (MIG pool, initial and added)
	shapes []invShape
	events int
	// contended worlds preempt: preemption is on with a notice of 1-5 minutes and every
	// ClusterQueue preempts lower priorities within itself and reclaims in its cohort.
	contended bool
}

// drawInvariantWorld draws a whole world, one in three contended.
func drawInvariantWorld(rt *rapid.T) invWorld {
	b := &invBuilder{contended: rapid.IntRange(0, 2).Draw(rt, "contended") == 0}
	b.drawPools(rt)
	b.drawQueues(rt)
	b.drawJobs(rt)
	b.drawEvents(rt)
	w := invWorld{objs: &b.o, policy: b.drawPolicy(rt), restarts: b.drawRestarts(rt), until: invHorizon}
	w.compare = len(w.restarts) > 0 && rapid.IntRange(0, 2).Draw(rt, "compareRestarts") == 0
	return w
}

// drawRestarts draws 0-4 controller restarts (at least one in two worlds of three), at
// whole minutes from the first on (a restart at a minute where events happen follows
// them and their cycles), each of one kind:
//   - one in four at a random minute;
//   - one in four 0-5 minutes after a job's arrival, when what it caused is fresh;
//   - one in two 0-1 minutes after the instant of the run's first to fourth preemption
//     notice, while victims leave and their preemptors wait (preemptions are rare:
//     random times seldom meet one).
func (b *invBuilder) drawRestarts(rt *rapid.T) []invRestart {
	n := rapid.SampledFrom([]int{0, 0, 1, 1, 2, 4}).Draw(rt, "restarts")
	out := make([]invRestart, 0, n)
	for i := 0; i < n; i++ {
		switch rapid.IntRange(0, 3).Draw(rt, "restartKind") {
		case 0:
			out = append(out, invRestart{at: time.Duration(rapid.IntRange(1, invRestartSpan).Draw(rt, "restartMin")) * time.Minute})
		case 1:
			w := b.o.Workloads[rapid.IntRange(0, len(b.o.Workloads)-1).Draw(rt, "restartJob")]
			delay := time.Duration(rapid.IntRange(0, 5).Draw(rt, "restartDelayMin")) * time.Minute
			out = append(out, invRestart{at: max(time.Minute, w.Timing.SubmitAt+delay)})
		default:
			out = append(out, invRestart{afterNotice: rapid.SampledFrom([]int{1, 1, 2, 3, 4}).Draw(rt, "restartNotice"),
				delay: time.Duration(rapid.SampledFrom([]int{0, 0, 1}).Draw(rt, "restartNoticeDelayMin")) * time.Minute})
		}
	}
	return out
}

// drawPolicy draws the engine policy: preemption and reservations on or off, a grace
// period, attempt caps and reservation depths, parking or retrying all.
func (b *invBuilder) drawPolicy(rt *rapid.T) engine.Policy {
	cfg := engine.Config{
		Preemption:       b.contended || rapid.Bool().Draw(rt, "preemption"),
		Reservations:     rapid.Bool().Draw(rt, "reservations"),
		Grace:            time.Duration(rapid.IntRange(0, 5).Draw(rt, "graceMin")) * time.Minute,
		MaxAttempts:      rapid.SampledFrom([]int{0, 0, 0, 0, 2, 5}).Draw(rt, "maxAttempts"),
		ReservationDepth: rapid.SampledFrom([]int{0, 1, 3}).Draw(rt, "reservationDepth"),
	}
	if b.contended {
		cfg.Grace = max(cfg.Grace, time.Minute)
	}
	return engine.Policy{Config: cfg, Seed: rapid.Int64().Draw(rt, "seed"), RetryAll: rapid.IntRange(0, 19).Draw(rt, "retryAll") == 0}
}

// poolSpec is a node pool of kind p named name (its nodes are "<name>-<i>").
func poolSpec(p invPool, name string, count, gpus int, layout string) api.NodePool {
	np := api.NodePool{Meta: api.Meta{Name: name}, Count: count, GPUModel: p.model, GPUsPerNode: gpus,
		CPU: 64000, Memory: 512 << 30, CapacityType: p.capacity, NodeLabels: map[string]string{"pool": p.name}}
	if p.mig {
		np.Sharing = devices.Sharing{Mode: devices.MIG, MIGStrategy: devices.MIGMixed, Layout: layout}
	}
	return np
}

// addPool adds a pool's nodes to the targets events may name.
func (b *invBuilder) addPool(p invPool, np api.NodePool) {
	for i := 0; i < np.Count; i++ {
		name := fmt.Sprintf("%s-%d", np.Name, i)
		b.nodes = append(b.nodes, name)
		if p.mig {
			b.mig = append(b.mig, name)
		}
	}
}

// drawPools draws 1-4 on-demand H100 nodes and 0-3 nodes of every other kind; every
// kind is a flavor, with nodes or not (a node addition may bring some).
func (b *invBuilder) drawPools(rt *rapid.T) {
	for _, p := range invPools {
		b.o.Flavors = append(b.o.Flavors, api.ResourceFlavor{Meta: api.Meta{Name: p.name}, NodeLabels: map[string]string{"pool": p.name}})
		lo, hi := 0, 3
		if p.name == "h100" {
			lo, hi = 1, 4
		}
		n := rapid.IntRange(lo, hi).Draw(rt, p.name+"Nodes")
		if n == 0 {
			continue
		}
		np := poolSpec(p, p.name, n, rapid.SampledFrom([]int{2, 4, 8, 8}).Draw(rt, p.name+"GPUs"),
			rapid.SampledFrom(invMIGLayouts).Draw(rt, p.name+"Layout"))
		b.o.NodePools = append(b.o.NodePools, np)
		b.addPool(p, np)
	}
}

// drawQueues draws 2-4 ClusterQueues "cq<i>", each with LocalQueue "lq<i>" in "ns".
func (b *invBuilder) drawQueues(rt *rapid.T) {
	within := []api.PreemptionPolicy{api.PreemptNever, api.PreemptLowerPriority, api.PreemptLowerOrNewerEqualPriority}
	reclaim := []api.PreemptionPolicy{api.PreemptNever, api.PreemptLowerPriority, api.PreemptAny}
	if b.contended {
		within, reclaim = within[1:], reclaim[1:]
	}
	fungible := []api.FungibilityPolicy{api.MayStopSearch, api.TryNextFlavor}
	n := rapid.IntRange(2, 4).Draw(rt, "clusterQueues")
	for i := 0; i < n; i++ {
		cohort := rapid.SampledFrom([]string{"", "c0", "c0", "c1"}).Draw(rt, "cohort")
		sh := drawShape(rt, cohort != "")
		cq := api.ClusterQueue{Meta: api.Meta{Name: fmt.Sprintf("cq%d", i)}, Cohort: cohort,
			QueueingStrategy: rapid.SampledFrom([]api.QueueingStrategy{api.StrictFIFO, api.BestEffortFIFO, api.BestEffortFIFO}).Draw(rt, "strategy"),
			ResourceGroups:   drawQuota(rt, sh),
			Preemption: api.Preemption{
				WithinClusterQueue:  rapid.SampledFrom(within).Draw(rt, "withinClusterQueue"),
				ReclaimWithinCohort: rapid.SampledFrom(reclaim).Draw(rt, "reclaimWithinCohort"),
				BorrowWithinCohort:  drawBorrowWithinCohort(rt),
			},
			FlavorFungibility: api.FlavorFungibility{WhenCanBorrow: rapid.SampledFrom(fungible).Draw(rt, "whenCanBorrow"),
				WhenCanPreempt: rapid.SampledFrom(fungible).Draw(rt, "whenCanPreempt")},
			FairSharing:      api.FairSharing{WeightMilli: 1000},
			DisruptionBudget: drawBudget(rt),
		}
		b.o.ClusterQueues = append(b.o.ClusterQueues, cq)
		b.o.LocalQueues = append(b.o.LocalQueues, api.LocalQueue{Meta: api.Meta{Name: fmt.Sprintf("lq%d", i), Namespace: "ns"}, ClusterQueue: cq.Name})
		b.shapes = append(b.shapes, sh)
	}
}

// drawBudget draws a disruption budget for one ClusterQueue in four: 1-16 GPUs
// preempted per window of 30 minutes or 2 hours, or ever (no window). Budgets make the
// preemption history count, and a restart restore it.
func drawBudget(rt *rapid.T) api.DisruptionBudget {
	if rapid.IntRange(0, 3).Draw(rt, "hasBudget") > 0 {
		return api.DisruptionBudget{}
	}
	return api.DisruptionBudget{MaxGPUs: int64(rapid.IntRange(1, 16).Draw(rt, "budgetGPUs")),
		Window: time.Duration(rapid.SampledFrom([]int{0, 30, 120}).Draw(rt, "budgetWindowMin")) * time.Minute}
}

func drawBorrowWithinCohort(rt *rapid.T) api.BorrowWithinCohort {
	if !rapid.Bool().Draw(rt, "borrowWithinCohort") {
		return api.BorrowWithinCohort{Policy: api.PreemptNever}
	}
	th := int32(rapid.IntRange(0, 3).Draw(rt, "maxPriorityThreshold"))
	return api.BorrowWithinCohort{Policy: api.PreemptLowerPriority, MaxPriorityThreshold: &th}
}

// drawShape draws 1-3 whole-GPU flavors in a random order and whether MIG is covered
// (two times in three).
func drawShape(rt *rapid.T, cohort bool) invShape {
	order := rapid.Permutation(invWholeFlavors).Draw(rt, "flavorOrder")
	k := rapid.IntRange(1, len(order)).Draw(rt, "wholeFlavors")
	return invShape{whole: order[:k], mig: rapid.IntRange(0, 2).Draw(rt, "coversMIG") > 0, cohort: cohort}
}

// drawQuota draws the amounts of a shape: one group for nvidia.com/gpu over the
// whole-GPU flavors, one for the MIG profiles in flavor "mig" when covered.
func drawQuota(rt *rapid.T, sh invShape) []api.ResourceGroup {
	g := api.ResourceGroup{CoveredResources: []resources.Name{resources.NvidiaGPU}}
	for _, f := range sh.whole {
		g.Flavors = append(g.Flavors, api.FlavorQuotas{Name: f, Resources: []api.ResourceQuota{drawResourceQuota(rt, resources.NvidiaGPU, 24, sh.cohort)}})
	}
	out := []api.ResourceGroup{g}
	if !sh.mig {
		return out
	}
	m := api.ResourceGroup{}
	fq := api.FlavorQuotas{Name: "mig"}
	for _, p := range invMIGProfiles {
		r := resources.Name(resources.MIGPrefix + p)
		m.CoveredResources = append(m.CoveredResources, r)
		fq.Resources = append(fq.Resources, drawResourceQuota(rt, r, 16, sh.cohort))
	}
	m.Flavors = []api.FlavorQuotas{fq}
	return append(out, m)
}

// drawResourceQuota draws a nominal quota up to most and, in a cohort, maybe a
// borrowing and a lending limit.
func drawResourceQuota(rt *rapid.T, r resources.Name, most int, cohort bool) api.ResourceQuota {
	rq := api.ResourceQuota{Name: r, Nominal: resources.Amount(rapid.IntRange(0, most).Draw(rt, "nominal"))}
	if !cohort {
		return rq
	}
	if rapid.Bool().Draw(rt, "hasBorrowingLimit") {
		bl := resources.Amount(rapid.IntRange(0, most/2).Draw(rt, "borrowingLimit"))
		rq.BorrowingLimit = &bl
	}
	if rapid.Bool().Draw(rt, "hasLendingLimit") {
		ll := resources.Amount(rapid.IntRange(0, most).Draw(rt, "lendingLimit"))
		rq.LendingLimit = &ll
	}
	return rq
}

// drawJobs draws 8-48 jobs "j<i>" over the LocalQueues.
func (b *invBuilder) drawJobs(rt *rapid.T) {
	n := rapid.IntRange(8, 48).Draw(rt, "jobs")
	for i := 0; i < n; i++ {
		b.o.Workloads = append(b.o.Workloads, drawJob(rt, fmt.Sprintf("j%03d", i), len(b.o.LocalQueues)))
	}
}

// drawJob draws one gang: 1-4 pods in one or two pod sets of whole GPUs or MIG slices,
// sometimes with MinCount or MinMember, a priority, arrival, run time, checkpoints and
// minimum run time.
func drawJob(rt *rapid.T, name string, queues int) api.Workload {
	submit := time.Duration(rapid.IntRange(0, invSubmitSpan).Draw(rt, "submitMin")) * time.Minute
	w := api.Workload{Meta: api.Meta{Name: name, Namespace: "ns", Created: Epoch().Add(submit)},
		Queue:    fmt.Sprintf("lq%d", rapid.IntRange(0, queues-1).Draw(rt, "queue")),
		Priority: int32(rapid.IntRange(0, 3).Draw(rt, "priority")),
		Timing: api.Timing{SubmitAt: submit,
			Duration:        time.Duration(rapid.IntRange(0, 240).Draw(rt, "runMin")) * time.Minute, // 0: runs to the end
			CheckpointEvery: time.Duration(rapid.SampledFrom([]int{0, 0, 5, 15, 30}).Draw(rt, "checkpointMin")) * time.Minute},
		MinRuntime: time.Duration(rapid.SampledFrom([]int{0, 0, 0, 10, 30}).Draw(rt, "minRuntimeMin")) * time.Minute,
	}
	pods := rapid.IntRange(1, 4).Draw(rt, "pods")
	sets := 1
	if pods > 1 && rapid.IntRange(0, 3).Draw(rt, "twoPodSets") == 0 {
		sets = 2
	}
	first := pods
	if sets == 2 {
		first = rapid.IntRange(1, pods-1).Draw(rt, "firstSetPods")
	}
	w.PodSets = append(w.PodSets, drawPodSet(rt, "main", first))
	if sets == 2 {
		w.PodSets = append(w.PodSets, drawPodSet(rt, "side", pods-first))
	}
	if pods > 1 && w.PodSets[0].MinCount == 0 && rapid.IntRange(0, 19).Draw(rt, "hasMinMember") == 0 {
		w.MinMember = int32(rapid.IntRange(1, pods-1).Draw(rt, "minMember"))
	}
	return w
}

// drawPodSet draws count pods of 1, 2, 4 or 8 whole GPUs or 1-2 MIG slices of one profile.
func drawPodSet(rt *rapid.T, name string, count int) api.PodSet {
	ps := api.PodSet{Name: name, Count: int32(count)}
	if rapid.IntRange(0, 3).Draw(rt, "migPods") == 0 {
		p := rapid.SampledFrom(invMIGProfiles).Draw(rt, "profile")
		ps.Requests = resources.Vector{resources.Name(resources.MIGPrefix + p): resources.Amount(rapid.IntRange(1, 2).Draw(rt, "slices"))}
	} else {
		ps.Requests = resources.Vector{resources.NvidiaGPU: resources.Amount(rapid.SampledFrom([]int{1, 1, 1, 2, 2, 4, 8}).Draw(rt, "gpus"))}
	}
	if count > 1 && rapid.IntRange(0, 9).Draw(rt, "hasMinCount") == 0 {
		ps.MinCount = int32(rapid.IntRange(1, count-1).Draw(rt, "minCount"))
	}
	return ps
}

// drawEvents draws 0-10 cluster events (some come with a later recovery).
func (b *invBuilder) drawEvents(rt *rapid.T) {
	n := rapid.IntRange(0, 10).Draw(rt, "events")
	for i := 0; i < n; i++ {
		at := time.Duration(rapid.IntRange(0, invSubmitSpan+120).Draw(rt, "eventMin")) * time.Minute
		switch rapid.IntRange(0, 7).Draw(rt, "eventKind") {
		case 0:
			b.nodeDown(rt, api.EventNodeFail, at)
		case 1:
			b.nodeDown(rt, api.EventNodeRemove, at)
		case 2:
			b.nodeAdd(rt, at)
		case 3:
			b.spotInterruption(rt, at)
		case 4:
			b.event(api.ClusterEvent{Type: api.EventSpotReturn, At: at, Pool: "spot"})
		case 5:
			b.quotaChange(rt, at)
		case 6:
			b.relayout(rt, at)
		case 7:
			b.event(api.ClusterEvent{Type: api.EventNodeRecover, At: at, Nodes: []string{rapid.SampledFrom(b.nodes).Draw(rt, "node")}})
		}
	}
}

// event appends ev with a unique name.
func (b *invBuilder) event(ev api.ClusterEvent) {
	ev.Name = fmt.Sprintf("ev%02d", b.events)
	b.events++
	b.o.Events = append(b.o.Events, ev)
}

// nodeDown fails or removes a node, which maybe recovers 5-120 minutes later.
func (b *invBuilder) nodeDown(rt *rapid.T, kind api.ClusterEventType, at time.Duration) {
	node := rapid.SampledFrom(b.nodes).Draw(rt, "node")
	b.event(api.ClusterEvent{Type: kind, At: at, Nodes: []string{node}})
	if rapid.Bool().Draw(rt, "recovers") {
		back := at + time.Duration(rapid.IntRange(5, 120).Draw(rt, "downMin"))*time.Minute
		b.event(api.ClusterEvent{Type: api.EventNodeRecover, At: back, Nodes: []string{node}})
	}
}

// nodeAdd brings 1-2 nodes of a random kind in a new pool "add<k>".
func (b *invBuilder) nodeAdd(rt *rapid.T, at time.Duration) {
	p := rapid.SampledFrom(invPools).Draw(rt, "addKind")
	np := poolSpec(p, fmt.Sprintf("add%02d", b.events), rapid.IntRange(1, 2).Draw(rt, "addNodes"),
		rapid.SampledFrom([]int{2, 4, 8}).Draw(rt, "addGPUs"), rapid.SampledFrom(invMIGLayouts).Draw(rt, "addLayout"))
	b.addPool(p, np)
	b.event(api.ClusterEvent{Type: api.EventNodeAdd, At: at, AddPool: &np})
}

// spotInterruption reclaims the spot pool or one node, with a 0-5 minute notice, and
// maybe returns it 10-120 minutes later.
func (b *invBuilder) spotInterruption(rt *rapid.T, at time.Duration) {
	ev := api.ClusterEvent{Type: api.EventSpotInterruption, At: at, Pool: "spot",
		Notice: time.Duration(rapid.IntRange(0, 5).Draw(rt, "noticeMin")) * time.Minute}
	if rapid.Bool().Draw(rt, "oneNode") {
		ev.Pool, ev.Nodes = "", []string{rapid.SampledFrom(b.nodes).Draw(rt, "node")}
	}
	if rapid.Bool().Draw(rt, "returns") {
		ev.ReturnAfter = time.Duration(rapid.IntRange(10, 120).Draw(rt, "returnMin")) * time.Minute
	}
	b.event(ev)
}

// quotaChange redraws a ClusterQueue's quota amounts (same flavors and resources).
func (b *invBuilder) quotaChange(rt *rapid.T, at time.Duration) {
	i := rapid.IntRange(0, len(b.shapes)-1).Draw(rt, "quotaQueue")
	b.event(api.ClusterEvent{Type: api.EventQuotaChange, At: at, ClusterQueue: b.o.ClusterQueues[i].Name,
		ResourceGroups: drawQuota(rt, b.shapes[i])})
}

// relayout re-partitions a MIG node (or disables MIG on it) for 1-10 minutes.
func (b *invBuilder) relayout(rt *rapid.T, at time.Duration) {
	if len(b.mig) == 0 {
		return
	}
	layout := rapid.SampledFrom(append([]string{"all-disabled"}, invMIGLayouts...)).Draw(rt, "relayout")
	sh := devices.Sharing{Mode: devices.MIG, MIGStrategy: devices.MIGMixed, Layout: layout}
	b.event(api.ClusterEvent{Type: api.EventMIGRelayout, At: at, Nodes: []string{rapid.SampledFrom(b.mig).Draw(rt, "migNode")},
		Sharing: &sh, ReconfigureTime: time.Duration(rapid.IntRange(1, 10).Draw(rt, "reconfigureMin")) * time.Minute})
}
