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
	"github.com/gantry-sched/gantry/pkg/resources"
)

// Config is the engine's policy. The zero value admits and places but never preempts or
// reserves.
type Config struct {
	// Preemption lets the cycle give preemption notices: admission victims when quota
	// needs them, placement victims when nodes do.
	Preemption bool
	// Reservations lets a workload that fits quota but not the cluster reserve the
	// capacity running gangs will free; later workloads may only use reserved nodes if
	// they end before the reservation's ETA (backfill).
	Reservations bool
	// ReservationDepth is how many blocked workloads per cycle get a reservation (the
	// highest ordered ones, as Slurm's backfill tests only the first jobs); 0 means 8.
	ReservationDepth int
	// Grace is the notice a preempted workload gets to checkpoint before eviction.
	Grace time.Duration
	// MaxAttempts bounds the pending workloads tried per cycle (0 = all); the others are
	// reported with reason plan.ReasonNotTried.
	MaxAttempts int
	// Requeue is how workloads evicted by failures queue again (backoff.go).
	Requeue RequeuePolicy
	// HeadOrder is how a cycle orders the workloads it tries (order.go): by priority
	// (HeadOrderPriority, the default), or first by where their quota comes from, as
	// Kueue orders its heads (HeadOrderKueue, order_rank.go), which also brings Kueue's
	// in-cycle quota holds (holds.go).
	HeadOrder HeadOrder
}

// HeadOrder names a cycle's order of visits.
type HeadOrder string

const (
	// HeadOrderPriority: preemptors with noticed victims, then priority, ClusterQueue
	// share, LocalQueue usage and queue time ("" means this).
	HeadOrderPriority HeadOrder = "priority"
	// HeadOrderKueue: Kueue's cycle. As HeadOrderPriority, but before priority Kueue's
	// head rank: the borrowing level of the workload's flavor assignment as the cycle
	// starts, or under fair sharing its standings from the root cohort down; and the
	// quota Kueue holds in a cycle for preemptors and for queue heads that cannot
	// reclaim (holds.go).
	HeadOrderKueue HeadOrder = "kueue"
)

// Validate reports a configuration the engine cannot run with.
func (c Config) Validate() error {
	if c.Grace < 0 {
		return fmt.Errorf("engine config: grace %s: must not be negative", c.Grace)
	}
	if c.ReservationDepth < 0 {
		return fmt.Errorf("engine config: reservationDepth %d: must not be negative", c.ReservationDepth)
	}
	if c.MaxAttempts < 0 {
		return fmt.Errorf("engine config: maxAttempts %d: must not be negative", c.MaxAttempts)
	}
	if err := c.Requeue.Validate(); err != nil {
		return fmt.Errorf("engine config: %w", err)
	}
	switch c.HeadOrder {
	case "", HeadOrderPriority, HeadOrderKueue:
	default:
		return fmt.Errorf("engine config: headOrder %q: want %q or %q", c.HeadOrder, HeadOrderPriority, HeadOrderKueue)
	}
	return nil
}

func (c Config) reservationDepth() int {
	if c.ReservationDepth <= 0 {
		return 8
	}
	return c.ReservationDepth
}

// Engine runs scheduling cycles. It holds no state between cycles besides its
// configuration and the two layers, so it is safe to reuse.
type Engine struct {
	cfg    Config
	placer Placer
	// gateBuf is the last cycle's gated heap, reused by the next (an engine runs one
	// cycle at a time: its placer's fit cache already requires that).
	gateBuf keyedHeap
	// stirBuf is the same for the stirred workloads' gated heap (stirred.go).
	stirBuf keyedHeap
	// classItems and classHeap are the last cycle's slot-seeker classes, memory for the
	// next one (reserve_seekers.go).
	classItems []classItem
	classHeap  classHeap
	// gpuScratch is the free-GPU views' node set (capacity_wake.go), one per engine.
	gpuScratch cluster.NodeSet
	// laterBuf is the last cycle's heap of visits handed in by Followers, emptied: a
	// fleet-size simulation grew it from nothing every cycle.
	laterBuf keyedHeap
	// spares is the memory of the last cycle's overlay, for the next one.
	spares cluster.Spares
	// rejectBuf is a plan's rejection list its driver gave back (Recycle), for the
	// next cycle's: a fleet-size simulation grew one from little every cycle, a tenth
	// of all it allocated.
	rejectBuf []plan.Rejection
}

