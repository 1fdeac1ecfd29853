package engine

import (
	"sort"
	"strconv"
	"strings"

	"github.com/gantry-sched/gantry/pkg/admission"
	"github.com/gantry-sched/gantry/pkg/plan"
)

// Equivalent workloads are answered once per cycle. Admission's flavor assignment is a
// function of the quota usage, the ClusterQueue, the pod sets (requests, counts, node
// constraints) and the flavors ruled out; it does not read priority, except where it
// simulates preemptions to choose between flavors (Assignment.Own: such an answer is
// the workload's and is not kept). So an answer is kept for its class and the quota
// version (the cycle's count of admissions): until the next admission, every workload
// of the class gets it without asking admission again.
// A NoFit of a single pod set is kept across admissions too: usage only grows within a
// cycle and each flavor's answer only gets worse with usage. (With several pod sets the
// flavors are chosen greedily pod set by pod set, which is not monotone.)

// quotaAnswer is a kept flavor assignment and the quota version it was computed at.
type quotaAnswer struct {
	a       admission.Assignment
	version int
}

// assign is Quota.AssignWithout with the cycle's memo.
func (c *cycle) assign(p Pending, without map[string]bool) admission.Assignment {
	w := p.Workload
	key := p.ClusterQueue + "\x00" + excludedKey(without) + "\x00" + c.shapeOf(p)
	if m, ok := c.quotaMemo[key]; ok && (m.version == c.quotaVersion || (m.a.Mode == admission.NoFit && len(w.PodSets) == 1)) {
		a := m.a
		a.Workload = w.ID()
		return a
	}
	var a admission.Assignment
	if without == nil {
		a = c.in.Quota.Assign(w, p.ClusterQueue)
	} else {
		a = c.in.Quota.AssignWithout(w, p.ClusterQueue, without)
	}
	if a.Code != admission.InvalidWorkload && !a.Own {
		c.quotaMemo[key] = quotaAnswer{a: a, version: c.quotaVersion}
	}
	return a
}

// excludedKey names a set of excluded flavors.
func excludedKey(without map[string]bool) string {
	if len(without) == 0 {
		return ""
	}
	names := make([]string, 0, len(without))
	for n, ok := range without {
		if ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return strings.Join(names, ",")
}

// failure is a placement failure of one shape under one set of held reservations
// (mask has bit i for held reservation i; exact names the set instead when an index
// does not fit in the mask). Only the same set matches: placing a gang is greedy, so
// it is not monotone in capacity (with fewer free GPUs a gang can land where it did
// not with more), and a failure under fewer holds says nothing about more.
type failure struct {
	mask  uint64
	exact string
	res   PlaceResult
}

// holdMask is the bit set of hold indices, or false when one is 64 or more.
func holdMask(holds []int) (uint64, bool) {
	var m uint64
	for _, i := range holds {
		if i >= 64 {
			return 0, false
		}
		m |= 1 << uint(i)
	}
	return m, true
}

// failedUnder returns a recorded failure of the shape under the same holds.
func (c *cycle) failedUnder(key string, holds []int) (PlaceResult, bool) {
	mask, small := holdMask(holds)
	exact := ""
	if !small {
		exact = holdKey(holds)
	}
	for _, f := range c.failed[key] {
		if (f.exact == "" && small && f.mask == mask) || (f.exact != "" && f.exact == exact) {
			return f.res, true
		}
	}
	return PlaceResult{}, false
}

// recordFailure remembers that the shape failed under holds for the rest of the cycle
// (within a cycle the overlay only gains pods, so it still would).
func (c *cycle) recordFailure(key string, holds []int, res PlaceResult) {
	f := failure{res: res}
	if mask, small := holdMask(holds); small {
		f.mask = mask
	} else {
		f.exact = holdKey(holds)
	}
	c.failed[key] = append(c.failed[key], f)
}

// shapeOf is p's shape key: the caller's, else computed once per cycle.
func (c *cycle) shapeOf(p Pending) string {
	if p.Shape != "" {
		return p.Shape
	}
	id := p.id()
	if s, ok := c.shapes[id]; ok {
		return s
	}
	s := ShapeKey(p.Workload)
	c.shapes[id] = s
	return s
}

// outcomeKey names what a workload's way through the cycle depends on when it takes no
// personal step: its equivalence class (ClusterQueue, shape, priority), the reservations
// it must keep off (by its runtime), the quota version (admissions change later answers)
// and whether reservation slots are left. A struct, so a visit allocates nothing.
type outcomeKey struct {
	class     string
	holds     uint64
	version   int
	slotsFull bool
}

// outcomeKeyOf is p's outcome key; false for a workload with victims noticed for it or a
// preemptor of its own (it takes personal steps), or more held reservations than the
// mask holds.
func (c *cycle) outcomeKeyOf(p Pending) (outcomeKey, bool) {
	id := p.id()
	if len(c.in.Nominated[id]) > 0 || c.in.PreemptedBy[id] != "" {
		return outcomeKey{}, false
	}
	holds, small := holdMask(c.holdsFor(p))
	if !small {
		return outcomeKey{}, false
	}
	class := p.Class
	if class == "" {
		class = ClassKey(p.ClusterQueue, c.shapeOf(p), p.Workload.Priority)
	}
	return outcomeKey{class: class, holds: holds, version: c.quotaVersion,
		slotsFull: !c.e.cfg.Reservations || len(c.out.Reservations) >= c.e.cfg.reservationDepth()}, true
}

// classOutcome is a rejection kept for a class, and whether admission's NoFit ended it.
type classOutcome struct {
	r     plan.Rejection
	noFit bool
}

// ClassKey names an equivalence class: ClusterQueue, shape and priority.
func ClassKey(clusterQueue, shape string, priority int32) string {
	return clusterQueue + "\x00" + shape + "\x00" + strconv.Itoa(int(priority))
}
