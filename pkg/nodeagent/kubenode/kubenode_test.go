package kubenode

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/gantry-sched/gantry/pkg/nodeagent"
	"github.com/gantry-sched/gantry/pkg/resources"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// podBuilder makes pods fluently: makePod("p").On("n1").GPU("nvidia.com/gpu", 2).Obj().
type podBuilder struct{ p corev1.Pod }

func makePod(name string) *podBuilder {
	return &podBuilder{p: corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: name, UID: k8stypes.UID("uid-" + name), CreationTimestamp: metav1.NewTime(t0)},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main"}}},
		Status:     corev1.PodStatus{Phase: corev1.PodPending},
	}}
}

func (b *podBuilder) On(node string) *podBuilder { b.p.Spec.NodeName = node; return b }
func (b *podBuilder) GPU(name string, n int64) *podBuilder {
	b.p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceName(name): *resource.NewQuantity(n, resource.DecimalSI)}
	return b
}
func (b *podBuilder) Phase(p corev1.PodPhase) *podBuilder { b.p.Status.Phase = p; return b }
func (b *podBuilder) Age(d time.Duration) *podBuilder {
	b.p.CreationTimestamp = metav1.NewTime(t0.Add(-d))
	return b
}
func (b *podBuilder) Devices(ids string) *podBuilder {
	b.p.Annotations = map[string]string{nodeagent.AnnotationDevices: ids}
	return b
}
func (b *podBuilder) Obj() *corev1.Pod { return &b.p }

func newNode(objs ...runtime.Object) *Node {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}
	return &Node{Client: fake.NewClientset(append([]runtime.Object{node}, objs...)...), Name: "n1", Now: func() time.Time { return t0 }}
}

func TestNodeWrites(t *testing.T) {
	n := newNode()
	ctx := context.Background()
	if err := n.SetLabels(ctx, map[string]string{"nvidia.com/gpu.count": "8"}); err != nil {
		t.Fatal(err)
	}
	if err := n.SetMIGStatus(ctx, nodeagent.MIGStatus{Layout: "all-1g.5gb", State: nodeagent.MIGPending, Detail: "2 GPU pods still run on the node"}); err != nil {
		t.Fatal(err)
	}
	if err := n.SetUnhealthyDevices(ctx, []string{"GPU-3", "GPU-4"}); err != nil {
		t.Fatal(err)
	}
	got, err := n.Client.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Labels["nvidia.com/gpu.count"] != "8" {
		t.Errorf("labels %v", got.Labels)
	}
	if v := got.Annotations[nodeagent.AnnotationMIGState]; v != "pending all-1g.5gb: 2 GPU pods still run on the node" {
		t.Errorf("MIG state annotation %q", v)
	}
	if v := got.Annotations[AnnotationUnhealthyDevices]; v != "GPU-3,GPU-4" {
		t.Errorf("unhealthy annotation %q", v)
	}
	if len(got.Status.Conditions) != 1 || got.Status.Conditions[0].Type != nodeagent.ConditionMIGLayout ||
		got.Status.Conditions[0].Status != corev1.ConditionFalse || got.Status.Conditions[0].Reason != "MIGPending" {
		t.Errorf("conditions %+v", got.Status.Conditions)
	}
	if err := n.SetUnhealthyDevices(ctx, nil); err != nil {
		t.Fatal(err)
	}
	got, _ = n.Client.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{})
	if v, ok := got.Annotations[AnnotationUnhealthyDevices]; ok {
		t.Errorf("unhealthy annotation %q kept after all devices recovered", v)
	}
}

func TestGPUPods(t *testing.T) {
	n := newNode(
		makePod("a").On("n1").GPU("nvidia.com/gpu", 1).Phase(corev1.PodRunning).Obj(),
		makePod("b").On("n1").GPU("nvidia.com/mig-1g.5gb", 1).Obj(),
		makePod("done").On("n1").GPU("nvidia.com/gpu", 1).Phase(corev1.PodSucceeded).Obj(),
		makePod("cpu").On("n1").Phase(corev1.PodRunning).Obj(),
		makePod("elsewhere").On("n2").GPU("nvidia.com/gpu", 1).Phase(corev1.PodRunning).Obj(),
	)
	got, err := n.GPUPods(context.Background())
	if err != nil || got != 2 {
		t.Errorf("GPUPods = %d, %v; want 2 (a and b: not finished, GPU, on n1)", got, err)
	}
}

type fixedAllocated map[string]int

func (f fixedAllocated) AllocatedDevices(context.Context, resources.Name) (map[string]int, error) {
	return f, nil
}

func TestPodForAllocate(t *testing.T) {
	tests := []struct {
		name      string
		pods      []runtime.Object
		allocated fixedAllocated
		// want is the pod found ("" for none).
		want string
	}{
		{"the only pending GPU pod", []runtime.Object{
			makePod("a").On("n1").GPU("nvidia.com/gpu", 2).Devices("GPU-0,GPU-1").Obj(),
		}, nil, "a"},
		{"oldest first", []runtime.Object{
			makePod("young").On("n1").GPU("nvidia.com/gpu", 1).Age(time.Minute).Obj(),
			makePod("old").On("n1").GPU("nvidia.com/gpu", 1).Age(time.Hour).Obj(),
		}, nil, "old"},
		{"skips pods the kubelet already served", []runtime.Object{
			makePod("served").On("n1").GPU("nvidia.com/gpu", 1).Age(time.Hour).Obj(),
			makePod("next").On("n1").GPU("nvidia.com/gpu", 1).Obj(),
		}, fixedAllocated{"ml/served": 1}, "next"},
		{"skips other resources, running pods and other nodes", []runtime.Object{
			makePod("mig").On("n1").GPU("nvidia.com/mig-1g.5gb", 1).Obj(),
			makePod("running").On("n1").GPU("nvidia.com/gpu", 1).Phase(corev1.PodRunning).Obj(),
			makePod("far").On("n2").GPU("nvidia.com/gpu", 1).Obj(),
		}, nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := &Lookup{Node: newNode(tc.pods...)}
			if tc.allocated != nil {
				l.Allocated = tc.allocated
			}
			pod, found, err := l.PodForAllocate(context.Background(), resources.NvidiaGPU, []string{"GPU-0"})
			if err != nil {
				t.Fatal(err)
			}
			if got := map[bool]string{true: pod.Name, false: ""}[found]; got != tc.want {
				t.Errorf("found %q, want %q", got, tc.want)
			}
		})
	}
}
