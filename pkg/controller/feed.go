package controller

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	"github.com/gantry-sched/gantry/pkg/engine"
	"github.com/gantry-sched/gantry/pkg/placement"
	"github.com/gantry-sched/gantry/pkg/plan"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// feeder reports to the engine's scheduler what changed since the last pass, as the
// simulator reports its own events (pkg/sim handle.go, committer.go): a new pending
// Workload is submitted, an admitted one started, one evicted back to pending requeued,
// a finished or deleted one finished; a node change or a foreign pod leaving is a
// nodes change. It remembers what it told the scheduler about each workload and
// reports only differences, so a pass where nothing changed tells the scheduler
// nothing, and parked workloads stay parked.
type feeder struct {
	known     map[api.WorkloadID]*fed
	nodeGen   uint64
	occupants map[string]bool
}

// fed is what the scheduler was told about one workload.
type fed struct {
	model   *api.Workload
	key     modelKey
	running bool // Started since its last Submit or Requeued
	// hold is the admission check hold last applied (checkHoldKey): a pending workload
	// whose reservation ended without running (its checks were Ready and a request then
	// expired) is held without passing through started.
	hold string
}

// modelKey is what a workload's model is converted from, beyond its identity: a
// different key is a different model (the spec, its priority or its minimum runtime
// changed), which the scheduler is given by finishing the old one and submitting anew.
type modelKey struct {
	uid        types.UID
	generation int64
	priority   int32
	minRuntime string
	// podSetUpdates are a Ready check's node selectors (podsetupdates.go): an annotation,
	// not the spec, so the generation does not move with them.
	podSetUpdates string
}

func keyOf(obj *v1alpha1.Workload, priority int32) modelKey {
	return modelKey{uid: obj.UID, generation: obj.Generation, priority: priority, minRuntime: obj.Annotations[api.AnnotationMinRuntime],
		podSetUpdates: obj.Annotations[AnnotationPodSetUpdates]}
}

func newFeeder() *feeder { return &feeder{known: map[api.WorkloadID]*fed{}} }

// reset forgets everything: the scheduler was rebuilt and gets every workload again.
func (f *feeder) reset() { *f = *newFeeder() }

// model converts obj, reusing the model the scheduler was given while it is current
// (conversion is per change, not per pass).
func (f *feeder) model(obj *v1alpha1.Workload, priority int32) (*api.Workload, error) {
	if k := f.known[api.WorkloadID(wlKey(obj))]; k != nil && k.key == keyOf(obj, priority) {
		return k.model, nil
	}
	return ToAPIWorkload(obj, priority)
}

// observe reports the changes between what the scheduler was told and the pass's
// state, workloads in key order (submission order decides nothing, but logs read
// better deterministic). changed is false when there was none: the pass's cycle is
// then an unchanged one (engine.World.Unchanged).
func (f *feeder) observe(s *engine.Scheduler, cs *cycleState, nodeGen uint64) (changed bool, errs []error) {
	for _, id := range cs.keys() {
		t := cs.byID[id]
		if t.model == nil {
			continue // finished, or cannot be read
		}
		moved, err := f.sync(s, t)
		if err != nil {
			errs = append(errs, err)
		}
		changed = changed || moved
	}
	var gone []api.WorkloadID // told, and no longer read: sorted, only these
	for id := range f.known {
		if t := cs.byID[id]; t == nil || t.model == nil {
			gone = append(gone, id)
		}
	}
	slices.Sort(gone)
	for _, id := range gone {
		s.Finished(id)
		delete(f.known, id)
		changed = true
	}
	if nodeGen != f.nodeGen || freed(f.occupants, cs.occupants) {
		s.NodesChanged()
		changed = true
	}
	f.nodeGen, f.occupants = nodeGen, cs.occupants
	return changed, errs
}

