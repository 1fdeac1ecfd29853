package controller

import (
	"time"

	"slices"
	"sort"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	"github.com/gantry-sched/gantry/pkg/cluster"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// world is what one pass reads: a snapshot of the cache (stateCache.snapshot). Only
// workloads belongs to the pass (it updates them with what it writes); everything else
// is shared with the cache and read-only.
type world struct {
	objs        *api.Objects // queue kinds, validated by the same loader the simulator uses
	nodes       []cluster.Node
	nodeIndex   map[string]int
	nodeGen     uint64              // changes whenever a node changed (stateCache.nodeGen)
	base        *baseSnapshots      // the cache's snapshots of the nodes alone; nil: build one
	workloads   []v1alpha1.Workload // by key; shallow copies, see workloadStore.copies
	pods        []*corev1.Pod       // by key
	podsByOwner map[podOwner][]*corev1.Pod
	boundPods   *boundPods              // pods filed for foreignPods (foreign.go); nil: filed from pods
	priorities  map[string]int32        // WorkloadPriorityClass and PriorityClass values by name
	unhealthy   map[string]map[int]bool // node -> GPU indices the node agent reported unhealthy
	knownNodes  map[string]bool         // every Node the API server has, converted or not
	notReady    map[string]time.Time    // node -> since when it is not Ready
	dra         *draView                // DeviceClasses, claim templates and claims
	provReqs    map[string]provReqEntry // ProvisioningRequests by "namespace/name" (provreq_cache.go)
	warnings    []string
}

// workloadIndex maps "namespace/name" to the pass's Workloads.
func (w *world) workloadIndex() map[string]*v1alpha1.Workload {
	out := make(map[string]*v1alpha1.Workload, len(w.workloads))
	for i := range w.workloads {
		out[wlKey(&w.workloads[i])] = &w.workloads[i]
	}
	return out
}

// workloadLookup finds a Workload by "namespace/name": the caller's own struct (see
// workloadStore.copies), or nil.
type workloadLookup func(key string) *v1alpha1.Workload

// lookupIn looks Workloads up in an index of the pass's own.
func lookupIn(m map[string]*v1alpha1.Workload) workloadLookup {
	return func(key string) *v1alpha1.Workload { return m[key] }
}

// podsOf are the live pods of a workload, by key: those annotated with it, those its
// job's operator labelled with the job's name (bound or not), and its gang's.
func (w *world) podsOf(wl *v1alpha1.Workload) []*corev1.Pod {
	var out []*corev1.Pod
	lists := 0
	for _, o := range podOwnersOf(wl) {
		if len(w.podsByOwner[o]) > 0 {
			lists++
		}
		for _, p := range w.podsByOwner[o] {
			if p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
				out = append(out, p)
			}
		}
	}
	if lists < 2 {
		return out // one list: in key order already (podStore)
	}
	// A pod found under two owners (annotated and labelled) is listed once. All are in
	// the workload's namespace, so names order them as keys do.
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return slices.Compact(out)
}

// podOwnersOf are the keys a workload's pods are found under in podsByOwner.
func podOwnersOf(wl *v1alpha1.Workload) []podOwner {
	owners := []podOwner{{wl.Namespace, AnnotationWorkload, wlKey(wl)}}
	if o := wl.Spec.Owner; o != nil && o.Name != "" {
		if label, _ := podLabelOf(o.Kind); label != "" {
			owners = append(owners, podOwner{wl.Namespace, label, o.Name})
		}
		owners = append(owners, gangOwner(wl.Namespace, o.Kind, o.Name))
		if o.Kind == "RayJob" {
			// KubeRay's submitter is a batch Job named after the RayJob.
			owners = append(owners, podOwner{wl.Namespace, batchv1.JobNameLabel, o.Name})
		}
	}
	return owners
}

// anyPodBound reports whether a pod of the workload was ever bound: a live one or
// one that has finished already (podsOf leaves those out).
func (w *world) anyPodBound(wl *v1alpha1.Workload) bool {
	for _, o := range podOwnersOf(wl) {
		for _, p := range w.podsByOwner[o] {
			if p.Spec.NodeName != "" {
				return true
			}
		}
	}
	return false
}

func wlKey(w *v1alpha1.Workload) string { return w.Namespace + "/" + w.Name }
