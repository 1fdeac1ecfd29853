package controller

import (
	"strings"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/internal/testing/k8s"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestRestartLosesAndDuplicatesNothing kills the controller right after it admitted a
// Job (its pods may or may not be bound yet), submits more work while it is down, and
// starts a new one: every pod ends up bound exactly once, no device is given twice,
// and no Workload is duplicated.
func TestRestartLosesAndDuplicatesNothing(t *testing.T) {
	f := newFixture(t)
	f.create(k8s.MakeNode("rs-1").H100(8).Obj(), k8s.MakeFlavor("h100").Obj(),
		k8s.MakeClusterQueue("rs-cq").Quota("h100", "nvidia.com/gpu", "8").Obj(), k8s.MakeLocalQueue("", "lq", "rs-cq").Obj())
	f.startController()
	f.create(k8s.MakeJob("", "first").Queue("lq").Pods(2).GPUs("2").Obj())
	f.eventually(20*time.Second, "first admitted", func() (bool, string) {
		wl := f.workload(WorkloadNameForJob("first"))
		return wl != nil && wl.Status.Admission != nil, "not yet"
	})
	f.stopController() // mid-way: admitted, pods being created or bound
	f.create(k8s.MakeJob("", "second").Queue("lq").Pods(2).GPUs("2").Obj())
	time.Sleep(300 * time.Millisecond)
	f.startController()

	first := f.waitBound("first", 2)
	second := f.waitBound("second", 2)
	f.assertNoDeviceSharedTwice()
	var wls v1alpha1.WorkloadList
	if err := f.c.List(f.ctx, &wls, client.InNamespace(f.ns)); err != nil {
		t.Fatal(err)
	}
	if len(wls.Items) != 2 {
		t.Errorf("%d workloads, want 2 (one per Job)", len(wls.Items))
	}
	for _, p := range append(first, second...) {
		if p.Annotations[AnnotationPodSlot] == "" || p.Annotations[AnnotationWorkload] == "" {
			t.Errorf("pod %s bound without slot/workload annotations: %v", p.Name, p.Annotations)
		}
	}
}

// TestBindingResumesAfterCrashBetweenAnnotateAndBind: a pod that already carries its
// slot annotation (the controller died before the Binding call) is bound into that
// same slot, not given a second one.
func TestBindingResumesAfterCrashBetweenAnnotateAndBind(t *testing.T) {
	placements := []v1alpha1.PodPlacement{
		{PodSet: "main", Index: 0, Node: "n1", Devices: []string{"GPU-0"}},
		{PodSet: "main", Index: 1, Node: "n2", Devices: []string{"GPU-0"}},
	}
	annotated := pod("a", "", map[string]string{AnnotationPodSlot: "main-1"})
	fresh := pod("b", "", nil)
	got := MatchGang(placements, []*corev1.Pod{annotated, fresh}, podSetOfJob)
	if len(got) != 2 {
		t.Fatalf("MatchGang gave %d bindings, want 2", len(got))
	}
	for _, b := range got {
		if b.pod.Name == "a" && slotName(b.slot) != "main-1" {
			t.Errorf("annotated pod a moved to slot %s, want main-1", slotName(b.slot))
		}
		if b.pod.Name == "b" && slotName(b.slot) != "main-0" {
			t.Errorf("pod b got slot %s, want the free main-0", slotName(b.slot))
		}
	}
}

// TestInvalidObjectsRejectedByValidation: the CRDs' OpenAPI and CEL rules refuse bad
// objects with messages that name the field and the reason.
func TestInvalidObjectsRejectedByValidation(t *testing.T) {
	f := newFixture(t)
	cases := []struct {
		name string
		obj  client.Object
		// want are substrings the API server's error must contain.
		want []string
	}{{
		name: "minCount above count",
		obj: &v1alpha1.Workload{ObjectMeta: metav1.ObjectMeta{Name: "bad-min"}, Spec: v1alpha1.WorkloadSpec{
			QueueName: "lq", PodSets: []v1alpha1.PodSet{{Name: "main", Count: 2, MinCount: ptr.To[int32](3)}}}},
		want: []string{"spec.podSets[0]", "minCount must not exceed count"},
	}, {
		name: "no pod sets",
		obj:  &v1alpha1.Workload{ObjectMeta: metav1.ObjectMeta{Name: "no-podsets"}, Spec: v1alpha1.WorkloadSpec{QueueName: "lq"}},
		want: []string{"spec.podSets"},
	}, {
		name: "zero pods",
		obj: &v1alpha1.Workload{ObjectMeta: metav1.ObjectMeta{Name: "zero"}, Spec: v1alpha1.WorkloadSpec{
			QueueName: "lq", PodSets: []v1alpha1.PodSet{{Name: "main", Count: 0}}}},
		want: []string{"spec.podSets[0].count", "should be greater than or equal to 1"},
	}, {
		name: "unknown queueing strategy",
		obj: &v1alpha1.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: "bad-strategy"},
			Spec: v1alpha1.ClusterQueueSpec{QueueingStrategy: "Random"}},
		want: []string{"spec.queueingStrategy", `Unsupported value: "Random"`, "StrictFIFO"},
	}, {
		name: "local queue without cluster queue",
		obj:  &v1alpha1.LocalQueue{ObjectMeta: metav1.ObjectMeta{Name: "no-cq"}, Spec: v1alpha1.LocalQueueSpec{ClusterQueue: ""}},
		want: []string{"spec.clusterQueue", "at least 1 chars long"},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if isNamespaced(tc.obj) {
				tc.obj.SetNamespace(f.ns)
			}
			err := f.c.Create(f.ctx, tc.obj)
			if err == nil {
				t.Fatalf("created %s; want a validation error", tc.obj.GetName())
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func pod(name, node string, ann map[string]string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: ann}, Spec: corev1.PodSpec{NodeName: node, SchedulerName: SchedulerName}}
}