// sync reports one workload's change, if any. The model carries the priority it was
// converted with.
func (f *feeder) sync(s *engine.Scheduler, t *tracked) (changed bool, err error) {
	id := t.model.ID()
	key := keyOf(t.obj, t.model.Priority)
	k := f.known[id]
	if k != nil && k.key != key {
		s.Finished(id)
		delete(f.known, id)
		k = nil
	}
	switch {
	case k == nil:
		if err := s.Submit(t.model, queuedAt(t.obj), t.model.MaxRuntime); err != nil {
			return true, err
		}
		k = &fed{model: t.model, key: key}
		f.known[id] = k
		if t.started() { // admitted, or holding a quota reservation for its checks
			s.Started(id, t.startedAt())
			k.running = true
		} else if err := backOff(s, id, t.obj); err != nil { // a restart resumes a backoff in progress
			return true, err
		}
		k.hold = checkHoldKey(t.obj)
	case t.started() && !k.running:
		s.Started(id, t.startedAt())
		k.running = true
	case !t.started() && k.running: // evicted, or its reservation ended (checks Ready, Retry, Rejected)
		s.Requeued(id, queuedAt(t.obj), t.model.MaxRuntime)
		k.running = false
		k.hold = checkHoldKey(t.obj)
		if err := backOff(s, id, t.obj); err != nil {
			return true, err
		}
	case !t.started() && checkHoldKey(t.obj) != k.hold:
		k.hold = checkHoldKey(t.obj)
		checkBackOff(s, id, t.obj)
	default:
		return false, nil
	}
	return true, nil
}

// backOff hands the scheduler the requeue backoff of a pending workload last evicted
// by a failure (engine.Scheduler.BackOff; nothing without a requeue policy). An
// unreadable failure count is reported and counts as this one failure.
func backOff(s *engine.Scheduler, id api.WorkloadID, obj *v1alpha1.Workload) error {
	if checkBackOff(s, id, obj) { // provreq_backoff.go
		return nil
	}
	c := meta.FindStatusCondition(obj.Status.Conditions, v1alpha1.WorkloadEvicted)
	if c != nil && c.Status == metav1.ConditionTrue && c.Reason == api.ReasonPodsReadyTimeout {
		podsReadyBackOff(s, id, obj, c.LastTransitionTime.Time) // podsready_pass.go
		return nil
	}
	if c == nil || c.Status != metav1.ConditionTrue || c.Reason != ReasonDeviceUnhealthy {
		return nil
	}
	n, err := failuresOf(obj)
	s.BackOff(id, c.LastTransitionTime.Time, max(n, 1))
	return err
}

// failuresOf is the workload's count of evictions by failures (AnnotationFailures; 0
// when absent), or an error naming the Workload and the annotation when it is not a
// non-negative count.
func failuresOf(obj *v1alpha1.Workload) (int, error) {
	v, ok := obj.Annotations[AnnotationFailures]
	if !ok {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("Workload %s/%s: annotation %s: %q is not a count of failures (a non-negative integer)", obj.Namespace, obj.Name, AnnotationFailures, v)
	}
	return n, nil
}

// notice is a preemption notice the committer applied.
type notice struct {
	victim, by api.WorkloadID
	rec        placement.PreemptionRecord
}

// committed reports what the committer applied, in the simulator's order: admissions
// start, notices are noticed, then the plan goes back to the scheduler. Times are
// those written to the objects (whole seconds), so a restart reads the same.
func (f *feeder) committed(s *engine.Scheduler, p plan.Plan, applied []api.WorkloadID, notices []notice, now time.Time) {
	for _, id := range applied {
		if k := f.known[id]; k != nil {
			s.Started(id, stamp(now))
			k.running = true
		}
	}
	for _, n := range notices {
		s.Noticed(n.victim, n.by, n.rec)
	}
	s.Committed(p, applied)
}

// freed reports whether an occupant of before is gone now: capacity came back.
func freed(before, now map[string]bool) bool {
	for k := range before {
		if !now[k] {
			return true
		}
	}
	return false
}

// stamp is t as an object stores it (metav1.Time keeps whole seconds).
func stamp(t time.Time) time.Time { return t.Truncate(time.Second) }

func sortedKeys[V any](m map[api.WorkloadID]V) []api.WorkloadID {
	out := make([]api.WorkloadID, 0, len(m))
	for id := range m {
		out = append(out, id)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
