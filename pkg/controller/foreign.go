package controller

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
	corev1 "k8s.io/api/core/v1"
)

// A bound, live pod is charged on its own (foreign: Gantry did not place it, or no
// admission accounts for it any more) unless it sits in its slot of a workload whose
// admission charges it. On a cluster of 100,000 pods nearly every pod is of the second
// kind, so the cache files pods as they change (slottedIn), and a pass looks up each
// workload once instead of every pod: the slotted pods of a workload that charges them
// are skipped whole.

// podClass is how slottedIn files a pod.
type podClass uint8

const (
	// podIdle: not bound, or ended; never charged.
	podIdle podClass = iota
	// podSlotted: bound and live, naming a workload and its slot in it, not deleting:
	// foreign only while that workload's admission does not charge it.
	podSlotted
	// podLoose: any other bound, live pod; looked at every pass.
	podLoose
)

// slottedIn files p, with the workload a slotted pod names.
func slottedIn(p *corev1.Pod) (string, podClass) {
	if p.Spec.NodeName == "" || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
		return "", podIdle
	}
	wl := p.Annotations[AnnotationWorkload]
	if wl == "" || p.DeletionTimestamp != nil || p.Annotations[AnnotationPodSlot] == "" {
		return "", podLoose
	}
	return wl, podSlotted
}

// boundPods are a pass's bound, live pods filed by slottedIn: the loose ones in key
// order, the slotted ones by the workload they name (lists in key order). Shared with
// the cache: read-only.
type boundPods struct {
	loose   []*corev1.Pod
	slotted map[string][]*corev1.Pod
}

// bound are w's bound pods filed: the cache's own filing, or for a world built without
// it, w.pods filed here.
func (w *world) bound() boundPods {
	if w.boundPods != nil {
		return *w.boundPods
	}
	b := boundPods{slotted: map[string][]*corev1.Pod{}}
	for _, p := range w.pods {
		switch wl, class := slottedIn(p); class {
		case podSlotted:
			b.slotted[wl] = append(b.slotted[wl], p)
		case podLoose:
			b.loose = append(b.loose, p)
		}
	}
	return b
}

// foreignPods are bound, live pods Gantry did not place: they use capacity too. Their
// GPUs are picked the way the device plugin would, on the node's free devices, in the
// pods' key order.
func foreignPods(w *world, cs *cycleState) []cluster.Change {
	b := w.bound()
	pods := b.loose
	for wl, list := range b.slotted {
		if t := cs.byID[api.WorkloadID(wl)]; t != nil && t.charges {
			continue // charged through its workload's admission
		}
		if len(pods) == len(b.loose) {
			pods = slices.Clone(b.loose) // the loose list is shared
		}
		pods = append(pods, list...)
	}
	if len(pods) > len(b.loose) {
		slices.SortFunc(pods, func(x, y *corev1.Pod) int { return strings.Compare(podKey(x), podKey(y)) })
	}
	var out []cluster.Change
	for _, p := range pods { // none is charged through an admission: the filing says so
		if t := cs.byID[api.WorkloadID(p.Annotations[AnnotationWorkload])]; t != nil && t.leaving {
			// Evicted, its pods still terminating: it is still leaving, so its preemptor
			// keeps waiting for it and its preemptor's other victims stay held (in the
			// simulator an eviction frees the room at once).
			cs.inFlight[t.model.ID()] = true
		}
		req, err := ResourceVector(PodRequests(&p.Spec), "spec")
		if err != nil {
			cs.warnings = append(cs.warnings, fmt.Sprintf("pod %s/%s: %v", p.Namespace, p.Name, err))
			continue
		}
		ref := cluster.PodRef{Workload: api.WorkloadID("pod:" + p.Namespace + "/" + p.Name), PodSet: "pod"}
		cs.occupants[string(ref.Workload)] = true
		out = append(out, cluster.Change{Op: cluster.OpBind, Pod: cluster.BoundPod{Ref: ref, Node: p.Spec.NodeName, Requests: req}})
	}
	return out
}
