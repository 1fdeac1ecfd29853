package engine

import (
	"fmt"
	"math/rand"
	"time"

	"github.com/gantry-sched/gantry/pkg/admission"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/placement"
	"github.com/gantry-sched/gantry/pkg/plan"
)

// Scheduler is the engine with the scheduler state both drivers keep between cycles:
// every workload's queue, where it stands (pending, parked as inadmissible and why,
// running, leaving), its reservation, the victims it waits for and the preemption
// history. The simulator and the controller differ only in where the events that
// update it come from and where its plans go.
//
// Drivers report what happened (Submit, Started, Noticed, Requeued, Finished,
// NodesChanged, QueuesChanged) and ask for a plan (Cycle); after committing it they
// hand it back (Committed) so rejections park and reservations are remembered. A
// parked workload is not handed to a cycle until something that could change its
// answer happens (requeue.go).
type Scheduler struct {
	eng      *Engine
	resolver *admission.Resolver
	flavors  map[string]api.ResourceFlavor
	roots    map[string]string // ClusterQueue -> its cohort tree's root
	wls      map[api.WorkloadID]*entry
	// active are the pending workloads the next cycle tries (not parked); running and
	// leaving the admitted ones; each kept as events move workloads, so a cycle walks
	// what it uses, not every workload known.
	active, running, leaving *entrySet
	// protected are the running workloads with a minimum runtime (timedWakes).
	protected *entrySet
	// nominated maps a preemptor to the victims noticed for it since it last started;
	// preemptedBy a victim to the workload that last preempted it. Handed to the
	// engine as they are (Input.Nominated, Input.PreemptedBy).
	nominated   map[api.WorkloadID][]api.WorkloadID
	preemptedBy map[api.WorkloadID]api.WorkloadID
	history     []placement.PreemptionRecord // in time order, pruned past maxWindow
	// maxWindow is the longest disruption-budget window of any ClusterQueue;
	// keepHistory is set when a budget has no window (all history counts).
	maxWindow   time.Duration
	keepHistory bool
	// lastCycleAt is when the last cycle ran (time-based wakes look at the span since).
	lastCycleAt time.Time
	cycled      bool
	cycles      int64
	considered  int64 // pending workloads handed to cycles (what parking saves)
	retryAll    bool
	// Kueue's cycle's queue heads (holds.go): the pending workloads of each
	// ClusterQueue, its head, the queues whose head must be found again, and the last
	// cycle's claims (usage and hold) of the holding queues.
	pendingByCQ map[string]map[*entry]struct{}
	headOf      map[string]*entry
	headsDirty  map[string]bool
	lastClaims  map[string][]admission.FlavorAmount
	holds       []admission.Assignment // this cycle's (Input.HeadHolds)
	holdMemo    map[string]headHold    // each holding queue's head's hold as last computed (keptHolds)
	// freed is set when a workload left since the last cycle: the capacity wake it
	// causes runs at the next cycle, against the cluster as it is then.
	// flavorChoices is set when some ClusterQueue chooses among several flavors, and
	// nodePreemptors when some workload may preempt on the nodes: the wakes that look
	// for them have work only then.
	flavorChoices, nodePreemptors bool
	freed                         bool
	freedRoots                    map[string]bool // cohort trees where quota was freed since the last cycle
	// chains are the parked members of followable classes behind a woken first member,
	// for this cycle's Followers (chains.go).
	chains map[string]chain
	// chainsSpare is a large chains table emptied at a cycle's start, for the next
	// wake of many classes (making one per such wake was most of a wake's cost).
	chainsSpare map[string]chain
	// quotaSeekers are the quota-parked workloads a wake found for the next cycle, and
	// seeking those handed to the last cycle (quota_seekers.go).
	quotaSeekers, seeking []*entry
	seekerBuf             []Pending // the cycles' scratch for Input.QuotaSeekers
	stirBuf               []Pending // and for Input.Stirred
	// wakeBuf and quotaFits are wakeQuotaParked's scratch.
	wakeBuf   []*entry
	quotaFits classMemo
	// rejected is Committed's scratch: the entry of each of the plan's rejections (nil
	// when unknown), looked up once for the passes that park and refile them.
	rejected []*entry
	rng      *rand.Rand
	seed     int64 // the policy's seed, for per-workload tie-breaks (tiebreak.go)
	parked   parkedIndex
	// quotaClasses numbers the quota classes of the workloads submitted, and
	// shortChecks holds admission's compiled Short question by class number.
	quotaClasses map[quotaClass]int32
	shortChecks  []*admission.ShortCheck
	// queueFacts are the entries' shared ClusterQueue facts, by queue (queueFactsOf).
	queueFacts map[*api.ClusterQueue]*queueFacts
	// interned are the values workloads of one shape share (intern.go).
	interned internTables
	// seekers are the slot seekers by class, and seekIters the cycle's walks over
	// them (reserve_seekers.go).
	seekers   map[string]*seekerSet
	seekIters map[string]*seekIter
	// classBuf is the cycles' scratch for Input.SlotSeekers (the cycle copies what it
	// keeps of it).
	classBuf []SeekerClass
	// byEnd is the cycles' scratch for the running list in walk order.
	byEnd placement.RunningByEnd
	// pendingBuf is the last cycle's pending list, memory for the next one (a cycle
	// copies what it keeps of it).
	pendingBuf []Pending
	// lqUsage is admission fair sharing's record; nil when no ClusterQueue enables it.
	lqUsage *admission.LocalQueueUsage
	// reservedBefore are the reservations held when the last cycle ran: Committed
	// compares them with the new ones (a reservation given up or moved frees GPUs).
	reservedBefore map[api.WorkloadID]plan.Reservation
	// census counts the live workloads' pod shapes and the nodes' GPUs; shapes is the
	// fragmentation scorer's statistics, rebuilt from it before a cycle when it changed
	// (syncShapes). liveDefault is set when queues without a placement policy of their
	// own get placement's default for the live shapes.
	census      *placement.ShapeCensus
	shapes      *placement.ShapeStats
	liveDefault bool
}

