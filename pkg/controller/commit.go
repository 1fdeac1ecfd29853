package controller

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/gantry-sched/gantry/pkg/admission"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	"github.com/gantry-sched/gantry/pkg/engine"
	"github.com/gantry-sched/gantry/pkg/placement"
	"github.com/gantry-sched/gantry/pkg/plan"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// committer applies an engine plan to the API server. Every write carries the
// resourceVersion the cycle read, so a plan made on stale state is refused (a
// Conflict), never applied on top of newer decisions; the next cycle retries.
type committer struct {
	ctx      context.Context
	c        client.Client
	events   record.EventRecorder
	cs       *cycleState
	now      time.Time
	metrics  *Metrics
	preempts int
	// noticed are the preemption notices written, for the scheduler (Noticed).
	noticed []notice
	// sequence is the last admission number given (Admission.Sequence).
	sequence int64
	// rootOf names a ClusterQueue's cohort root (engine.Scheduler.RootOf), and queueETA
	// is the scheduler's quota ETA (engine.Scheduler.QueuedQuotaETA), for ETAs.
	rootOf   func(cq string) string
	queueETA func(q *admission.Quota, id api.WorkloadID, ending []engine.Ending, now time.Time) (engine.QueueETA, bool)
	// started, if set, is told of each admission as soon as it is written (binding
	// starts then, not after the whole plan is written); it must not block.
	started func(t *tracked)
	// released are the workloads whose reservation a check ended in this Apply
	// (provreq_run.go): the plan, made before, may not admit them.
	released map[api.WorkloadID]bool
}

var _ plan.Committer = (*committer)(nil)

// etaHeads is how far down its ClusterQueue a workload held by quota gets an ETA each
// pass: an estimate releases running workloads on a copy of the quota, and the heads of
// the queues are what users ask about.
const etaHeads = 3

// quotaETA estimates when a workload the admission layer holds could start, as the
// simulator's explain does (engine.Scheduler.QueuedQuotaETA); nil when none is known.
func (k *committer) quotaETA(t *tracked, r plan.Rejection) *eta {
	if r.Layer != plan.LayerAdmission || r.Position < 1 || r.Position > etaHeads || k.rootOf == nil || k.queueETA == nil ||
		k.cs.quota == nil || t.model == nil || r.ClusterQueue == "" {
		return nil
	}
	root := k.rootOf(r.ClusterQueue)
	var ends []engine.Ending
	for id, run := range k.cs.runningByID {
		if !run.ExpectedEnd.IsZero() && k.rootOf(run.Queue) == root {
			ends = append(ends, engine.Ending{Workload: id, At: run.ExpectedEnd})
		}
	}
	q, ok := k.queueETA(k.cs.quota, t.model.ID(), ends, k.now)
	if !ok {
		return nil
	}
	return &eta{at: q.At, basis: q.Basis()}
}