// Recycle gives the engine back the memory of a plan its driver is done with (nothing
// of p is read or kept after): the next cycle reuses its rejection list. p is left
// without rejections.
func (e *Engine) Recycle(p *plan.Plan) {
	if cap(p.Rejections) > cap(e.rejectBuf) {
		clear(p.Rejections) // its evidence and IDs are not kept alive by the buffer
		e.rejectBuf = p.Rejections[:0]
	}
	p.Rejections = nil
}

// rejections is the list a cycle over n pending workloads starts with.
func (e *Engine) rejections(n int) []plan.Rejection {
	buf := e.rejectBuf
	e.rejectBuf = nil // the plan owns it now
	if cap(buf) < n {
		return make([]plan.Rejection, 0, n)
	}
	return buf[:0]
}

// New returns an engine; placer must not be nil.
func New(cfg Config, placer Placer) (*Engine, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if placer == nil {
		return nil, fmt.Errorf("engine: placer must not be nil")
	}
	return &Engine{cfg: cfg, placer: placer}, nil
}

// Config returns the engine's configuration.
func (e *Engine) Config() Config { return e.cfg }

// Pending is a workload waiting in a queue.
type Pending struct {
	Workload *api.Workload
	// ID is Workload.ID() when the caller keeps it (the scheduler does); empty means the
	// cycle computes it each time it needs it.
	ID           api.WorkloadID
	ClusterQueue string // resolved from the LocalQueue; "" when it does not resolve
	Strategy     api.QueueingStrategy
	QueuedAt     time.Time // when it (re-)entered the queue
	// Runtime is the expected run time (known duration or max runtime); 0 = unknown.
	// Backfill only lets workloads with a known runtime use reserved nodes.
	Runtime time.Duration
	// Shape is ShapeKey(Workload), when the caller keeps it (the scheduler computes it
	// once per workload); empty means the cycle computes it.
	Shape string
	// Class is ClassKey(ClusterQueue, Shape, priority) when the caller keeps it; empty
	// means the cycle computes it.
	Class string
	// LocalQueueUsage is its LocalQueue's weighted decayed usage when its ClusterQueue
	// enables admission fair sharing (0 otherwise): within a priority and a queue share,
	// the less used LocalQueue goes first.
	LocalQueueUsage int64
	// gpu is its GPU demand when the scheduler keeps it; nil means computed when needed.
	gpu *gpuDemand
	// short is admission's Short question for its queue and shape, compiled by the
	// scheduler for the quota seekers it hands; nil means compiled when asked.
	short *admission.ShortCheck
}

// SeekerClass is one class of slot seekers (ClusterQueue, shape and priority: members
// the cycle visits in queue order).
type SeekerClass struct {
	Class string
	// First is its first member; Followers.NextSeeker hands the others, in order.
	First Pending
	// MinRuntime bounds its members' known runtimes from below (0: none known); the
	// member with the fewest holds against it has no more than this one would.
	MinRuntime time.Duration
}

// gpuDemand is what a workload asks of GPUs, as the necessary conditions read it: its
// whole-GPU pod needs (nil when they do not apply, capacity_wake.go) and its total in
// milli-GPU (gpuNeed).
type gpuDemand struct {
	needs []podNeed
	milli resources.MilliGPU
}

func demandOf(w *api.Workload) *gpuDemand {
	return &gpuDemand{needs: gpuPodNeeds(w), milli: gpuNeed(w)}
}

// wholeGPUNeeds is p's whole-GPU pod needs, kept or computed.
func (p Pending) wholeGPUNeeds() []podNeed {
	if p.gpu != nil {
		return p.gpu.needs
	}
	return gpuPodNeeds(p.Workload)
}

// gpuMilli is p's GPU need in milli-GPU (gpuNeed), kept or computed.
func (p Pending) gpuMilli() resources.MilliGPU {
	if p.gpu != nil {
		return p.gpu.milli
	}
	return gpuNeed(p.Workload)
}

// id is the workload's ID, kept or computed.
func (p Pending) id() api.WorkloadID {
	if p.ID != "" {
		return p.ID
	}
	return p.Workload.ID()
}

