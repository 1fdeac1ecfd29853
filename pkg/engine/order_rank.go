package engine

import (
	"math"

	"github.com/gantry-sched/gantry/pkg/admission"
	"github.com/gantry-sched/gantry/pkg/api"
)

// Head ranks: Kueue tries the heads of the ClusterQueues of a cohort tree whose quota
// comes from nearer first, before priority (admission.HeadRank: without fair sharing
// the borrowing level of the head's flavor assignment, under fair sharing its standing
// in the tournament down the cohort tree, share after admission). The cycle visits
// every pending workload in one order, and that order must not depend on which other
// workloads are handed in (parked ones are not; TestParkingKeepsDecisionsProperty), so
// each workload is ranked on its own, by the assignment it gets as the cycle starts.
// Two consequences: within a ClusterQueue a workload that fits its nominal quota may go
// before a higher-priority one that must borrow (Kueue, one head per queue, would try
// the higher-priority one first), and the tournament is decided level by level from
// the root, each workload with its own share after admission (Kueue's picks one head
// per subtree first). A StrictFIFO queue keeps its order: its workloads all take the
// rank of the queue as it stands, with no request of their own.

// headRanker is what a Quota may also answer for the order of heads. A Quota without
// it (the tests' fakes) ranks every workload alike.
type headRanker interface {
	// CompileRank resolves the quick rank question for a ClusterQueue, once a cycle.
	CompileRank(clusterQueue string) admission.RankCheck
	// QuickHeadRankBy ranks a workload by its request totals without a flavor
	// assignment where its flavors are forced (false: ask Assign, then HeadRank).
	QuickHeadRankBy(c *admission.RankCheck, t admission.Totals) (admission.HeadRank, bool)
	// HeadRank ranks w's assignment a against the usage now.
	HeadRank(w *api.Workload, a admission.Assignment) admission.HeadRank
	// AssignBlocked is Quota.AssignBlocked.
	AssignBlocked(w *api.Workload, clusterQueue string) admission.Assignment
}

var _ headRanker = admissionQuota{}

func (a admissionQuota) CompileRank(cq string) admission.RankCheck { return a.q.CompileRank(cq) }

func (a admissionQuota) QuickHeadRankBy(c *admission.RankCheck, t admission.Totals) (admission.HeadRank, bool) {
	return a.q.QuickHeadRankBy(c, t)
}

func (a admissionQuota) HeadRank(w *api.Workload, as admission.Assignment) admission.HeadRank {
	return a.q.HeadRank(w, as)
}

// headRanks computes a cycle's head ranks, each (ClusterQueue, shape) once, reading
// each shape's requests once: the scheduler's followers and slot seekers, handed in
// while the cycle runs, are members of classes ranked as it started, so their ranks are
// the cycle's start's too. Queues and shapes are numbered as first seen, and a rank is
// kept under the pair of numbers (a cycle ranks thousands of workloads: few
// allocations, one look-up of the shape).
type headRanks struct {
	q      headRanker
	assign func(Pending) admission.Assignment
	shape  func(Pending) string
	queues map[string]int32
	qs     []queueRanks
	shapes map[string]int32
	totals []admission.Totals // by shape number
	ranks  map[uint64]*admission.HeadRank
	// levels are the ranks with a borrowing level only, by level (shared: most
	// ranks are these).
	levels []*admission.HeadRank
}

// queueRanks is one ClusterQueue's part: its compiled question and, for a StrictFIFO
// queue, its one rank (the queue's as it stands: an assignment with no usage), once
// strictMade.
type queueRanks struct {
	check      admission.RankCheck
	strict     *admission.HeadRank
	strictMade bool
}

// headRanks is the cycle's ranker, nil when the Quota cannot rank. It must be made
// before the cycle admits anything: its assignments are the memo's at version 0.
func (c *cycle) headRanks() *headRanks {
	q, ok := c.in.Quota.(headRanker)
	if !ok {
		return nil
	}
	// Sized for the workloads handed in as the cycle starts (a fleet-size cycle ranks
	// hundreds): grown one by one, the tables were most of the ranking's garbage.
	n := len(c.in.Pending) + len(c.in.SlotSeekers) + len(c.in.QuotaSeekers)
	queues := min(n, 64)
	return &headRanks{q: q, assign: func(p Pending) admission.Assignment { return c.assign(p, nil) }, shape: c.shapeOf,
		queues: make(map[string]int32, queues), qs: make([]queueRanks, 0, queues),
		shapes: make(map[string]int32, min(n, 16)), ranks: make(map[uint64]*admission.HeadRank, min(n, 128))}
}

