package kubenode

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gantry-sched/gantry/internal/testing/k8s"
	"github.com/gantry-sched/gantry/pkg/dra"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"
)

// allocated is a ResourceClaim in namespace ml allocated one device of driver from pool
// (none: not allocated).
func allocated(name, driver, pool string) *resourcev1.ResourceClaim {
	c := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: name}}
	if driver != "" {
		c.Status.Allocation = &resourcev1.AllocationResult{Devices: resourcev1.DeviceAllocationResult{
			Results: []resourcev1.DeviceRequestAllocationResult{{Request: "gpu", Driver: driver, Pool: pool, Device: "gpu-0"}},
		}}
	}
	return c
}

// withClaim gives pod p a claim: by name, or (template) through a template whose
// generated claim the pod's status names.
func withClaim(p *corev1.Pod, claim string, template bool) *corev1.Pod {
	rc := corev1.PodResourceClaim{Name: "gpu"}
	if template {
		rc.ResourceClaimTemplateName = ptr.To("gpu-template")
		p.Status.ResourceClaimStatuses = append(p.Status.ResourceClaimStatuses,
			corev1.PodResourceClaimStatus{Name: "gpu", ResourceClaimName: ptr.To(claim)})
	} else {
		rc.ResourceClaimName = ptr.To(claim)
	}
	p.Spec.ResourceClaims = append(p.Spec.ResourceClaims, rc)
	return p
}

// TestGPUPodsCountsDRAClaims: a MIG change waits for pods holding this node's GPUs
// through DRA claims as for pods with GPU limits, and only for those.
func TestGPUPodsCountsDRAClaims(t *testing.T) {
	running := func(name string) *corev1.Pod {
		return k8s.MakePod("ml", name).On("n1").Phase(corev1.PodRunning).Obj()
	}
	tests := []struct {
		name string
		objs []runtime.Object
		want int
	}{
		{"claim by name, GPU of this node", []runtime.Object{
			withClaim(running("a"), "c", false), allocated("c", dra.DriverName, "n1"),
		}, 1},
		{"claim from a template, named in the pod's status", []runtime.Object{
			withClaim(running("a"), "a-gpu-x7", true), allocated("a-gpu-x7", dra.DriverName, "n1"),
		}, 1},
		{"two pods sharing one claim", []runtime.Object{
			withClaim(running("a"), "shared", false), withClaim(running("b"), "shared", false),
			allocated("shared", dra.DriverName, "n1"),
		}, 2},
		{"a GPU limit and a claim count once", []runtime.Object{
			withClaim(k8s.MakePod("ml", "a").On("n1").GPUs("1").Phase(corev1.PodRunning).Obj(), "c", false),
			allocated("c", dra.DriverName, "n1"),
		}, 1},
		{"another driver's device", []runtime.Object{
			withClaim(running("a"), "c", false), allocated("c", "net.example.com", "n1"),
		}, 0},
		{"another node's pool", []runtime.Object{
			withClaim(running("a"), "c", false), allocated("c", dra.DriverName, "n2"),
		}, 0},
		{"not allocated", []runtime.Object{
			withClaim(running("a"), "c", false), allocated("c", "", ""),
		}, 0},
		{"claim missing", []runtime.Object{withClaim(running("a"), "gone", false)}, 0},
		{"template claim not created yet", []runtime.Object{
			func() *corev1.Pod {
				p := withClaim(running("a"), "x", true)
				p.Status.ResourceClaimStatuses = nil
				return p
			}(), allocated("x", dra.DriverName, "n1"),
		}, 0},
		{"finished pod", []runtime.Object{
			withClaim(k8s.MakePod("ml", "a").On("n1").Phase(corev1.PodSucceeded).Obj(), "c", false),
			allocated("c", dra.DriverName, "n1"),
		}, 0},
		{"pod on another node", []runtime.Object{
			withClaim(k8s.MakePod("ml", "a").On("n2").Phase(corev1.PodRunning).Obj(), "c", false),
			allocated("c", dra.DriverName, "n1"),
		}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := newNode(tc.objs...).GPUPods(context.Background())
			if err != nil || got != tc.want {
				t.Errorf("GPUPods = %d, %v; want %d", got, err, tc.want)
			}
		})
	}
}

// TestGPUPodsClaimReadError: a claim that cannot be read fails the count (the MIG
// manager then fails the change) rather than counting the pod out.
func TestGPUPodsClaimReadError(t *testing.T) {
	n := newNode(withClaim(k8s.MakePod("ml", "a").On("n1").Phase(corev1.PodRunning).Obj(), "c", false))
	n.Client.(*fake.Clientset).PrependReactor("get", "resourceclaims", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(resourcev1.Resource("resourceclaims"), "c", errors.New("RBAC"))
	})
	_, err := n.GPUPods(context.Background())
	if err == nil || !strings.Contains(err.Error(), "pod ml/a: reading ResourceClaim ml/c") {
		t.Errorf("GPUPods error %v, want one naming the pod and the claim", err)
	}
}
