package controller

import (
	"sort"

	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	corev1 "k8s.io/api/core/v1"
)

// statefulSetBindable is the placements a StatefulSet's pods can take now. Under the
// default podManagementPolicy (OrderedReady) its controller creates the next pod only
// once the last one runs, so a gang bound only when whole would never start. Its
// Workload is admitted whole (every slot reserved), and its pods are bound as they
// appear, as Kueue's pod-group fast admission lets them run: the slots its pods hold,
// and as many free slots as it has unbound pods. A StatefulSet has one pod set, so any
// free slot fits any pod.
func statefulSetBindable(pls []v1alpha1.PodPlacement, mine []*corev1.Pod) []v1alpha1.PodPlacement {
	slots := make(map[string]bool, len(pls))
	for _, pl := range pls {
		slots[slotName(pl)] = true
	}
	held, loose := map[string]bool{}, 0
	for _, p := range mine {
		if s := p.Annotations[AnnotationPodSlot]; slots[s] {
			held[s] = true
			continue
		}
		if p.Spec.NodeName == "" {
			loose++
		}
	}
	sorted := append([]v1alpha1.PodPlacement(nil), pls...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Index < sorted[j].Index })
	out := make([]v1alpha1.PodPlacement, 0, len(pls))
	for _, pl := range sorted {
		switch {
		case held[slotName(pl)]:
			out = append(out, pl)
		case loose > 0:
			out = append(out, pl)
			loose--
		}
	}
	return out
}
