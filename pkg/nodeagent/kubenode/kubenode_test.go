package kubenode

import (
	"context"
	"testing"
	"time"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/internal/testing/k8s"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/nodeagent"
	"github.com/gantry-sched/gantry/pkg/nodeagent/migprotocol"
	"github.com/gantry-sched/gantry/pkg/resources"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
)

func newNode(objs ...runtime.Object) *Node {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}
	return &Node{Client: fake.NewClientset(append([]runtime.Object{node}, objs...)...), Name: "n1", Now: gt.Epoch}
}

func TestNodeWrites(t *testing.T) {
	n := newNode()
	ctx := context.Background()
	if err := n.SetLabels(ctx, map[string]string{"nvidia.com/gpu.count": "8"}); err != nil {
		t.Fatal(err)
	}
	if err := n.SetMIGStatus(ctx, migprotocol.Status{Config: "all-1g.5gb", State: migprotocol.Pending, Detail: "2 GPU pods still run on the node"}); err != nil {
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
	if v := got.Labels[migprotocol.LabelConfigState]; v != "pending" {
		t.Errorf("MIG state label %q, want pending", v)
	}
	if v := got.Annotations[migprotocol.AnnotationState]; v != "pending all-1g.5gb: 2 GPU pods still run on the node" {
		t.Errorf("MIG state annotation %q", v)
	}
	if v := got.Annotations[devices.AnnotationUnhealthyDevices]; v != "GPU-3,GPU-4" {
		t.Errorf("unhealthy annotation %q", v)
	}
	if len(got.Status.Conditions) != 1 || got.Status.Conditions[0].Type != migprotocol.ConditionLayout ||
		got.Status.Conditions[0].Status != corev1.ConditionFalse || got.Status.Conditions[0].Reason != "MIGPending" {
		t.Errorf("conditions %+v", got.Status.Conditions)
	}
	if err := n.SetUnhealthyDevices(ctx, nil); err != nil {
		t.Fatal(err)
	}
	got, _ = n.Client.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{})
	if v, ok := got.Annotations[devices.AnnotationUnhealthyDevices]; ok {
		t.Errorf("unhealthy annotation %q kept after all devices recovered", v)
	}
	if err := n.SetReplicatedDevices(ctx, devices.ReplicatedDevices{"nvidia.com/gpu": {"6", "1"}}); err != nil {
		t.Fatal(err)
	}
	got, _ = n.Client.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{})
	if v := got.Annotations[devices.AnnotationReplicatedDevices]; v != "nvidia.com/gpu=1,6" {
		t.Errorf("replicated-devices annotation %q, want nvidia.com/gpu=1,6", v)
	}
	if err := n.SetReplicatedDevices(ctx, nil); err != nil {
		t.Fatal(err)
	}
	got, _ = n.Client.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{})
	if v, ok := got.Annotations[devices.AnnotationReplicatedDevices]; ok {
		t.Errorf("replicated-devices annotation %q kept with nothing replicated", v)
	}
}

func TestGPUPods(t *testing.T) {
	n := newNode(
		k8s.MakePod("ml", "a").On("n1").GPUs("1").Phase(corev1.PodRunning).Obj(),
		k8s.MakePod("ml", "b").On("n1").Resource("nvidia.com/mig-1g.5gb", "1").Obj(),
		k8s.MakePod("ml", "done").On("n1").GPUs("1").Phase(corev1.PodSucceeded).Obj(),
		k8s.MakePod("ml", "cpu").On("n1").Phase(corev1.PodRunning).Obj(),
		k8s.MakePod("ml", "elsewhere").On("n2").GPUs("1").Phase(corev1.PodRunning).Obj(),
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
			k8s.MakePod("ml", "a").On("n1").GPUs("2").Annotate(nodeagent.AnnotationDevices, "GPU-0,GPU-1").Obj(),
		}, nil, "a"},
		{"oldest first", []runtime.Object{
			k8s.MakePod("ml", "young").On("n1").GPUs("1").Age(time.Minute).Obj(),
			k8s.MakePod("ml", "old").On("n1").GPUs("1").Age(time.Hour).Obj(),
		}, nil, "old"},
		{"skips pods the kubelet already served", []runtime.Object{
			k8s.MakePod("ml", "served").On("n1").GPUs("1").Age(time.Hour).Obj(),
			k8s.MakePod("ml", "next").On("n1").GPUs("1").Obj(),
		}, fixedAllocated{"ml/served": 1}, "next"},
		{"skips other resources, running pods and other nodes", []runtime.Object{
			k8s.MakePod("ml", "mig").On("n1").Resource("nvidia.com/mig-1g.5gb", "1").Obj(),
			k8s.MakePod("ml", "running").On("n1").GPUs("1").Phase(corev1.PodRunning).Obj(),
			k8s.MakePod("ml", "far").On("n2").GPUs("1").Obj(),
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