// Input is everything one cycle reads. The cycle changes Quota (its own what-if copy)
// and nothing else.
type Input struct {
	Cycle   int64
	Now     time.Time
	Rand    *rand.Rand // tie-breaking; may be nil when no tie needs it
	Cluster *cluster.Snapshot
	Quota   Quota
	Pending []Pending
	Running []placement.Running
	// InFlight are workloads already given a notice and not evicted yet: never chosen
	// again, and a preemptor waiting for them does not pick more victims.
	InFlight map[api.WorkloadID]bool
	// Nominated maps a preemptor to the victims it noticed since it last started: the
	// ones still leaving are waited for, the ones running again are never preempted by
	// it a second time in the same wait (docs/engine.md, "Why preemption cannot cycle").
	Nominated map[api.WorkloadID][]api.WorkloadID
	// Draining names the running workloads to evict because their ClusterQueue or
	// LocalQueue has stop policy HoldAndDrain, with the reason.
	Draining map[api.WorkloadID]string
	// History is the past preemptions, for disruption budgets.
	History []placement.PreemptionRecord
	// Flavors are the ResourceFlavors by name; when placement fails under one flavor the
	// cycle falls back to the ClusterQueue's next flavor (fungibility across capacity).
	Flavors map[string]api.ResourceFlavor
	// PreemptedBy maps a workload to the one that last preempted it: a workload never
	// preempts its own preemptor, so preemption chains cannot cycle.
	PreemptedBy map[api.WorkloadID]api.WorkloadID
	// Previous are the reservations the last cycle made, by workload: a head keeps
	// its reservation (and ETA) while it is still valid.
	Previous map[api.WorkloadID]plan.Reservation
	// TieSeed, when set, seeds each workload's placement ties from itself and the
	// workload (TieBreak) instead of drawing from Rand: the scheduler sets it so that
	// decisions do not depend on how many cycles ran before.
	TieSeed *int64
	// Followers, when set, hands in parked members of equivalence classes while the
	// cycle runs, each once the member before it took a step a NoFit did not end
	// (followers.go). Nil: the cycle visits Pending only.
	Followers Followers
	// SlotSeekers are pending workloads the nodes refused behind reservations (none may
	// preempt or follow a StrictFIFO head), handed apart by class because most visits
	// to them end in a rejection: the cycle visits them in order while reservation
	// slots are left, then only those the free GPUs less the holds against them could
	// host, dropping a whole class when none of its members could be
	// (reserve_seekers.go). Followers must be set when a class has more than its
	// first member. Nil: every pending workload is in Pending.
	SlotSeekers []SeekerClass
	// QuotaSeekers are parked workloads admission refused that a quota wake hands to
	// the cycle (quota_seekers.go): each is visited at its place in the order unless the
	// cycle's quota is certainly short for it then (Quota.Short), and Followers.Visit is
	// told first. Followers must be set when there are any.
	QuotaSeekers []Pending
	// Stirred are parked workloads an admission earlier in the same cycle may give a
	// new answer (stirred.go): each is visited at its place in the order only when the
	// cycle admitted a workload of its cohort tree before its turn, and Followers.Visit
	// is told first. Followers and Trees must be set when there are any.
	Stirred []Pending
	// Trees maps each ClusterQueue to its cohort tree's root (read with Stirred).
	Trees map[string]string
	// RunningScratch, when set, is where the cycle sorts Running for reservation walks
	// (placement.RunningByEnd.Reset): a driver that keeps one across cycles spares the
	// cycle a copy of every running workload. Its contents are the cycle's.
	RunningScratch *placement.RunningByEnd
	// RunningEdits, with RunningScratch, is the driver's account of what changed in
	// Running since the scratch last took it (placement.RunningByEnd.ResetEdited).
	RunningEdits *placement.RunningEdits
	// Checks answers for Kueue's admission checks (checks.go); nil: no ClusterQueue
	// has any.
	Checks AdmissionChecks
	// HeadHolds are, in Kueue's cycle (HeadOrderKueue), the quota held for the heads of
	// ClusterQueues that cannot always reclaim (holdsOf, holds.go), from every pending
	// workload, parked or not. Nil: those of the heads among Pending, for a driver that
	// hands every pending workload to every cycle.
	HeadHolds []admission.Assignment
}