// phase is where a workload stands in the scheduler's eyes.
type phase uint8

const (
	phasePending phase = iota
	phaseRunning
	phaseLeaving // noticed, not evicted yet
	phaseGone    // finished or deleted
)

// setPhase moves e to phase p, keeping the active, running and leaving sets.
func (s *Scheduler) setPhase(e *entry, p phase) {
	e.phase = p
	s.trackHead(e, p)
	if s.isSeeker(e) {
		leave(e, slotPhase)
		leave(e, slotProtected)
		s.joinSeekers(e)
		return
	}
	leave(e, slotSeek)
	switch {
	case p == phasePending && (e.park == NotParked || e.park == ParkedReserved || s.retryAll):
		s.active.join(e, slotPhase)
	case p == phaseRunning:
		s.running.join(e, slotPhase)
		if e.w.MinRuntime > 0 {
			s.protected.join(e, slotProtected)
			return
		}
	case p == phaseLeaving:
		s.leaving.join(e, slotPhase)
	default:
		leave(e, slotPhase)
	}
	leave(e, slotProtected)
}

// queue records when e (re-)entered its queue.
func (e *entry) queue(at time.Time) { e.queuedAt, e.queuedNano = at, at.UnixNano() }

// entry is the scheduler's record of one workload.
type entry struct {
	w     *api.Workload
	id    api.WorkloadID // w.ID(), kept: every index is keyed by it
	shape string         // ShapeKey(w), computed once
	// gpu is its GPU demand, for the necessary conditions of capacity wakes and slot
	// seekers (capacity_wake.go, reserve_held.go).
	gpu   *gpuDemand
	class string // ClassKey of its ClusterQueue, shape and priority, computed once
	// cq is what its ClusterQueue decides for it, shared by the queue's entries
	// (never nil; resolved once: wakes read it for every parked workload).
	cq *queueFacts
	// quotaClass numbers its ClusterQueue and shape (quotaClassOf).
	quotaClass int32
	phase      phase
	// nodePreempts: the cycle may look for victims on the nodes for it (its queue's
	// policy, resolved once: wakes read it for every node-parked workload).
	nodePreempts bool
	// seeking: handed to the running cycle as a quota seeker and not visited yet.
	seeking bool
	// quotaAlone: one pod set, resolved to a ClusterQueue that does not preempt (the
	// part of the quota wake's and the followers' tests fixed at submission, kept so
	// that they read the entry alone, not its workload and queue).
	quotaAlone bool
	hasLast    bool // last holds a rejection
	res        admission.Resolution
	root       string // its ClusterQueue's cohort root (rootOf)
	// queuedNano and createdNano are queuedAt and the workload's creation time as
	// numbers, for the class order (classBefore), which heaps compare often.
	queuedNano, createdNano int64
	queuedAt                time.Time
	runtime                 time.Duration // expected run time; 0 = unknown
	// startedAt is when the current run started (minimum-runtime protection).
	startedAt time.Time
	// notBefore is when its requeue backoff ends (ParkedBackoff).
	notBefore time.Time
	park      Park
	last      plan.Rejection // why it was last not admitted, while hasLast
	reserved  *plan.Reservation
	slots     entrySlots // its places in the scheduler's sets (entryset.go)
}

