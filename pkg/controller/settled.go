package controller

import (
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	corev1 "k8s.io/api/core/v1"
)

// settledGang is what bindAll read of a gang it found nothing to bind for: the
// Workload's version and, for every owner its pods are found under (podOwnersOf), the
// cache's list of them. The cache copies a list whenever one of its pods changes
// (podStore), so the same list means the same pods, and a gang whose Workload and
// lists are unchanged still has nothing to bind. Node loss needs no key: it only ever
// stops a bind.
type settledGang struct {
	rv    string
	lists []podList
}

// podList identifies one of the cache's pod lists: its first element's address
// (nil when empty) and its length.
type podList struct {
	first **corev1.Pod
	n     int
}

func listOf(pods []*corev1.Pod) podList {
	if len(pods) == 0 {
		return podList{}
	}
	return podList{first: &pods[0], n: len(pods)}
}

func settledOf(w *world, wl *v1alpha1.Workload) settledGang {
	owners := podOwnersOf(wl)
	s := settledGang{rv: wl.ResourceVersion, lists: make([]podList, len(owners))}
	for i, o := range owners {
		s.lists[i] = listOf(w.podsByOwner[o])
	}
	return s
}

// still reports whether wl and its pods are as s read them (a Workload without a
// version never is: nothing would tell its change).
func (s settledGang) still(w *world, wl *v1alpha1.Workload) bool {
	if wl.ResourceVersion == "" || wl.ResourceVersion != s.rv {
		return false
	}
	owners := podOwnersOf(wl)
	if len(owners) != len(s.lists) {
		return false
	}
	for i, o := range owners {
		if listOf(w.podsByOwner[o]) != s.lists[i] {
			return false
		}
	}
	return true
}
