package controller

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/gantry-sched/gantry/pkg/admission"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/placement"
	"k8s.io/apimachinery/pkg/api/equality"
)

// admittedLayer keeps the admitted workloads laid out from one pass to the next: their
// planned pods bound on the nodes' snapshot and their admissions charged to the quota.
// A pass lays out only the workloads whose admission changed since the last one; when
// the nodes or the queue objects changed it starts again from nothing. Laying every
// admitted gang out each pass cost 1-4 s a pass with 7,000-10,000 running gangs.
//
// A layer belongs to one controller's passes, which run one at a time. A nil layer
// (tests, the CLI's view) lays everything out, as a fresh one would.
type admittedLayer struct {
	base    *cluster.Snapshot // the nodes alone, as baseSnapshots shares them
	objs    *api.Objects      // the queue objects quota was built from
	snap    *cluster.Snapshot // base with every entry's pods bound
	quota   *admission.Quota  // every entry's admission charged
	entries map[api.WorkloadID]*laidOut
	last    orderKey // the last workload laid out, in admission order
	pass    uint64   // counts lay calls: an entry not seen in this one is taken out
}

// orderKey is a workload's place in admission order (inAdmissionOrder).
type orderKey struct {
	seq int64
	key api.WorkloadID
}

func orderOf(t *tracked) orderKey { return orderKey{t.obj.Status.Admission.Sequence, t.model.ID()} }

func (a orderKey) after(b orderKey) bool { return a.seq > b.seq || a.seq == b.seq && a.key > b.key }

// laidOut is one admitted workload as the layer holds it: what it was read from, the
// pods it bound and the running view they make.
type laidOut struct {
	rv        string              // the Workload's resourceVersion, to skip the comparison below
	model     *api.Workload       // the feeder's model (a new one when the spec or priority changed)
	admission *v1alpha1.Admission // shared with the cache, never written in place
	at        time.Time           // when it was admitted (the running view's start)
	pods      []cluster.PodRef
	running   placement.Running
	// refused: its layout reported a problem, so nothing of it is in the layer and the
	// pass lays it out itself; kept so it is not tried again while unchanged.
	refused bool
	seen    uint64 // the last lay call that found it unchanged, or laid it out
}

// same reports whether t is still laid out as e: the same version, or a newer one
// with the same model, admission and admission time (a status write about something
// else, such as its pods' readiness, keeps its place, and its admission order).
func (e *laidOut) same(t *tracked) bool {
	if t.model != e.model {
		return false
	}
	if t.obj.ResourceVersion == e.rv {
		return true
	}
	if !admittedAt(t.obj).Equal(e.at) || !equality.Semantic.DeepEqual(t.obj.Status.Admission, e.admission) {
		return false
	}
	e.rv = t.obj.ResourceVersion
	return true
}

func newAdmittedLayer() *admittedLayer { return &admittedLayer{} }

// keepable reports whether t's layout can be kept across passes: its object has a
// version to tell a change by, and none of its pods name resource claims, whose
// devices depend on the claims' allocations (readClaims), read anew each pass.
func keepable(t *tracked) bool {
	if t.obj.ResourceVersion == "" {
		return false
	}
	for _, ps := range t.model.PodSets {
		if len(ps.Claims) > 0 {
			return false
		}
	}
	return true
}