// Apply writes admissions (Workload status with the gang's placements; the binder
// then binds the pods), rejections and reservations (status), and notices (the
// preemption annotation and an event; the eviction follows after the grace period).
func (k *committer) Apply(p plan.Plan) (plan.Result, error) {
	if err := p.Validate(); err != nil {
		return plan.Result{}, fmt.Errorf("controller: invalid plan: %w", err)
	}
	var res plan.Result
	k.runChecks() // provreq_run.go: the checks of reservations made before, and stale requests
	// Each admission and rejection writes its own Workload only: they go out
	// concurrently (a plan of hundreds is not one long queue of round trips). The plan's
	// order is kept in each admission's Sequence, and the result is in plan order.
	bindings := p.BindingsByWorkload()
	refused := make([]string, len(p.Admissions))
	base := k.sequence
	k.sequence += int64(len(p.Admissions))
	each(len(p.Admissions), commitWorkers, func(i int) {
		a := p.Admissions[i]
		refused[i] = k.admit(a, bindings[a.Workload], base+int64(i)+1)
	})
	for i, a := range p.Admissions {
		if refused[i] != "" {
			res.Refused = append(res.Refused, plan.Conflict{Workload: a.Workload, Reason: refused[i]})
			continue
		}
		res.Applied = append(res.Applied, a.Workload)
	}
	each(len(p.Rejections), commitWorkers, func(i int) {
		r := p.Rejections[i]
		if t := k.cs.byID[r.Workload]; t != nil && engine.IsQuotaReserved(r) {
			k.reserve(t, r) // provreq_reserve.go: admission checks run before a placement
		} else if t != nil {
			k.writeIfChanged(t.obj, pendingStatus(t.obj.Status, r, k.now, k.quotaETA(t, r)))
			_ = recordReservation(k.ctx, k.c, t.obj, "") // the scheduler dropped it too
		}
	})
	for _, r := range p.Reservations {
		if t := k.cs.byID[r.Workload]; t != nil {
			k.writeIfChanged(t.obj, reservedStatus(t.obj.Status, r, k.now))
			_ = recordReservation(k.ctx, k.c, t.obj, formatReservation(r))
		}
	}
	var preemptors []api.WorkloadID // in first-notice order, for deterministic writes
	noticed := map[api.WorkloadID][]api.WorkloadID{}
	for _, n := range p.Notices {
		if t := k.cs.byID[n.Workload]; t != nil && !t.noticed() {
			if err := k.notice(t, n); err == nil {
				k.preempts++
				k.metrics.preempted(k.cs, t, n)
				if n.By != "" {
					if _, ok := noticed[n.By]; !ok {
						preemptors = append(preemptors, n.By)
					}
					noticed[n.By] = append(noticed[n.By], n.Workload)
				}
			}
		}
	}
	for _, by := range preemptors {
		k.recordVictims(by, noticed[by])
	}
	for _, e := range p.Evictions {
		if t := k.cs.byID[e.Workload]; t != nil && t.admitted() {
			k.noticeNow(t, e)
		}
	}
	return res, nil
}

// recordVictims adds victims to the preemptor's record of its current wait. A failed
// write loses only the "once per wait" rule for these victims while they run again;
// while they are leaving, their preempted-by annotation names the preemptor.
func (k *committer) recordVictims(by api.WorkloadID, victims []api.WorkloadID) {
	if t := k.cs.byID[by]; t != nil && t.model != nil && !t.admitted() {
		_ = recordNominated(k.ctx, k.c, t.obj, victims)
	}
}

// writeStatus replaces the status, failing on a concurrent change.
func (k *committer) writeStatus(obj *v1alpha1.Workload, st v1alpha1.WorkloadStatus) error {
	upd := obj.DeepCopy()
	upd.Status = st
	if err := k.c.Status().Update(k.ctx, upd); err != nil {
		if apierrors.IsConflict(err) {
			return fmt.Errorf("workload changed since the cycle read it")
		}
		return err
	}
	obj.Status, obj.ResourceVersion = upd.Status, upd.ResourceVersion
	return nil
}

// admit writes one admission, numbered sequence; it returns why it was refused, or "".
func (k *committer) admit(a plan.Admission, bindings []plan.Binding, sequence int64) string {
	t := k.cs.byID[a.Workload]
	if t == nil {
		return "workload not in this cycle's state"
	}
	if k.released[a.Workload] {
		return "an admission check ended its quota reservation"
	}
	st := admittedStatus(t.obj.Status, a, bindings, k.now)
	st.Admission.Sequence = sequence
	st.QuotaReservation = nil // a workload whose checks passed: the admission replaces it
	if err := k.writeStatus(t.obj, st); err != nil {
		return err.Error()
	}
	if k.started != nil {
		k.started(t)
	}
	// Its wait is over. A failed clear is harmless: the records are read only while
	// the workload is pending, and eviction clears them too.
	_ = clearWait(k.ctx, k.c, t.obj)
	k.events.Eventf(t.obj, "Normal", ReasonAdmitted, "admitted by ClusterQueue %s, %d pods placed", a.ClusterQueue, len(st.Admission.Placements))
	k.metrics.admitted(a.ClusterQueue, k.now.Sub(queuedAt(t.obj)))
	return ""
}

