package controller

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

func TestPodClaimsAnnotationRoundTrip(t *testing.T) {
	sets := []api.PodSet{
		{Name: "driver"},
		{Name: "workers", Claims: []api.PodClaim{
			{Name: "gpu", ResourceClaimTemplateName: "two-gpus", Containers: []string{"main"}, Field: "spec.template.spec.resourceClaims[0]"},
			{Name: "shared", ResourceClaimName: "dataset-gpu"},
		}},
	}
	wl := &v1alpha1.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "w"}}
	if err := withPodClaims(wl, sets); err != nil {
		t.Fatal(err)
	}
	back := &api.Workload{PodSets: []api.PodSet{{Name: "driver"}, {Name: "workers"}}}
	if err := podClaimsOf(wl, back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.PodSets, sets) {
		t.Errorf("round trip: got %+v, want %+v", back.PodSets, sets)
	}
	none := &v1alpha1.Workload{}
	if err := withPodClaims(none, []api.PodSet{{Name: "main"}}); err != nil || none.Annotations != nil {
		t.Errorf("no claims: annotations %v, err %v", none.Annotations, err)
	}
}

func TestPodClaimsAnnotationErrors(t *testing.T) {
	for _, tc := range []struct{ name, value, want string }{
		{"not json", "{", "metadata.annotations[gantry.dev/pod-claims]"},
		{"unknown field", `[{"podSet":"main","claims":[{"name":"gpu","size":3}]}]`, "unknown field"},
		{"unknown pod set", `[{"podSet":"other","claims":[{"name":"gpu"}]}]`, `pod set "other": no such pod set`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wl := &v1alpha1.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "w",
				Annotations: map[string]string{AnnotationPodClaims: tc.value}}}
			err := podClaimsOf(wl, &api.Workload{PodSets: []api.PodSet{{Name: "main"}}})
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "workload ns/w") {
				t.Errorf("error %v, want one naming workload ns/w and %q", err, tc.want)
			}
		})
	}
}

func testPod(name string, claims ...corev1.PodResourceClaim) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID(name + "-uid")},
		Spec: corev1.PodSpec{ResourceClaims: claims, SchedulerName: SchedulerName}}
}

func testClaim(name string, owner *corev1.Pod) *resourcev1.ResourceClaim {
	c := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
	if owner != nil {
		c.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: owner.Name, UID: owner.UID, Controller: ptr.To(true)}}
	}
	return c
}

func TestClaimsOfPod(t *testing.T) {
	fromTemplate := corev1.PodResourceClaim{Name: "gpu", ResourceClaimTemplateName: ptr.To("t")}
	shared := corev1.PodResourceClaim{Name: "data", ResourceClaimName: ptr.To("dataset")}
	pod := testPod("p", fromTemplate, shared)
	created := pod.DeepCopy()
	created.Status.ResourceClaimStatuses = []corev1.PodResourceClaimStatus{{Name: "gpu", ResourceClaimName: ptr.To("p-gpu-x")}}
	skipped := pod.DeepCopy()
	skipped.Status.ResourceClaimStatuses = []corev1.PodResourceClaimStatus{{Name: "gpu"}} // intentionally not created
	own, other := testClaim("p-gpu-x", created), testClaim("p-gpu-x", testPod("q"))
	data := testClaim("dataset", nil)
	for _, tc := range []struct {
		name    string
		pod     *corev1.Pod
		claims  []*resourcev1.ResourceClaim
		want    []string // "podClaim=key shared"
		wantErr string
	}{
		{"template claim not created", pod, []*resourcev1.ResourceClaim{data}, nil, "not created yet"},
		{"created but not in the cache", created, []*resourcev1.ResourceClaim{data}, nil, "not created yet"},
		{"resolved", created, []*resourcev1.ResourceClaim{own, data}, []string{"gpu=ns/p-gpu-x false", "data=ns/dataset true"}, ""},
		{"claim of another pod", created, []*resourcev1.ResourceClaim{other, data}, nil, "not created for pod"},
		{"not created on purpose", skipped, []*resourcev1.ResourceClaim{data}, []string{"data=ns/dataset true"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := map[string]*resourcev1.ResourceClaim{}
			for _, c := range tc.claims {
				m[objKey(c)] = c
			}
			got, err := claimsOfPod(tc.pod, m)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var s []string
			for _, o := range got {
				s = append(s, o.podClaim+"="+o.key+" "+map[bool]string{true: "true", false: "false"}[o.shared])
			}
			if !reflect.DeepEqual(s, tc.want) {
				t.Errorf("got %v, want %v", s, tc.want)
			}
		})
	}
}

