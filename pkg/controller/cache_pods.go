package controller

import (
	"sort"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// podOwner is one way a pod names the workload it belongs to (see podsOf): the
// gantry.dev/workload annotation, a job operator's pod label, or a gang.
type podOwner struct {
	ns   string
	by   string // AnnotationWorkload, a label key, or "gang/<kind>"
	name string // the annotation's or label's value, or the gang's name
}

// podStore keeps Pods by key, indexed by owner and by node. The index lists are
// copied on write, so a snapshot may share them.
type podStore struct {
	all     keyed[*corev1.Pod]
	byOwner map[podOwner][]*corev1.Pod
	byNode  map[string][]*corev1.Pod
	labels  []string // the owner labels of every job kind, computed once
	// slotted and loose are the bound, live pods as foreignPods files them
	// (slottedIn): those in a workload's slot, by the workload they name, and the rest.
	slotted map[string][]*corev1.Pod
	loose   keyed[*corev1.Pod]
}

func newPodStore() podStore {
	labels := []string{batchv1.JobNameLabel}
	for _, k := range jobKinds() {
		labels = append(labels, k.PodLabel)
	}
	return podStore{byOwner: map[podOwner][]*corev1.Pod{}, byNode: map[string][]*corev1.Pod{}, labels: labels,
		slotted: map[string][]*corev1.Pod{}}
}

// put stores p, replacing its previous version in every index. The key stays in
// all (unindex, not del): an update keeps its sorted order, which a snapshot would
// otherwise sort again over every pod after each pod's status change.
func (s *podStore) put(p *corev1.Pod) {
	key := podKey(p)
	s.unindex(key)
	s.all.put(key, p)
	for _, o := range s.ownersOf(p) {
		s.byOwner[o] = withPod(s.byOwner[o], p)
	}
	if p.Spec.NodeName != "" {
		s.byNode[p.Spec.NodeName] = withPod(s.byNode[p.Spec.NodeName], p)
	}
	switch wl, class := slottedIn(p); class {
	case podSlotted:
		s.slotted[wl] = withPod(s.slotted[wl], p)
	case podLoose:
		s.loose.put(key, p)
	}
}

// del forgets the pod under key.
func (s *podStore) del(key string) {
	s.unindex(key)
	s.all.del(key)
}

// unindex takes the pod under key out of the owner and node indices.
func (s *podStore) unindex(key string) {
	old, ok := s.all.get(key)
	if !ok {
		return
	}
	for _, o := range s.ownersOf(old) {
		setOrDelete(s.byOwner, o, withoutPod(s.byOwner[o], key))
	}
	if n := old.Spec.NodeName; n != "" {
		setOrDelete(s.byNode, n, withoutPod(s.byNode[n], key))
	}
	switch wl, class := slottedIn(old); class {
	case podSlotted:
		setOrDelete(s.slotted, wl, withoutPod(s.slotted[wl], key))
	case podLoose:
		s.loose.del(key)
	}
}

// gangOwner is the key a gang's pods are indexed under (podsOf, the gang maker).
func gangOwner(ns, kind, name string) podOwner { return podOwner{ns, "gang/" + kind, name} }

// ownersOf lists the owners p names (podsOf looks a workload up under the same).
func (s *podStore) ownersOf(p *corev1.Pod) []podOwner {
	var out []podOwner
	if w := p.Annotations[AnnotationWorkload]; w != "" {
		out = append(out, podOwner{p.Namespace, AnnotationWorkload, w})
	}
	for _, l := range s.labels {
		if v := p.Labels[l]; v != "" {
			out = append(out, podOwner{p.Namespace, l, v})
		}
	}
	if kind, name := gangOf(p); kind != "" {
		out = append(out, gangOwner(p.Namespace, kind, name))
	}
	return out
}

// withPod returns a new list: list with p added, in key order.
func withPod(list []*corev1.Pod, p *corev1.Pod) []*corev1.Pod {
	key := podKey(p)
	i := sort.Search(len(list), func(i int) bool { return podKey(list[i]) >= key })
	out := make([]*corev1.Pod, 0, len(list)+1)
	out = append(append(append(out, list[:i]...), p), list[i:]...)
	return out
}

// withoutPod returns a new list without the pod under key.
func withoutPod(list []*corev1.Pod, key string) []*corev1.Pod {
	out := make([]*corev1.Pod, 0, len(list))
	for _, p := range list {
		if podKey(p) != key {
			out = append(out, p)
		}
	}
	return out
}

func setOrDelete[K comparable](m map[K][]*corev1.Pod, k K, list []*corev1.Pod) {
	if len(list) == 0 {
		delete(m, k)
		return
	}
	m[k] = list
}

func podKey(p *corev1.Pod) string { return p.Namespace + "/" + p.Name }
