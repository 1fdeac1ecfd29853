package controller

import (
	"context"
	"fmt"
	"strings"

	"github.com/gantry-sched/gantry/pkg/admission"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	"github.com/gantry-sched/gantry/pkg/resources"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
)

// queueCounts are the pending and admitted workloads of one queue.
// queueCounts are a queue's unfinished workloads as Kueue counts them: pending (no
// quota), reserving (quota held: admitted, or reserved while admission checks run) and
// admitted (of the reserving, those admitted).
type queueCounts struct{ pending, reserving, admitted int32 }

// countByQueue counts the unfinished workloads per ClusterQueue and per LocalQueue
// ("namespace/name").
func countByQueue(cs *cycleState) (cqs, lqs map[string]queueCounts) {
	cqs, lqs = map[string]queueCounts{}, map[string]queueCounts{}
	for _, t := range cs.byID {
		if t.model == nil || t.finished() {
			continue
		}
		lq := t.obj.Namespace + "/" + t.obj.Spec.QueueName
		c, l := cqs[t.cq], lqs[lq]
		switch {
		case t.admitted():
			c.admitted++
			l.admitted++
			c.reserving++
			l.reserving++
		case t.reservedWaiting():
			c.reserving++
			l.reserving++
		default:
			c.pending++
			l.pending++
		}
		cqs[t.cq], lqs[lq] = c, l
	}
	return cqs, lqs
}

// CQStatus computes a ClusterQueue's status from the quota state: counts, usage per
// flavor and resource, and a one-line "used/nominal" summary for `kubectl get cq`.
func CQStatus(old v1alpha1.ClusterQueueStatus, cq string, q *admission.Quota, counts queueCounts) v1alpha1.ClusterQueueStatus {
	st := *old.DeepCopy()
	st.PendingWorkloads, st.AdmittedWorkloads = counts.pending, counts.admitted
	st.FlavorsUsage, st.Usage = nil, ""
	spec, ok := q.ClusterQueue(cq)
	if !ok {
		return st
	}
	var summary []string
	for _, rg := range spec.ResourceGroups {
		for _, f := range rg.Flavors {
			fu := v1alpha1.FlavorUsage{Name: f.Name}
			for _, r := range f.Resources {
				used, borrowed := q.Usage(cq, f.Name, r.Name), q.Borrowed(cq, f.Name, r.Name)
				fu.Resources = append(fu.Resources, v1alpha1.ResourceUsage{Name: corev1.ResourceName(r.Name),
					Total: quantity(r.Name, used), Borrowed: quantity(r.Name, borrowed)})
				line := fmt.Sprintf("%s %s %s/%s", f.Name, r.Name, resources.Format(r.Name, used), resources.Format(r.Name, q.Nominal(cq, f.Name, r.Name)))
				if borrowed > 0 {
					line += fmt.Sprintf(" (%s borrowed)", resources.Format(r.Name, borrowed))
				}
				summary = append(summary, line)
			}
			st.FlavorsUsage = append(st.FlavorsUsage, fu)
		}
	}
	st.Usage = strings.Join(summary, ", ")
	return st
}

func quantity(n resources.Name, a resources.Amount) resource.Quantity {
	q, err := resource.ParseQuantity(resources.Format(n, a))
	if err != nil {
		return resource.Quantity{}
	}
	return q
}

// writeQueueStatuses refreshes ClusterQueue and LocalQueue statuses that changed. The
// objects are the cache's: each write goes on a copy.
func (ctl *Controller) writeQueueStatuses(ctx context.Context, cs *cycleState) {
	cqCounts, lqCounts := countByQueue(cs)
	cqs, lqs := ctl.cache.queueObjects()
	for _, cq := range cqs {
		st := CQStatus(cq.Status, cq.Name, cs.quota, cqCounts[cq.Name])
		if !equality.Semantic.DeepEqual(st, cq.Status) {
			upd := cq.DeepCopy()
			upd.Status = st
			_ = ctl.c.Status().Update(ctx, upd)
		}
	}
	for _, lq := range lqs {
		c := lqCounts[lq.Namespace+"/"+lq.Name]
		st := v1alpha1.LocalQueueStatus{PendingWorkloads: c.pending, AdmittedWorkloads: c.admitted}
		if st != lq.Status {
			upd := lq.DeepCopy()
			upd.Status = st
			_ = ctl.c.Status().Update(ctx, upd)
		}
	}
	ctl.writeKueueStatuses(ctx, cs, cqCounts, lqCounts) // kueuecrd_status.go
}
