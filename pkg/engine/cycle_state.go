package engine

import (
	"sort"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/placement"
	"github.com/gantry-sched/gantry/pkg/plan"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// Cycle runs one scheduling cycle over the scheduler state and the driver's world. It
// returns a nil-free plan; a cycle with nothing to decide returns an empty plan and
// counts nothing (no polling).
func (s *Scheduler) Cycle(w World) plan.Plan {
	s.syncShapes(w)
	s.timedWakes(w)
	s.backoffsOver(w.Now)
	s.resetChains()
	s.wakeStrictQueues()
	s.holds = s.headHolds(w.Quota, s.nominated) // holds.go: a shrunk claim frees capacity
	if s.freed {
		s.wakeForCapacity(w)
	}
	s.tickLocalQueueUsage(w)
	in, queueRejects := s.input(w)
	if len(in.Pending)+len(in.SlotSeekers)+len(in.QuotaSeekers) == 0 && len(in.Draining) == 0 && len(queueRejects) == 0 {
		return plan.Plan{Cycle: s.cycles, At: w.Now}
	}
	s.cycles++
	s.lastCycleAt, s.cycled = w.Now, true
	s.considered += int64(len(in.Pending))
	in.Cycle = s.cycles
	s.reservedBefore = s.reservedNow()
	p := s.eng.Cycle(in)
	s.pendingBuf = scrub(in.Pending) // the cycle kept nothing of it
	s.seekerBuf = scrub(in.QuotaSeekers)
	s.stirBuf = scrub(in.Stirred)
	clear(in.SlotSeekers)
	s.classBuf = in.SlotSeekers[:0]
	p.Rejections = append(p.Rejections, queueRejects...)
	return p
}

// scrub empties a scratch list of pending workloads for reuse. It zeroes what the
// cycle wrote: a list kept between cycles with stale workloads in it would keep them
// alive, and the garbage collector follows every pointer of the list at each
// collection (100,000 after a first cycle at 10,000 nodes).
func scrub(ps []Pending) []Pending {
	clear(ps)
	return ps[:0]
}

// input is the engine's view of the state now. Workloads whose queue does not resolve
// or is held are not handed to the engine: their rejection is made here (queue layer).
func (s *Scheduler) input(w World) (Input, []plan.Rejection) {
	in := Input{
		Now: w.Now, Rand: s.rng, TieSeed: &s.seed, Cluster: w.Cluster, Running: w.Running, Flavors: s.flavors,
		History: s.history, InFlight: make(map[api.WorkloadID]bool, s.leaving.Len()+len(w.InFlight)),
		Nominated: s.nominated, PreemptedBy: s.preemptedBy, Previous: map[api.WorkloadID]plan.Reservation{},
		RunningScratch: &s.byEnd, RunningEdits: w.RunningEdits, Checks: w.Checks,
	}
	in.Quota = NewAdmissionQuota(w.Quota.Clone(), protectedBy(w))
	for _, id := range w.InFlight {
		in.InFlight[id] = true
	}
	for _, e := range s.leaving.entries() {
		in.InFlight[e.id] = true
	}
	in.Draining = s.draining()
	in.HeadHolds = s.holds
	in.Pending = s.pendingBuf[:0]
	var rejects []plan.Rejection
	for _, e := range s.active.entries() {
		id := e.id
		if e.park == ParkedReserved && w.Unchanged {
			continue // refused behind reservations and nothing changed since
		}
		if r, blocked := s.queueBlock(e); blocked {
			rejects = append(rejects, r)
			continue
		}
		in.Pending = append(in.Pending, s.pendingOf(e))
		if e.reserved != nil {
			in.Previous[id] = *e.reserved
		}
	}
	in.QuotaSeekers = s.quotaSeekersInput(w.Quota)
	in.SlotSeekers = s.seekerClasses(w)
	if len(in.Pending)+len(in.QuotaSeekers)+len(in.SlotSeekers) > 0 {
		in.Stirred, in.Trees = s.stirredInput(&in), s.roots
	}
	if len(s.chains) > 0 || len(in.QuotaSeekers) > 0 || len(in.SlotSeekers) > 0 || len(in.Stirred) > 0 {
		in.Followers = s
	}
	// The engine orders Pending itself; rejections made here keep a fixed order.
	sort.Slice(rejects, func(i, j int) bool { return rejects[i].Workload < rejects[j].Workload })
	return in, rejects
}

// pendingOf is e as a cycle takes it.
func (s *Scheduler) pendingOf(e *entry) Pending {
	return Pending{Workload: e.w, ID: e.id, ClusterQueue: e.res.ClusterQueue, Strategy: e.cq.strategy,
		QueuedAt: e.queuedAt, Runtime: e.runtime, Shape: e.shape, Class: e.class, LocalQueueUsage: s.localQueueUsage(e),
		gpu: e.gpu}
}

// draining names the running workloads of ClusterQueues or LocalQueues with stop
// policy HoldAndDrain, with the reason (nil when no queue drains).
func (s *Scheduler) draining() map[api.WorkloadID]string {
	if !s.resolver.AnyDraining() {
		return nil
	}
	var out map[api.WorkloadID]string
	for _, e := range s.running.entries() {
		id := e.id
		if why, ok := s.resolver.Draining(e.res.ClusterQueue, e.res.LocalQueue); ok {
			if out == nil {
				out = map[api.WorkloadID]string{}
			}
			out[id] = why
		}
	}
	return out
}

// queueBlock is the rejection of a pending workload that its queues stop before quota
// is asked: no usable ClusterQueue, or a stop policy holding its queue.
func (s *Scheduler) queueBlock(e *entry) (plan.Rejection, bool) {
	r := plan.Rejection{Workload: e.id, ClusterQueue: e.res.ClusterQueue, Layer: plan.LayerAdmission}
	if !e.res.OK() {
		r.Reason, r.Evidence = plan.AdmissionReason(e.res.Code), &plan.Evidence{Message: e.res.Message}
		return r, true
	}
	if why, held := s.resolver.Held(e.res.ClusterQueue, e.res.LocalQueue); held {
		r.Reason, r.Evidence = plan.ReasonQueueHeld, &plan.Evidence{Message: why}
		return r, true
	}
	return r, false
}

// protectedBy names the running workloads admission must not choose as victims: those
// within their minimum runtime. The running list is read on the first question only:
// most cycles search no victims, and reading ten thousand running workloads each cycle
// was 2 % of a fleet-size simulation. w.Running must not change during the cycle.
func protectedBy(w World) func(api.WorkloadID) bool {
	var prot map[api.WorkloadID]bool
	read := false
	return func(id api.WorkloadID) bool {
		if !read {
			prot, read = minRuntimeProtected(w), true
		}
		return prot[id]
	}
}

// minRuntimeProtected is the running workloads within their minimum runtime at w.Now.
func minRuntimeProtected(w World) map[api.WorkloadID]bool {
	var prot map[api.WorkloadID]bool
	for i := range w.Running { // by index: a Running is a few hundred bytes
		r := &w.Running[i]
		if r.MinRuntime > 0 && !r.StartedAt.IsZero() && w.Now.Sub(r.StartedAt) < r.MinRuntime {
			if prot == nil {
				prot = map[api.WorkloadID]bool{}
			}
			prot[r.ID] = true
		}
	}
	return prot
}

// Committed takes back a plan the driver committed (applied: the admissions that
// went through): rejections park until a relevant change, reservations are kept for the
// next cycle (so an ETA cannot slip), and new running workloads wake what may preempt
// them. It reports whether the driver should run another cycle now, without waiting
// for an event: the attempt cap (Config.MaxAttempts) left workloads untried.
func (s *Scheduler) Committed(p plan.Plan, applied []api.WorkloadID) (again bool) {
	before := s.reservedBefore
	s.reservedBefore = nil
	for _, r := range p.Reservations {
		if e := s.wls[r.Workload]; e != nil {
			rr := r
			e.reserved, e.hasLast = &rr, false
		}
	}
	rejected := s.rejected[:0]
	for _, r := range p.Rejections {
		e := s.wls[r.Workload]
		if e != nil {
			e.last, e.hasLast, e.reserved = r, true, nil
		}
		rejected = append(rejected, e)
	}
	s.park(p, rejected)
	s.refileSeekers(p, rejected)
	clear(rejected) // scratch kept between cycles holds no entries alive
	s.rejected = rejected[:0]
	for id, b := range before {
		if e := s.wls[id]; e == nil || e.reserved == nil || !b.HoldsSame(*e.reserved) {
			s.wakeForNodes()
			break
		}
	}
	var started []*entry
	byWorkload := p.BindingsByWorkload()
	for _, id := range applied {
		if e := s.wls[id]; e != nil {
			started = append(started, e)
			s.chargeAdmission(e, byWorkload[id])
		}
	}
	s.admittedWakes(started...)
	for _, r := range p.Rejections {
		if r.Reason == plan.ReasonNotTried {
			return true
		}
	}
	return false
}

// reservedNow is the reservations pending workloads hold, by workload (a rejection
// drops a reservation, so only active workloads hold one).
func (s *Scheduler) reservedNow() map[api.WorkloadID]plan.Reservation {
	out := map[api.WorkloadID]plan.Reservation{}
	for _, e := range s.active.entries() {
		id := e.id
		if e.reserved != nil {
			out[id] = *e.reserved
		}
	}
	return out
}

// History is the preemptions so far, for disruption budgets and reports.
func (s *Scheduler) History() []placement.PreemptionRecord { return s.history }

// tickLocalQueueUsage advances admission fair sharing to the world's time: usage decays
// and grows by what the running workloads hold.
func (s *Scheduler) tickLocalQueueUsage(w World) {
	if s.lqUsage == nil {
		return
	}
	s.lqUsage.Tick(w.Now, func(add func(string, resources.MilliGPU)) {
		for i := range w.Running {
			r := &w.Running[i]
			if e := s.wls[r.ID]; e != nil {
				add(e.res.LocalQueue, r.GPUMilli)
			}
		}
	})
}

// localQueueUsage is e's LocalQueue's weighted usage where its ClusterQueue enables
// admission fair sharing, else 0.
func (s *Scheduler) localQueueUsage(e *entry) int64 {
	if s.lqUsage == nil || !s.lqUsage.Enabled(e.res.ClusterQueue) {
		return 0
	}
	return s.lqUsage.Weighted(e.res.LocalQueue)
}

// chargeAdmission charges a committed admission's entry penalty to its LocalQueue.
func (s *Scheduler) chargeAdmission(e *entry, bs []plan.Binding) {
	if s.lqUsage == nil {
		return
	}
	var milli resources.MilliGPU
	for _, b := range bs {
		milli += b.Assignment.MilliGPU()
	}
	s.lqUsage.Admitted(e.res.ClusterQueue, e.res.LocalQueue, milli)
}
