package controller

import (
	"context"
	"strings"

	"github.com/gantry-sched/gantry/pkg/api"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// jobKind describes one job kind Gantry queues: where it keeps its suspend switch,
// how its pods are labelled and tell their pod set, and when it is finished. How its
// replica groups become pod sets is not here: manifest.WorkloadOfObject, the reader the
// simulator's loader uses for the same kind, converts every object (kindsync.go), so a
// job is the same gang in both. Jobs are handled typed; the others through unstructured
// objects, so Gantry needs none of their Go modules and skips a kind whose CRD is not
// installed.
type jobKind struct {
	GVK schema.GroupVersionKind
	// SuspendPath is the boolean field that holds the job's pods back.
	SuspendPath []string
	// PodLabel is the label its operator puts on every pod, valued with the job name.
	PodLabel string
	// PodSetOf names the pod set a pod belongs to ("" when it cannot be told), by the
	// names the shared reader gives the pod sets.
	PodSetOf func(p *corev1.Pod) string
	// Finished reads the terminal state from the object's status.
	Finished func(u *unstructured.Unstructured) (done, failed bool)
	// Unqueued, when set, tells an object of the kind that Kueue does not queue (a
	// RayJob on an existing cluster): Gantry leaves it alone, as the loader skips it.
	Unqueued func(u *unstructured.Unstructured) bool
	// Convert, when set, replaces manifest.WorkloadOfObject for a kind whose pods are
	// described partly by other objects (a TrainJob's runtime), which it reads from r. A
	// *relatedMissingError says one of them is not there (yet).
	Convert func(ctx context.Context, r client.Reader, obj map[string]any) (*api.Workload, error)
	// Related are the kinds Convert reads: watched beside the kind, so a change to one
	// of them wakes a pass.
	Related []schema.GroupVersionKind
}

// jobKinds lists the kinds handled through unstructured objects.
func jobKinds() []jobKind {
	return append([]jobKind{
		{
			GVK:         schema.GroupVersionKind{Group: "ray.io", Version: "v1", Kind: "RayCluster"},
			SuspendPath: []string{"spec", "suspend"}, PodLabel: "ray.io/cluster",
			PodSetOf: rayPodSet,
			Finished: func(*unstructured.Unstructured) (bool, bool) { return false, false },
		},
		{
			// KubeRay labels the pods of a RayJob's cluster with the RayJob's name; its
			// submitter is a batch Job of the RayJob's name (world.podsOf).
			GVK:         schema.GroupVersionKind{Group: "ray.io", Version: "v1", Kind: "RayJob"},
			SuspendPath: []string{"spec", "suspend"}, PodLabel: "ray.io/originated-from-cr-name",
			PodSetOf: rayJobPodSet,
			Finished: rayJobFinished,
			Unqueued: rayJobOnExistingCluster,
		},
		{
			GVK:         schema.GroupVersionKind{Group: "jobset.x-k8s.io", Version: "v1alpha2", Kind: "JobSet"},
			SuspendPath: []string{"spec", "suspend"}, PodLabel: jobSetNameLabel,
			PodSetOf: jobSetPodSet,
			Finished: conditionFinished("Completed", "Failed"),
		},
		trainJobKind(), // trainjob.go
		{
			GVK:         schema.GroupVersionKind{Group: "kubeflow.org", Version: "v1", Kind: "PyTorchJob"},
			SuspendPath: []string{"spec", "runPolicy", "suspend"}, PodLabel: "training.kubeflow.org/job-name",
			PodSetOf: kubeflowPodSet,
			Finished: conditionFinished("Succeeded", "Failed"),
		},
		{
			GVK:         schema.GroupVersionKind{Group: "kubeflow.org", Version: "v2beta1", Kind: "MPIJob"},
			SuspendPath: []string{"spec", "runPolicy", "suspend"}, PodLabel: "training.kubeflow.org/job-name",
			PodSetOf: kubeflowPodSet,
			Finished: conditionFinished("Succeeded", "Failed"),
		},
	}, kubeflowV1Kinds()...)
}

// JobSet's pod labels, which Kubeflow Trainer's JobSets (named after their TrainJob)
// carry too.
const (
	jobSetNameLabel          = "jobset.sigs.k8s.io/jobset-name"
	jobSetReplicatedJobLabel = "jobset.sigs.k8s.io/replicatedjob-name"
)

// jobSetPodSet: the shared reader names a JobSet's pod sets after its replicated jobs.
func jobSetPodSet(p *corev1.Pod) string { return p.Labels[jobSetReplicatedJobLabel] }

// jobKindOf is the unstructured job kind of an owner's apiVersion and kind (the
// training-operator's and the MPI operator's MPIJob share a kind name).
func jobKindOf(apiVersion, kind string) (jobKind, bool) {
	for _, k := range jobKinds() {
		if k.GVK.Kind == kind && k.GVK.GroupVersion().String() == apiVersion {
			return k, true
		}
	}
	return jobKind{}, false
}

// podSetOfJob: a Job has one pod set.
func podSetOfJob(*corev1.Pod) string { return "main" }

// kubeflowPodSet: the shared reader names a Kubeflow pod set by its lower-cased replica
// type ("master", "worker", "launcher"), as the operator's replica-type label does.
func kubeflowPodSet(p *corev1.Pod) string {
	return strings.ToLower(p.Labels["training.kubeflow.org/replica-type"])
}

// KubeRay's pod labels: ray.io/group is "headgroup" on the head and the group name on
// workers; ray.io/node-type says which of the two a pod is.
const (
	rayGroupLabel    = "ray.io/group"
	rayNodeTypeLabel = "ray.io/node-type"
	rayHeadGroup     = "headgroup"
)

// rayPodSet maps a KubeRay pod to the shared reader's pod sets: the head pod set is
// "head" (as Kueue names it), each worker group keeps its name. The node type decides
// where KubeRay set it, so a worker group a user named "headgroup" stays a worker group.
func rayPodSet(p *corev1.Pod) string {
	switch p.Labels[rayNodeTypeLabel] {
	case "head":
		return "head"
	case "worker":
		return p.Labels[rayGroupLabel]
	}
	if g := p.Labels[rayGroupLabel]; g != rayHeadGroup {
		return g
	}
	return "head"
}

// rayJobPodSetSubmitter is the shared reader's pod set of a RayJob's submitter pod.
const rayJobPodSetSubmitter = "submitter"

// rayJobPodSet is rayPodSet for a RayJob's pods, where a pod of the submitter Job (a
// batch Job's pod without KubeRay's node labels) is the submitter pod set.
func rayJobPodSet(p *corev1.Pod) string {
	if p.Labels[rayGroupLabel] == "" && p.Labels[rayNodeTypeLabel] == "" && p.Labels[batchv1.JobNameLabel] != "" {
		return rayJobPodSetSubmitter
	}
	return rayPodSet(p)
}

// podLabelOf returns the pod label and pod-set function of an owner kind.
func podLabelOf(kind string) (string, func(*corev1.Pod) string) {
	if kind == "Job" {
		return batchv1.JobNameLabel, podSetOfJob
	}
	if kind == KindPodGang || kind == KindPodGroup {
		return "", noPodSet // found by gang; asked for every plain-pod gang every pass, so the kinds are not walked
	}
	if isServingKind(kind) {
		return "", servingPodSet // found by gang (servingGangOf), not by a label
	}
	for _, k := range jobKinds() {
		if k.GVK.Kind == kind {
			return k.PodLabel, k.PodSetOf
		}
	}
	return "", noPodSet
}

// noPodSet is the pod set of a pod whose kind names none: "" fits any slot.
func noPodSet(*corev1.Pod) string { return "" }

// conditionFinished reads status.conditions for a true success or failure type.
func conditionFinished(success, failure string) func(u *unstructured.Unstructured) (bool, bool) {
	return func(u *unstructured.Unstructured) (bool, bool) {
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		for _, c := range conds {
			cm, _ := c.(map[string]any)
			if cm["status"] != "True" {
				continue
			}
			switch cm["type"] {
			case success:
				return true, false
			case failure:
				return true, true
			}
		}
		return false, false
	}
}
