package engine

import (
	"github.com/gantry-sched/gantry/pkg/admission"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/plan"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// A workload the nodes refused waits for capacity. When a workload ends, its GPUs come
// back on a few nodes; most node-parked gangs still cannot fit in what is free, and
// trying them again costs a visit each (at 10,000 pending, the bulk of a cycle). So the
// wake a finish causes is deferred to the next cycle and checks, for each such gang, a
// necessary condition on the free whole GPUs of the cluster as it is then: its pods of
// g GPUs each could be hosted at all (a node with f free GPUs hosts at most f/g of them).
// A gang that fails it would fail placement too, so leaving it parked changes no
// decision; capacity only comes back through events, which wake it again.
//
// The condition is skipped (the workload wakes as before) when it could take a step
// that does not need free GPUs: it may preempt on the nodes or for quota (freed
// capacity lowers the victims it needs), or it has no whole-GPU pod set to check, or a
// MinMember gang (any subset of its pods may do).

// podNeed is one pod set's whole-GPU need: pods of gpus whole GPUs each.
type podNeed struct{ gpus, pods int64 }

// gpuPodNeeds is w's whole-GPU needs, nil when the condition does not apply to it.
func gpuPodNeeds(w *api.Workload) []podNeed {
	if w.MinMember > 0 {
		return nil
	}
	var out []podNeed
	for _, ps := range w.PodSets {
		if gatesSkip(&ps) {
			continue // shared claims: dra_shared.go
		}
		if g := int64(ps.Requests[resources.NvidiaGPU]); g > 0 && ps.GangCount() > 0 {
			out = append(out, podNeed{gpus: g, pods: int64(ps.GangCount())})
		}
	}
	return out
}

// freeGPUView answers the condition over one overlay, counting each threshold once.
// held, when set, takes free whole GPUs out of some nodes (reserve_held.go).
type freeGPUView struct {
	ov *cluster.Overlay
	// set is scratch for one count, lent by the view's owner and shared by its views
	// (a fresh one per view was a node bitmap per admission of a cycle).
	set   *cluster.NodeSet
	nodes map[int64]int64 // k -> nodes with at least k free whole GPUs
	held  map[int]int64   // node -> free whole GPUs held there
}

func newFreeGPUView(snap *cluster.Snapshot, scratch *cluster.NodeSet) *freeGPUView {
	return newOverlayGPUView(snap.Overlay(), scratch)
}

// newOverlayGPUView answers over an overlay as it is now (a reservation walk's step),
// counting nodes in scratch.
func newOverlayGPUView(ov *cluster.Overlay, scratch *cluster.NodeSet) *freeGPUView {
	return &freeGPUView{ov: ov, set: scratch, nodes: map[int64]int64{}}
}

// restart makes v answer over ov as it is now, keeping its memory (a reservation walk
// asks at every step, after the overlay changed).
func (v *freeGPUView) restart(ov *cluster.Overlay) {
	v.ov = ov
	clear(v.nodes)
}

func (v *freeGPUView) nodesWith(k int64) int64 {
	if n, ok := v.nodes[k]; ok {
		return n
	}
	v.ov.FreeAtLeast(v.set, resources.NvidiaGPU, k, nil)
	n := int64(v.set.Len())
	v.nodes[k] = n
	return n
}

// hostable reports whether the free GPUs could host want pods of g GPUs.
func (v *freeGPUView) hostable(g, want int64) bool { return v.hosts(g, want) >= want }

// hosts is how many pods of g GPUs the free GPUs could host, counted up to want: the
// sum over j >= 1 of the nodes with at least j*g free.
func (v *freeGPUView) hosts(g, want int64) int64 {
	held := v.heldPods(g)
	var got int64
	for j := int64(1); got < want+held; j++ {
		n := v.nodesWith(j * g)
		if n == 0 {
			break
		}
		got += n
	}
	return max(0, min(got-held, want))
}

// mayFit is the necessary condition for needs: each pod set could be hosted on its own,
// and all of them together within the total free GPUs.
func (v *freeGPUView) mayFit(needs []podNeed) bool {
	_, short := v.shortOf(needs)
	return !short
}

// shortOf is the first need the free GPUs cannot host, with how many of its pods they
// could (all pod sets together count as one need of single GPUs).
func (v *freeGPUView) shortOf(needs []podNeed) (plan.GangRoom, bool) {
	var total int64
	for _, n := range needs {
		if got := v.hosts(n.gpus, n.pods); got < n.pods {
			return plan.GangRoom{Pods: n.pods, GPUs: n.gpus, Hostable: got}, true
		}
		total += n.gpus * n.pods
	}
	if len(needs) > 1 {
		if got := v.hosts(1, total); got < total {
			return plan.GangRoom{Pods: total, GPUs: 1, Hostable: got}, true
		}
	}
	return plan.GangRoom{}, false
}

// The same holds for quota: a workload admission refused waits for quota freed in its
// cohort tree, and a finish usually frees too little for most of them. One pod set's
// flavor answer only gets worse as usage grows within a cycle (equivalence.go), so one
// that gets NoFit from the quota as the cycle starts gets it at its turn too: it stays
// parked. The answer is asked once per class (ClusterQueue and shape), as a cycle does.

// wakeForCapacity runs the wakes that workloads leaving since the last cycle cause, by
// the conditions above, over the cluster and quota the cycle is about to use.
func (s *Scheduler) wakeForCapacity(w World) {
	roots := s.freedRoots
	s.freed, s.freedRoots = false, nil
	for root := range roots {
		s.wakeQuotaParked(root, w.Quota)
	}
	if w.Cluster == nil {
		s.wakeForNodes()
		return
	}
	v := newFreeGPUView(w.Cluster, &s.eng.gpuScratch)
	s.wakeSet(s.parked.byKind[ParkedNodes], func(e *entry) bool {
		return e.gpu.needs == nil || e.cq.preempts || e.nodePreempts || v.mayFit(e.gpu.needs)
	})
}

// wakeQuotaParked hands the cycle the workloads admission refused in cohort tree root
// that quota may admit now, asking admission once per class (quota_seekers.go). Of a
// class that the cycle can follow (followers.go) only the first member is handed; the
// rest wait in their class, in order, for the cycle (s.chains).
func (s *Scheduler) wakeQuotaParked(root string, q *admission.Quota) {
	woken := s.wakeBuf[:0] // scratch: seekQuota keeps the entries, not the slice
	fits := s.quotaFits.reset(len(s.quotaClasses))
	classes := s.parked.quotaByRoot[root].all()
	for _, c := range classes {
		class, members := c.class, c.set
		head := members.first()
		if head == nil || !s.mayGetQuota(head, q, fits) {
			continue
		}
		woken = append(woken, head)
		if members.Len() > 1 && s.followable(head) { // filed followable; checked again all the same
			if s.chains == nil || (len(s.chains) == 0 && len(classes) > chainsSized) {
				// Sized for the tree's classes: grown entry by entry, it was a table per
				// doubling at every wake (the cycle drops a large one: scratch.Reset).
				s.chains = s.sizedChains(len(classes))
			}
			s.chains[class] = chain{cq: head.res.ClusterQueue, members: members}
		}
	}
	for _, e := range s.parked.quotaLoners[root].entries() {
		if s.mayGetQuota(e, q, fits) {
			woken = append(woken, e)
		}
	}
	s.seekQuota(woken)
	clear(woken) // scratch kept between cycles holds no entries alive
	s.wakeBuf = woken[:0]
}

// sizedChains is an empty chains table for n classes: the spare when there is one.
func (s *Scheduler) sizedChains(n int) map[string]chain {
	if m := s.chainsSpare; m != nil {
		s.chainsSpare = nil
		return m
	}
	return make(map[string]chain, n)
}

// resetChains empties the chains at a cycle's start; a large table is kept as the
// spare and a small one cleared in place.
func (s *Scheduler) resetChains() {
	large := len(s.chains) > chainsSized
	clear(s.chains)
	if large {
		if s.chainsSpare == nil {
			s.chainsSpare = s.chains
		}
		s.chains = nil // a small wake must not range over a large table
	}
}

// chainsSized is how many classes a cohort tree has before the chains of an empty
// wake are made for them all at once, not grown.
const chainsSized = 8

// preemptsOnNodes reports whether the cycle may look for victims on the nodes for e.
func (s *Scheduler) preemptsOnNodes(e *entry) bool {
	if !s.eng.cfg.Preemption {
		return false
	}
	np, ok := s.eng.placer.(nodePreempter)
	return !ok || np.Preempts(e.res.ClusterQueue)
}

// mayGetQuota reports whether quota may now admit the members of e's class (all of
// one ClusterQueue and shape): not when admission is certainly short for a one-pod-set
// workload of a queue that does not preempt (Quota.Short, a bound that costs a few
// lookups: the cycle rates the woken member fully anyway).
// Priority does not enter admission's answer, so it is asked once per quotaClass.
func (s *Scheduler) mayGetQuota(e *entry, q *admission.Quota, memo *classMemo) bool {
	if q == nil || !e.quotaAlone {
		return true
	}
	fit, ok := memo.get(e.quotaClass)
	if !ok {
		fit = !q.ShortBy(s.shortCheck(e, q))
		memo.set(e.quotaClass, fit)
	}
	return fit
}

// classMemo keeps one answer per quota class number for one wake. Reset is a new
// generation, not a clear: a wake runs per cohort tree after every finish, and the
// classes number in the thousands.
type classMemo struct {
	gen  uint32
	seen []uint32 // the generation a class was answered in
	val  []bool
}

// reset starts a new wake over n classes.
func (m *classMemo) reset(n int) *classMemo {
	if n > len(m.seen) {
		m.seen = append(m.seen, make([]uint32, n-len(m.seen))...)
		m.val = append(m.val, make([]bool, n-len(m.val))...)
	}
	m.gen++
	if m.gen == 0 { // wrapped: old marks could match again
		clear(m.seen)
		m.gen = 1
	}
	return m
}

func (m *classMemo) get(c int32) (bool, bool) {
	if int(c) >= len(m.seen) || m.seen[c] != m.gen {
		return false, false
	}
	return m.val[c], true
}

func (m *classMemo) set(c int32, v bool) {
	if int(c) < len(m.seen) {
		m.seen[c], m.val[c] = m.gen, v
	}
}

// shortCheck is admission's Short question for e's quota class, compiled once against
// q's structure (the clones every cycle works on share it) and kept by class number.
func (s *Scheduler) shortCheck(e *entry, q *admission.Quota) *admission.ShortCheck {
	if q == nil {
		return nil
	}
	if n := int(e.quotaClass); n >= len(s.shortChecks) {
		s.shortChecks = append(s.shortChecks, make([]*admission.ShortCheck, n+1-len(s.shortChecks))...)
	}
	c := s.shortChecks[e.quotaClass]
	if !q.Compiled(c) {
		cc := q.CompileShort(e.w, e.res.ClusterQueue)
		c = &cc
		s.shortChecks[e.quotaClass] = c
	}
	return c
}

// quotaClass is what admission's answer depends on: ClusterQueue and shape. Each one
// known is numbered once (Scheduler.quotaClasses), so wakes key their memo by number.
type quotaClass struct{ cq, shape string }

// quotaClassOf numbers e's quotaClass.
func (s *Scheduler) quotaClassOf(e *entry) int32 {
	k := quotaClass{cq: e.res.ClusterQueue, shape: e.shape}
	n, ok := s.quotaClasses[k]
	if !ok {
		n = int32(len(s.quotaClasses))
		s.quotaClasses[k] = n
	}
	return n
}
