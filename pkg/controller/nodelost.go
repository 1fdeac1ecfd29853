package controller

import (
	"context"
	"fmt"
	"time"

	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
)

// A node that goes away takes the gangs on it with it: their pods are dead or about to
// be, and a gang with a dead member cannot make progress. Gantry requeues such a gang
// whole, at once, through the eviction path (the Job is suspended, so its pods' deaths
// do not count against backoffLimit, and resumed when admitted again), and never binds
// a pod into a slot on such a node. A node is lost when it was deleted, when it stayed
// NotReady past Options.NodeLostAfter, or when it carries a NoExecute taint the pods do
// not tolerate (the not-ready and unreachable taints the node lifecycle controller adds
// follow the NotReady rule instead: pods tolerate them for five minutes by default).

// defaultNodeLostAfter is Kubernetes' default tolerationSeconds for not-ready and
// unreachable nodes.
const defaultNodeLostAfter = 5 * time.Minute

// lostAfter is the NotReady grace period in force.
func (ctl *Controller) lostAfter() time.Duration {
	if ctl.opts.NodeLostAfter > 0 {
		return ctl.opts.NodeLostAfter
	}
	return defaultNodeLostAfter
}

// nodeLoss says why node is lost for a pod with the given tolerations; "" when it is
// not.
func (ctl *Controller) nodeLoss(w *world, node string, tolerations []corev1.Toleration, now time.Time) string {
	if !w.knownNodes[node] {
		return "node " + node + " was deleted"
	}
	if since, ok := w.notReady[node]; ok {
		if d := now.Sub(since); d >= ctl.lostAfter() {
			return fmt.Sprintf("node %s has not been Ready for %s", node, d.Truncate(time.Second))
		}
	}
	i, ok := w.nodeIndex[node]
	if !ok {
		return "" // known but unreadable to Gantry: not lost, its capacity is just not offered
	}
	for _, t := range w.nodes[i].Taints {
		if t.Effect != corev1.TaintEffectNoExecute || t.Key == corev1.TaintNodeNotReady || t.Key == corev1.TaintNodeUnreachable {
			continue
		}
		if !tolerated(tolerations, &t) {
			return "node " + node + " has the taint " + t.ToString() + ", which its pods do not tolerate"
		}
	}
	return ""
}

func tolerated(tolerations []corev1.Toleration, t *corev1.Taint) bool {
	for i := range tolerations {
		if tolerations[i].ToleratesTaint(t) {
			return true
		}
	}
	return false
}

// onLostNode reports whether an admitted workload has a placement on a lost node, and
// why.
func (ctl *Controller) onLostNode(w *world, wl *v1alpha1.Workload, now time.Time) (string, bool) {
	if wl.Status.Admission == nil {
		return "", false
	}
	for _, p := range wl.Status.Admission.Placements {
		if why := ctl.nodeLoss(w, p.Node, podSetTolerations(wl, p.PodSet), now); why != "" {
			return why, true
		}
	}
	return "", false
}

// podSetTolerations are the tolerations of wl's pod set name (a workload has a few pod
// sets, and this runs for every admitted gang each pass: no map is built for it).
func podSetTolerations(wl *v1alpha1.Workload, name string) []corev1.Toleration {
	for i := range wl.Spec.PodSets {
		if wl.Spec.PodSets[i].Name == name {
			return wl.Spec.PodSets[i].Tolerations
		}
	}
	return nil
}

// evictLost requeues every admitted gang placed on a lost node, with the NodeLost
// reason and a Warning event naming the node.
func (ctl *Controller) evictLost(ctx context.Context, w *world, now time.Time) {
	memo := ctl.notLost.of(w, len(w.workloads))
	for _, wl := range ptrs(w.workloads) {
		if memo.clear(wl) {
			continue
		}
		why, lost := ctl.onLostNode(w, wl, now)
		if !lost {
			memo.note(wl)
		}
		if !lost || meta.IsStatusConditionTrue(wl.Status.Conditions, v1alpha1.WorkloadFinished) {
			ctl.wakeForNotReady(w, wl, now)
			continue
		}
		if err := ctl.evict(ctx, wl, w.podsOf(wl), ReasonNodeLost, why, now); err != nil {
			ctl.retry = true
			ctl.log.Info("eviction not finished, retrying", "workload", wlKey(wl), "reason", err.Error())
		}
	}
}

// wakeForNotReady makes the loop run a pass when a not-ready node under an admitted
// workload reaches its grace period, as a preemption deadline does.
func (ctl *Controller) wakeForNotReady(w *world, wl *v1alpha1.Workload, now time.Time) {
	if wl.Status.Admission == nil {
		return
	}
	for _, p := range wl.Status.Admission.Placements {
		if since, ok := w.notReady[p.Node]; ok {
			due := since.Add(ctl.lostAfter())
			if due.After(now) && (ctl.nextDeadline.IsZero() || due.Before(ctl.nextDeadline)) {
				ctl.nextDeadline = due
			}
		}
	}
}

// lostMemo remembers the Workloads evictLost found on no lost node, by resourceVersion,
// under one node view: with every node Ready, whether a placement sits on a lost node
// depends only on the Workload and the nodes, so a pass looks again only at the
// Workloads that changed (each pass used to check every placement of every admitted
// gang). Any node NotReady turns it off: the grace period runs with the clock.
type lostMemo struct {
	gen uint64
	rv  map[string]string
}

// of is the memo for w's pass (nil, which remembers nothing, while a node is NotReady),
// emptied when the nodes changed or when it holds many more keys than there are
// Workloads (deleted ones).
func (m *lostMemo) of(w *world, workloads int) *lostMemo {
	if len(w.notReady) > 0 {
		return nil
	}
	if m.rv == nil || m.gen != w.nodeGen || len(m.rv) > 2*workloads+1024 {
		m.gen, m.rv = w.nodeGen, map[string]string{}
	}
	return m
}

// clear reports whether wl, as it is now, was found on no lost node.
func (m *lostMemo) clear(wl *v1alpha1.Workload) bool {
	return m != nil && wl.ResourceVersion != "" && m.rv[wlKey(wl)] == wl.ResourceVersion
}

// note remembers that wl, as it is now, is on no lost node.
func (m *lostMemo) note(wl *v1alpha1.Workload) {
	if m != nil && wl.ResourceVersion != "" {
		m.rv[wlKey(wl)] = wl.ResourceVersion
	}
}
