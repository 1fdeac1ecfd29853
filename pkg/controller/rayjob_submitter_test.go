package controller

import (
	"testing"

	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func podLabelled(name string, labels map[string]string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Labels: labels}}
}

// A RayJob's cluster pods bind while KubeRay has not created the submitter yet; the
// submitter's slot is bound once its pod (a batch Job pod) appears. Other kinds wait
// for the whole gang as before.
func TestRayJobSubmitterBindsLater(t *testing.T) {
	pls := []v1alpha1.PodPlacement{{PodSet: "head", Index: 0, Node: "n1"}, {PodSet: "workers", Index: 0, Node: "n2"},
		{PodSet: rayJobPodSetSubmitter, Index: 0, Node: "n1"}}
	head := podLabelled("rj-head", map[string]string{rayNodeTypeLabel: "head", rayGroupLabel: rayHeadGroup})
	worker := podLabelled("rj-worker", map[string]string{rayNodeTypeLabel: "worker", rayGroupLabel: "workers"})
	submitter := podLabelled("rj-submit", map[string]string{batchv1.JobNameLabel: "rj"})

	if got := rayJobPodSet(submitter); got != rayJobPodSetSubmitter {
		t.Fatalf("the submitter Job's pod maps to %q, want %q", got, rayJobPodSetSubmitter)
	}
	if got := rayJobPodSet(head); got != "head" {
		t.Fatalf("the head pod maps to %q", got)
	}

	cluster := []*corev1.Pod{head, worker}
	bs := MatchGang(bindablePlacements("RayJob", pls, cluster, rayJobPodSet), cluster, rayJobPodSet)
	if len(bs) != 2 {
		t.Fatalf("before the submitter exists: %d bindings, want the head and the worker", len(bs))
	}
	if got := MatchGang(bindablePlacements("RayCluster", pls, cluster, rayPodSet), cluster, rayPodSet); len(got) != 0 {
		t.Fatalf("another kind bound %d pods of a gang missing a pod, want none", len(got))
	}

	head.Spec.NodeName, worker.Spec.NodeName = "n1", "n2"
	head.Annotations = map[string]string{AnnotationPodSlot: "head-0"}
	worker.Annotations = map[string]string{AnnotationPodSlot: "workers-0"}
	all := []*corev1.Pod{head, worker, submitter}
	bs = MatchGang(bindablePlacements("RayJob", pls, all, rayJobPodSet), all, rayJobPodSet)
	if len(bs) != 1 || bs[0].pod != submitter || bs[0].slot.PodSet != rayJobPodSetSubmitter {
		t.Fatalf("once the submitter exists: bindings %+v, want the submitter in its slot", bs)
	}
}
