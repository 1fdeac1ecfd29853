package engine

import (
	"sort"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/placement"
	"github.com/gantry-sched/gantry/pkg/plan"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// cycle is the mutable state of one Cycle call.
type cycle struct {
	e       *Engine
	in      Input
	ov      *cluster.Overlay
	out     plan.Plan
	noticed map[api.WorkloadID]bool // victims noticed in this cycle
	// waiting are the preemptors tried this cycle that wait for victims: their
	// victims are not re-admitted in the rest of the cycle (see heldFor).
	waiting map[api.WorkloadID]bool
	// held are this cycle's device-level reservations (they hold GPUs);
	// reservedNodes the node-level ones (node -> earliest ETA).
	held       placement.ReservationSet
	holds      [][]heldDevice // per held reservation, its devices as hold pods (hold)
	wholeHolds [][]wholeHold  // per held reservation, its whole GPUs by node (hold)
	// room is the free whole GPUs as of quota version roomVersion (lacksRoom).
	room          *freeGPUView
	roomVersion   int
	reservedNodes map[string]time.Time
	blocked       map[string]bool        // StrictFIFO ClusterQueues whose head failed
	runningIdx    map[api.WorkloadID]int // into in.Running; built on first use (runningOf)
	// started are the workloads admitted this cycle as running gangs (their pods are on
	// the overlay), so reservation walks can see when they end.
	started []placement.Running
	// byEnd are running and started in walk order, byEndStarted how many of started it
	// holds (reserve.go runningByEnd).
	byEnd        *placement.RunningByEnd
	byEndStarted int
	// history is Input.History plus this cycle's preemptions (disruption budgets).
	history []placement.PreemptionRecord
	pos     map[*api.Workload]int
	visits  *visits
	// noFit is set when the last attempt ended in admission's NoFit (followers.go);
	// following the classes whose member is waiting in visits.
	noFit     bool
	following map[string]bool
	failed    map[string][]failure // shape key -> placement failures this cycle (equivalence.go)
	// unfitNow are the shape keys a reservation walk found not to fit now with nothing
	// held: the overlay only gains pods in a cycle, so the next walk need not ask again.
	unfitNow map[string]bool
	shapes   map[api.WorkloadID]string // shape keys computed this cycle (Pending.Shape unset)
	// quotaMemo keeps admission's answers per equivalence class; quotaVersion counts
	// the cycle's admissions (equivalence.go).
	quotaMemo    map[string]quotaAnswer
	quotaVersion int
	// outcomes are rejections shared by an equivalence class this cycle; personal is
	// set while a workload's way took a step that depends on the workload itself.
	outcomes   map[outcomeKey]classOutcome
	personal   bool
	freeGPU    resources.MilliGPU // free GPU on the overlay, an upper bound (gate.go)
	quotaHolds cycleHolds         // Kueue's in-cycle quota holds (holds.go)
	stir       stirState          // the stirred workloads' part (stirred.go)
}

// Cycle runs one scheduling cycle and returns its plan. It never fails: every workload it
// does not admit gets a Rejection or a Reservation saying why.
func (e *Engine) Cycle(in Input) plan.Plan {
	c := &cycle{
		e: e, in: in,
		ov:            in.Cluster.OverlayWith(&e.spares),
		out:           plan.Plan{Cycle: in.Cycle, At: in.Now, Rejections: e.rejections(len(in.Pending))},
		noticed:       map[api.WorkloadID]bool{},
		waiting:       map[api.WorkloadID]bool{},
		reservedNodes: map[string]time.Time{},
		blocked:       map[string]bool{},
		history:       append([]placement.PreemptionRecord(nil), in.History...),
		failed:        map[string][]failure{},
		shapes:        map[api.WorkloadID]string{},
		quotaMemo:     map[string]quotaAnswer{},
		outcomes:      map[outcomeKey]classOutcome{},
	}
	c.drain()
	c.countFreeGPU()
	k := newKeyer(in.Quota, in.Nominated, in.Pending, followerQueues(in.Followers))
	if e.cfg.HeadOrder == HeadOrderKueue {
		k.ranks = c.headRanks() // order_rank.go: ranked before the cycle admits anything
	}
	c.visits = newVisits(in.Pending, k)
	if c.kueueCycle() {
		c.placeHolds() // holds.go
	}
	c.visits.later = e.laterBuf
	c.visits.seekers = c.newSeekerClasses(in.SlotSeekers)
	e.gateBuf = c.visits.gate(in.QuotaSeekers, c.quotaSeekerPass(), e.gateBuf)
	e.stirBuf = c.visits.gate(in.Stirred, c.stirPass(), e.stirBuf)
	c.pos = c.visits.pos
	for i := 0; ; i++ {
		p, ok := c.visits.pop()
		if !ok {
			break
		}
		c.noFit = false
		switch {
		case e.cfg.MaxAttempts > 0 && i >= e.cfg.MaxAttempts:
			c.reject(p, plan.LayerAdmission, plan.ReasonNotTried, &plan.Evidence{MaxAttempts: e.cfg.MaxAttempts})
			continue
		case c.blocked[p.ClusterQueue]:
			c.reject(p, plan.LayerAdmission, plan.ReasonBlockedByHead, nil)
			continue
		case c.heldFor(p):
			c.reject(p, plan.LayerAdmission, plan.ReasonHeldForPreemptor, &plan.Evidence{PreemptedBy: c.in.PreemptedBy[p.id()]})
			if p.Strategy == api.StrictFIFO {
				c.blocked[p.ClusterQueue] = true
			}
		default:
			if !c.attempt(p) && p.Strategy == api.StrictFIFO {
				c.blocked[p.ClusterQueue] = true
			}
		}
		c.follow(p)
	}
	e.laterBuf = c.visits.later.emptied()
	c.ov.Recycle() // the plan holds nothing of the overlay's own
	return c.out
}

// reject records why p is not admitted; ev (nil where the reason says it all) may be
// shared with other rejections and is not changed afterwards.
func (c *cycle) reject(p Pending, layer plan.Layer, reason plan.Reason, ev *plan.Evidence) {
	if reason == plan.ReasonWaitingForPreemption {
		c.waiting[p.id()] = true
	}
	c.out.Rejections = append(c.out.Rejections, plan.Rejection{
		Workload: p.id(), ClusterQueue: p.ClusterQueue, Layer: layer,
		Reason: reason, Evidence: ev, Position: c.pos[p.Workload],
	})
}

// notice gives victims a preemption notice on behalf of preemptor. A victim with a
// placement notice gets its eviction time and reason; the others get Config.Grace.
func (c *cycle) notice(victims []api.WorkloadID, preemptor api.WorkloadID, layer plan.Layer, why string, from []placement.Notice) {
	byID := make(map[api.WorkloadID]placement.Notice, len(from))
	for _, n := range from {
		byID[n.Workload] = n
	}
	for _, v := range victims {
		c.noticed[v] = true
		n := plan.Notice{Workload: v, By: preemptor, Layer: layer, Reason: why, Grace: c.e.cfg.Grace,
			EvictAt: c.in.Now.Add(c.e.cfg.Grace)}
		if pn, ok := byID[v]; ok {
			n.Grace, n.EvictAt = pn.EvictAt.Sub(c.in.Now), pn.EvictAt
			if pn.Reason != "" {
				n.Reason = pn.Reason
			}
		}
		c.out.Notices = append(c.out.Notices, n)
	}
}

// recordPreemptions appends this cycle's preemptions to the history later preemptors
// of the cycle see, so two preemptors cannot both spend one disruption budget. Records
// from placement are used as given; other victims are recorded from the running list.
func (c *cycle) recordPreemptions(victims []api.WorkloadID, recs []placement.PreemptionRecord) {
	have := make(map[api.WorkloadID]bool, len(recs))
	for _, r := range recs {
		have[r.Workload] = true
		c.history = append(c.history, r)
	}
	for _, v := range victims {
		if r, ok := c.runningOf(v); ok && !have[v] {
			c.history = append(c.history, placement.PreemptionRecord{Workload: v, Queue: r.Queue, At: c.in.Now, GPUMilli: r.GPUMilli})
		}
	}
}

// unavailable reports whether v cannot be (re)chosen as a victim of preemptor: it is
// leaving already, it preempted preemptor, or preemptor preempted it before since it
// last started (Nominated): a pending workload preempts each other workload at most
// once, so its preemptions are bounded by the number of workloads.
func (c *cycle) unavailable(v, preemptor api.WorkloadID) bool {
	return c.noticed[v] || c.in.InFlight[v] || c.in.PreemptedBy[preemptor] == v || c.preemptedBefore(preemptor, v)
}

// preemptedBefore reports whether preemptor gave v a notice since preemptor last
// started and v is running again (not leaving).
func (c *cycle) preemptedBefore(preemptor, v api.WorkloadID) bool {
	if c.noticed[v] || c.in.InFlight[v] {
		return false
	}
	for _, n := range c.in.Nominated[preemptor] {
		if n == v {
			return true
		}
	}
	return false
}

// heldFor reports whether p's last preemptor was tried earlier in this cycle and still
// waits for victims: p is not admitted now, so the room it gave up stays free for the
// preemptor (otherwise the preemptor would preempt it again, or another of its victims,
// and the two would take turns without end).
func (c *cycle) heldFor(p Pending) bool {
	by, ok := c.in.PreemptedBy[p.id()]
	return ok && c.waiting[by]
}

// waitingForVictims reports whether the preemptor still waits for noticed victims.
func (c *cycle) waitingForVictims(id api.WorkloadID) bool {
	for _, v := range c.in.Nominated[id] {
		if c.in.InFlight[v] {
			return true
		}
	}
	return false
}

// eligibleRunning is the running gangs placement may choose victims from.
func (c *cycle) eligibleRunning(preemptor api.WorkloadID) []placement.Running {
	out := make([]placement.Running, 0, len(c.in.Running))
	for i := range c.in.Running {
		if !c.unavailable(c.in.Running[i].ID, preemptor) {
			out = append(out, c.in.Running[i])
		}
	}
	return out
}

// sortedIDs returns ids sorted, for deterministic plans.
func sortedIDs(ids []api.WorkloadID) []api.WorkloadID {
	out := append([]api.WorkloadID(nil), ids...)
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// drain evicts the running workloads whose ClusterQueue or LocalQueue has stop policy
// HoldAndDrain (by ID: the plan does not depend on the running list's order).
func (c *cycle) drain() {
	if len(c.in.Draining) == 0 {
		return
	}
	for i := range c.in.Running {
		id := c.in.Running[i].ID
		if why, ok := c.in.Draining[id]; ok && !c.in.InFlight[id] {
			c.noticed[id] = true
			c.out.Evictions = append(c.out.Evictions, plan.Eviction{Workload: id, Layer: plan.LayerAdmission, Reason: why})
		}
	}
	sort.Slice(c.out.Evictions, func(i, j int) bool { return c.out.Evictions[i].Workload < c.out.Evictions[j].Workload })
}

// runningOf finds a running workload by ID. Only preemption asks, so the index is built
// on first use rather than every cycle (a cycle over thousands of running gangs that
// preempts nothing pays nothing).
func (c *cycle) runningOf(id api.WorkloadID) (placement.Running, bool) {
	if c.runningIdx == nil {
		c.runningIdx = make(map[api.WorkloadID]int, len(c.in.Running))
		for i := range c.in.Running {
			c.runningIdx[c.in.Running[i].ID] = i
		}
	}
	i, ok := c.runningIdx[id]
	if !ok {
		return placement.Running{}, false
	}
	return c.in.Running[i], true
}