// queueFacts is what an entry's ClusterQueue decides for it, one value per queue. It is
// kept out of the entry because the scheduler holds an entry per pending workload and
// the garbage collector scans each of them: an entry of at most 512 bytes with few
// pointers is scanned span by span, a larger one object by object.
type queueFacts struct {
	strategy api.QueueingStrategy
	policy   api.Preemption
	// preempts is preempts(policy), read for every parked workload a wake visits.
	preempts bool
	// flavorChoice: the queue has a resource group of several flavors, so the flavors
	// admission assigns move with usage (requeue.go wakeFlavorChoices).
	flavorChoice bool
}

// queueFactsOf returns the shared facts of ClusterQueue name (zero facts, kept under
// nil, when it does not resolve).
func (s *Scheduler) queueFactsOf(name string) *queueFacts {
	cq, _ := s.resolver.ClusterQueue(name)
	f, ok := s.queueFacts[cq]
	if !ok {
		f = &queueFacts{}
		if cq != nil {
			f = &queueFacts{strategy: cq.QueueingStrategy, policy: cq.Preemption, flavorChoice: severalFlavors(*cq)}
		}
		f.preempts = preempts(f.policy)
		s.queueFacts[cq] = f
	}
	return f
}

// World is what a driver knows that the scheduler does not keep itself: the cluster as
// bound now, the admitted quota usage, and the running workloads as placement sees
// them (their checkpoints and expected ends move with time).
type World struct {
	Now     time.Time
	Cluster *cluster.Snapshot
	// Quota is the authoritative admitted usage; the cycle works on a clone.
	Quota   *admission.Quota
	Running []placement.Running
	// RunningEdits is the driver's account of the positions of Running it wrote since
	// a cycle last took it (nil: the driver keeps none, and a cycle that plans
	// reservations reads the whole list).
	RunningEdits *placement.RunningEdits
	// InFlight are workloads leaving that the scheduler did not notice itself (an
	// evicted workload whose pods are still terminating on a cluster).
	InFlight []api.WorkloadID
	// Checks runs Kueue's admission checks (checks.go); nil when no queue has any.
	Checks AdmissionChecks
	// Unchanged says the driver knows nothing changed since the last cycle (a resync
	// pass): workloads parked behind reservations stay parked, so such a cycle tries
	// only what events woke.
	Unchanged bool
}

// Submit adds a workload to its queue at the given time; runtime is its expected run
// time (0 = unknown), used by backfill.
func (s *Scheduler) Submit(w *api.Workload, at time.Time, runtime time.Duration) error {
	if w == nil {
		return fmt.Errorf("engine: submit: nil workload")
	}
	id := w.ID()
	if _, dup := s.wls[id]; dup {
		return fmt.Errorf("engine: submit: workload %s is known already", id)
	}
	shared := s.interned.shapeOf(w)
	e := &entry{w: w, id: id, shape: shared.shape, gpu: shared.gpu, res: s.resolver.Resolve(w), runtime: runtime,
		createdNano: w.Created.UnixNano()}
	e.queue(at)
	e.root = s.rootOf(e.res.ClusterQueue)
	e.class = s.interned.classOf(e.res.ClusterQueue, e.shape, w.Priority)
	e.quotaClass = s.quotaClassOf(e)
	e.cq = s.queueFactsOf(e.res.ClusterQueue)
	e.nodePreempts = s.preemptsOnNodes(e)
	e.quotaAlone = len(w.PodSets) == 1 && !e.cq.preempts && e.res.OK()
	s.nodePreemptors = s.nodePreemptors || e.nodePreempts
	s.wls[id] = e
	s.census.Add(w)
	s.setPhase(e, phasePending)
	s.arrived(e)
	return nil
}

func severalFlavors(cq api.ClusterQueue) bool {
	for _, g := range cq.ResourceGroups {
		if len(g.Flavors) > 1 {
			return true
		}
	}
	return false
}

// Resolution is where the workload's queue leads (its ClusterQueue, or why none).
func (s *Scheduler) Resolution(id api.WorkloadID) (admission.Resolution, bool) {
	e, ok := s.wls[id]
	if !ok {
		return admission.Resolution{}, false
	}
	return e.res, true
}