// lay brings the layer up to the pass's nodes, queue objects and admitted workloads
// (in the pass's order). Entries whose workload is gone or changed are taken out; the
// new ones are laid out. A workload whose layout reports any problem is left out of
// the layer: the pass lays it out on its own, every pass, and reports the problem
// each time, as it did before there was a layer.
func (l *admittedLayer) lay(w *world, base *cluster.Snapshot, admitted []*tracked) error {
	if l.base != base || l.objs != w.objs || l.quota == nil {
		if err := l.reset(w, base); err != nil {
			return err
		}
	}
	ov := l.snap.Overlay()
	l.pass++
	var fresh []*tracked
	for _, t := range admitted {
		id := t.model.ID()
		if e := l.entries[id]; e != nil {
			if e.same(t) {
				e.seen = l.pass
				continue
			}
			l.takeOut(ov, id, e)
		}
		fresh = append(fresh, t)
	}
	for id, e := range l.entries {
		if e.seen != l.pass { // no longer admitted (or gone)
			l.takeOut(ov, id, e)
		}
	}
	fresh = inAdmissionOrder(fresh)
	if len(fresh) > 0 && !orderOf(fresh[0]).after(l.last) {
		// One goes before a workload laid out already (its spec changed while admitted,
		// say): the quota numbers admissions as they come, so lay them all out again.
		if err := l.reset(w, base); err != nil {
			return err
		}
		ov, fresh = l.snap.Overlay(), inAdmissionOrder(admitted)
	}
	for _, t := range fresh {
		l.add(ov, w, t)
		l.last = orderOf(t)
	}
	l.snap = ov.Seal()
	return nil
}

// reset empties the layer onto the nodes base and the pass's queue objects.
func (l *admittedLayer) reset(w *world, base *cluster.Snapshot) error {
	quota, err := admission.NewQuota(w.objs, admission.Options{})
	if err != nil {
		return fmt.Errorf("quota: %w", err)
	}
	*l = admittedLayer{base: base, objs: w.objs, snap: base, quota: quota, entries: map[api.WorkloadID]*laidOut{}}
	return nil
}

// takeOut forgets an entry: its pods leave the nodes and its admission the quota.
func (l *admittedLayer) takeOut(ov *cluster.Overlay, id api.WorkloadID, e *laidOut) {
	delete(l.entries, id)
	if e.refused {
		return
	}
	for _, ref := range e.pods {
		_ = ov.Forget(ref) // bound by add, so present
	}
	_ = l.quota.Release(id) // charged by add, so present
}

// laid is the layer's entry for id when the layer holds its layout.
func (l *admittedLayer) laid(id api.WorkloadID) (*laidOut, bool) {
	e, ok := l.entries[id]
	return e, ok && !e.refused
}

// add lays t out on the layer; when any pod or its admission does not go in cleanly
// nothing of it is left there, and its entry is marked refused.
func (l *admittedLayer) add(ov *cluster.Overlay, w *world, t *tracked) {
	e := &laidOut{rv: t.obj.ResourceVersion, model: t.model, admission: t.obj.Status.Admission, at: admittedAt(t.obj),
		refused: true, seen: l.pass}
	l.entries[t.model.ID()] = e
	pods, err := admittedPods(w, t, nil)
	if err != nil {
		return
	}
	mark := ov.Mark()
	refs := make([]cluster.PodRef, 0, len(pods))
	for _, bp := range pods {
		if err := ov.Assume(bp.Ref, bp.Node, bp.Requests, bp.Devices); err != nil {
			ov.Undo(mark)
			return
		}
		refs = append(refs, bp.Ref)
	}
	if err := l.quota.Admit(t.model, assignmentOf(t)); err != nil {
		ov.Undo(mark)
		return
	}
	e.pods, e.running, e.refused = refs, runningOf(w, t, pods), false
}

// inAdmissionOrder sorts admitted workloads by their admission's sequence number, key
// order among equal ones: the quota numbers admissions as they are charged, and
// preemption takes the most recently admitted of equal priority first. A layer laid
// anew and one kept pass after pass then number them alike, as the controller
// admitted them. (Before the layer, the key order stood in for it.)
func inAdmissionOrder(ts []*tracked) []*tracked {
	out := slices.Clone(ts)
	slices.SortStableFunc(out, func(a, b *tracked) int {
		return cmp.Compare(a.obj.Status.Admission.Sequence, b.obj.Status.Admission.Sequence)
	})
	return out
}

// record notes an admitted workload as running, or leaving when under a notice.
func (cs *cycleState) record(r placement.Running, noticed bool) {
	cs.runningByID[r.ID] = r
	if noticed {
		cs.inFlight[r.ID] = true
	} else {
		cs.running = append(cs.running, r)
	}
}