// of is p's rank; nil is the zero rank (no cohort, no flavor assignment, borrows
// nothing).
func (h *headRanks) of(p Pending) *admission.HeadRank {
	if h == nil || p.ClusterQueue == "" {
		return nil
	}
	qi := h.queue(p.ClusterQueue)
	qr := &h.qs[qi]
	switch {
	case !qr.check.InCohort():
		return nil
	case p.Strategy == api.StrictFIFO:
		if !qr.strictMade {
			qr.strict, qr.strictMade = h.shared(h.q.HeadRank(nil, admission.Assignment{ClusterQueue: p.ClusterQueue, Mode: admission.Fit})), true
		}
		return qr.strict
	}
	shape := h.shape(p)
	si, ok := h.shapes[shape]
	if !ok {
		si = int32(len(h.totals))
		h.shapes[shape] = si
		h.totals = append(h.totals, admission.RequestTotals(p.Workload))
	}
	key := uint64(uint32(si))<<32 | uint64(uint32(qi))
	if r, ok := h.ranks[key]; ok {
		return r
	}
	r, own := h.compute(p, qr, h.totals[si])
	if !own {
		h.ranks[key] = r
	}
	return r
}

// compute ranks p in its queue; own says the rank is p's alone (not its shape's).
func (h *headRanks) compute(p Pending, qr *queueRanks, t admission.Totals) (*admission.HeadRank, bool) {
	if r, ok := h.q.QuickHeadRankBy(&qr.check, t); ok {
		return h.shared(r), false
	}
	a := h.assign(p)
	blocked := false
	if a.Mode == admission.NoFit && a.Code == admission.WaitingForQuota {
		// A queue that may preempt nothing: Kueue rates the head Preempt without
		// candidates and ranks it by that assignment's borrowing level, not first.
		// With no possible victim its level is its shape's.
		a, blocked = h.q.AssignBlocked(p.Workload, p.ClusterQueue), true
	}
	switch a.Mode {
	case admission.NoFit:
		return nil, false // refused at its turn whatever its place
	case admission.Preempt:
		// The level after preemption depends on which workloads the preemptor's
		// priority and age may preempt, so it is the workload's own. Only queues that
		// may preempt get here, and the workloads of those are all handed in as the
		// cycle starts (followers and slot seekers never preempt).
		return h.shared(h.q.HeadRank(p.Workload, a)), !blocked
	}
	return h.shared(h.q.HeadRank(p.Workload, a)), false
}

// queue is ClusterQueue cq's number, its part made on first use.
func (h *headRanks) queue(cq string) int32 {
	qi, ok := h.queues[cq]
	if !ok {
		qi = int32(len(h.qs))
		h.queues[cq] = qi
		h.qs = append(h.qs, queueRanks{check: h.q.CompileRank(cq)})
	}
	return qi
}

// shared is r as a key holds it: nil for the zero rank, one pointer per borrowing
// level for ranks without standings.
func (h *headRanks) shared(r admission.HeadRank) *admission.HeadRank {
	switch {
	case len(r.Standings) > 0:
		own := r
		return &own
	case r.Level == 0:
		return nil
	}
	for len(h.levels) <= r.Level {
		h.levels = append(h.levels, nil)
	}
	if h.levels[r.Level] == nil {
		h.levels[r.Level] = &admission.HeadRank{Level: r.Level}
	}
	return h.levels[r.Level]
}

// rankFields are the head key's fields for rank r: the level inline, the fair-sharing
// standings by pointer (nil when there are none).
func rankFields(r *admission.HeadRank) (int16, *admission.HeadRank) {
	if r == nil {
		return 0, nil
	}
	level := int16(min(r.Level, math.MaxInt16))
	if len(r.Standings) == 0 {
		return level, nil
	}
	return level, r
}

// compareStandings orders two keys' fair-sharing standings (nil: none).
func compareStandings(a, b *admission.HeadRank) int {
	var ra, rb admission.HeadRank
	if a != nil {
		ra.Standings = a.Standings
	}
	if b != nil {
		rb.Standings = b.Standings
	}
	return admission.CompareHeadRanks(ra, rb)
}