// commitWorkers is how many of a plan's Workload writes go out at once. The pass waits
// for them and a gang's Bindings start only once its admission is written, so as many
// are in flight as the binder keeps (bindWindow): with 16, a pass admitting fifty gangs
// spent four round trips in writes where one does.
const commitWorkers = bindWindow

// each runs f(0..n-1) with at most width at once.
func each(n, width int, f func(i int)) {
	sem := make(chan struct{}, width)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			f(i)
		}()
	}
	wg.Wait()
}

// writeIfChanged writes informational status; failures are retried next cycle.
func (k *committer) writeIfChanged(obj *v1alpha1.Workload, st v1alpha1.WorkloadStatus) {
	if sameStatus(obj.Status, st) {
		return
	}
	_ = k.writeStatus(obj, st)
}

// notice marks a victim: the deadline annotation (frameworks checkpoint before it),
// the preemption in its history (disruption budgets) and an event. The eviction itself
// happens once the deadline has passed. A notice with a preemptor is reported to the
// scheduler (Noticed); one without (a drain) is not, as the simulator evicts those at
// once: the victim stays in flight until it is evicted.
func (k *committer) notice(t *tracked, n plan.Notice) error {
	deadline := k.now.Add(n.Grace)
	why := fmt.Sprintf("%s (%s layer)", n.Reason, n.Layer)
	var rec *placement.PreemptionRecord
	if n.By != "" {
		why += " for " + string(n.By)
		r := k.cs.runningByID[n.Workload]
		rec = &placement.PreemptionRecord{Workload: n.Workload, Queue: r.Queue, At: stamp(k.now), GPUMilli: r.GPUMilli}
	}
	if err := annotateWorkload(k.ctx, k.c, t.obj, deadline, why, n.By, rec); err != nil {
		return err
	}
	if rec != nil {
		k.noticed = append(k.noticed, notice{victim: n.Workload, by: n.By, rec: *rec})
	}
	k.events.Eventf(t.obj, "Warning", ReasonPreempted, "preemption notice: evicted after %s: %s", deadline.UTC().Format(time.RFC3339), why)
	return nil
}

// noticeNow is an immediate eviction: a notice whose deadline is now.
func (k *committer) noticeNow(t *tracked, e plan.Eviction) {
	_ = k.notice(t, plan.Notice{Workload: e.Workload, Layer: e.Layer, Reason: e.Reason})
}

// annotateWorkload sets the notice annotations on the Workload object, and adds rec
// (if any) to its preemption history.
func annotateWorkload(ctx context.Context, c client.Client, obj *v1alpha1.Workload, deadline time.Time, why string, by api.WorkloadID, rec *placement.PreemptionRecord) error {
	return patchWorkload(ctx, c, obj, func(wl *v1alpha1.Workload) {
		if wl.Annotations == nil {
			wl.Annotations = map[string]string{}
		}
		wl.Annotations[AnnotationPreemptionNotice] = deadline.UTC().Format(time.RFC3339)
		wl.Annotations[AnnotationPreemptionReason] = why
		if by != "" {
			wl.Annotations[AnnotationPreemptedBy] = string(by)
		}
		if rec != nil {
			wl.Annotations[AnnotationPreemptionHistory] = appendHistory(wl.Annotations[AnnotationPreemptionHistory], *rec)
		}
	})
}

// patchWorkload applies edit to a deep copy of wl, sends the difference as a merge
// patch and, once the server took it, makes wl the server's answer. wl's maps and
// slices are shared with the cache, so they are never edited in place.
func patchWorkload(ctx context.Context, c client.Client, wl *v1alpha1.Workload, edit func(*v1alpha1.Workload)) error {
	upd := wl.DeepCopy()
	edit(upd)
	if err := c.Patch(ctx, upd, client.MergeFrom(wl)); err != nil {
		return err
	}
	*wl = *upd
	return nil
}