// Started records a committed admission: the workload runs from at. (The wakes a new
// running workload causes happen in Committed, after the plan's rejections park.)
func (s *Scheduler) Started(id api.WorkloadID, at time.Time) {
	e := s.wls[id]
	if e == nil {
		return
	}
	s.setPark(e, NotParked)
	s.setPhase(e, phaseRunning)
	e.startedAt = at
	e.hasLast, e.reserved = false, nil
	delete(s.nominated, id)
}

// Noticed records a preemption notice the driver applied: victim leaves for preemptor.
func (s *Scheduler) Noticed(victim, preemptor api.WorkloadID, rec placement.PreemptionRecord) {
	v := s.wls[victim]
	if v == nil || v.phase != phaseRunning {
		return
	}
	s.setPhase(v, phaseLeaving)
	s.preemptedBy[victim] = preemptor
	if s.wls[preemptor] != nil {
		s.nominated[preemptor] = append(s.nominated[preemptor], victim)
	}
	s.history = append(s.history, rec)
}

// Requeued records that a running or leaving workload was evicted and queues again from
// at with the given remaining runtime; what it held is free.
func (s *Scheduler) Requeued(id api.WorkloadID, at time.Time, runtime time.Duration) {
	e := s.wls[id]
	if e == nil {
		return
	}
	s.setPark(e, NotParked)
	s.setPhase(e, phasePending)
	e.queue(at)
	e.runtime = runtime
	s.capacityFreed(e.res.ClusterQueue)
}

// Finished forgets a workload that completed or was deleted; what it held is free.
func (s *Scheduler) Finished(id api.WorkloadID) {
	e := s.wls[id]
	if e == nil {
		return
	}
	s.setPark(e, NotParked)
	s.setPhase(e, phaseGone)
	s.census.Remove(e.w)
	delete(s.wls, id)
	delete(s.nominated, id)
	delete(s.preemptedBy, id)
	s.capacityFreed(e.res.ClusterQueue)
}

// NodesChanged wakes what capacity returning can help: nodes were added or came back.
func (s *Scheduler) NodesChanged() { s.wakeForNodes() }

// QuotaChanged wakes every parked workload: a ClusterQueue's quota changed.
func (s *Scheduler) QuotaChanged() { s.wakeAll() }

// Reservation is the workload's current reservation, if it holds one.
func (s *Scheduler) Reservation(id api.WorkloadID) (plan.Reservation, bool) {
	if e := s.wls[id]; e != nil && e.reserved != nil {
		return *e.reserved, true
	}
	return plan.Reservation{}, false
}

// LastRejection is why the workload was last not admitted, while it is pending.
func (s *Scheduler) LastRejection(id api.WorkloadID) (plan.Rejection, bool) {
	if e := s.wls[id]; e != nil && e.hasLast && e.phase == phasePending {
		return e.last, true
	}
	return plan.Rejection{}, false
}

// Nominated are the victims the workload waits for (noticed since it last started).
func (s *Scheduler) Nominated(id api.WorkloadID) []api.WorkloadID {
	return s.nominated[id]
}

// Parked says why a pending workload is parked as inadmissible (NotParked when it is
// tried in the next cycle); Park.String says what change retries it.
func (s *Scheduler) Parked(id api.WorkloadID) Park {
	if e := s.wls[id]; e != nil && e.phase == phasePending {
		return e.park
	}
	return NotParked
}

// Resolve says where w's queue leads without submitting it.
func (s *Scheduler) Resolve(w *api.Workload) admission.Resolution { return s.resolver.Resolve(w) }

// RootOf is the root of ClusterQueue cq's cohort tree: quota freed anywhere in a tree
// can be borrowed anywhere in it.
func (s *Scheduler) RootOf(cq string) string { return s.rootOf(cq) }

// Recycle gives the scheduler back the memory of a plan the driver is done with: call it
// once p has been committed and nothing of it is needed any more (Engine.Recycle).
func (s *Scheduler) Recycle(p *plan.Plan) { s.eng.Recycle(p) }

// Stats are counters for benchmarks: cycles run and pending workloads handed to them.
func (s *Scheduler) Stats() (cycles, considered int64) { return s.cycles, s.considered }

// Workload returns the workload the scheduler knows by ID (nil when it does not).
func (s *Scheduler) Workload(id api.WorkloadID) *api.Workload {
	if e := s.wls[id]; e != nil {
		return e.w
	}
	return nil
}