func allocation(node string, devs ...string) resourcev1.AllocationResult {
	a := resourcev1.AllocationResult{NodeSelector: nodeSelectorFor(node)}
	for _, d := range devs {
		a.Devices.Results = append(a.Devices.Results, resourcev1.DeviceRequestAllocationResult{Request: "gpus", Driver: "gpu.nvidia.com", Pool: node, Device: d})
	}
	return a
}

func TestCheckReservable(t *testing.T) {
	pod := testPod("p")
	reserved := func(c *resourcev1.ResourceClaim, uids ...types.UID) *resourcev1.ResourceClaim {
		for _, u := range uids {
			c.Status.ReservedFor = append(c.Status.ReservedFor, resourcev1.ResourceClaimConsumerReference{Resource: "pods", Name: string(u), UID: u})
		}
		return c
	}
	allocated := func(a resourcev1.AllocationResult) *resourcev1.ResourceClaim {
		c := testClaim("c", nil)
		c.Status.Allocation = &a
		return c
	}
	full := allocated(allocation("n1", "gpu-0"))
	for i := 0; i < resourcev1.ResourceClaimReservedForMaxSize; i++ {
		reserved(full, types.UID("other-"+string(rune('a'+i%26))+string(rune('a'+i/26))))
	}
	deleting := testClaim("c", nil)
	deleting.DeletionTimestamp = ptr.To(metav1.Now())
	want := allocation("n1", "gpu-1", "gpu-0")
	for _, tc := range []struct {
		name    string
		claim   *resourcev1.ResourceClaim
		shared  bool
		wantErr string
	}{
		{"free", testClaim("c", nil), false, ""},
		{"same devices in another order", allocated(allocation("n1", "gpu-0", "gpu-1")), false, ""},
		{"other devices", allocated(allocation("n1", "gpu-2", "gpu-3")), false, "allocated to other devices (n1/gpu-2, n1/gpu-3, the slot wants n1/gpu-0, n1/gpu-1)"},
		{"shared, same node", allocated(allocation("n1", "gpu-5")), true, ""},
		{"shared, other node", allocated(allocation("n2", "gpu-0", "gpu-1")), true, "allocated to other devices"},
		{"being deleted", deleting, false, "being deleted"},
		{"reservations full", full, true, "status.reservedFor: full"},
		{"reserved for the pod already", reserved(allocated(want), pod.UID), false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkReservable(pod, tc.claim, claimWrite{claim: tc.claim, shared: tc.shared, allocation: want})
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "ResourceClaim ns/c") {
				t.Fatalf("error %v, want %q naming ResourceClaim ns/c", err, tc.wantErr)
			}
			if strings.Contains(tc.wantErr, "other devices") && !errors.Is(err, errClaimTaken) {
				t.Errorf("error %v is not errClaimTaken", err)
			}
		})
	}
}

func TestStalePods(t *testing.T) {
	admittedPod, evictedPod, boundPod, foreign := testPod("a"), testPod("e"), testPod("b"), testPod("f")
	for _, p := range []*corev1.Pod{admittedPod, evictedPod, boundPod, foreign} {
		p.Spec.ResourceClaims = []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: ptr.To("t")}}
		p.Status.Phase = corev1.PodPending
	}
	admittedPod.Annotations = map[string]string{AnnotationWorkload: "ns/in"}
	boundPod.Spec.NodeName = "n1"
	foreign.Spec.SchedulerName = "default-scheduler"
	in := v1alpha1.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "in"},
		Status: v1alpha1.WorkloadStatus{Admission: &v1alpha1.Admission{ClusterQueue: "cq"}}}
	w := &world{workloads: []v1alpha1.Workload{in}, pods: []*corev1.Pod{admittedPod, evictedPod, boundPod, foreign},
		podsByOwner: map[podOwner][]*corev1.Pod{{"ns", AnnotationWorkload, "ns/in"}: {admittedPod}}}
	stale := stalePods(w)
	if want := map[types.UID]bool{evictedPod.UID: true}; !reflect.DeepEqual(stale, want) {
		t.Fatalf("stale pods %v, want only %s", stale, evictedPod.UID)
	}
}
