//go:build k8sscale

package kubeenv

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// TestKWOKAndSchedulerRunAPod (make bench-k8s builds what it needs): a Node annotated for
// KWOK becomes Ready with its GPUs allocatable, kube-scheduler binds a one-GPU pod to
// it, and KWOK makes the pod Running; after StopProgram the programs are gone.
func TestKWOKAndSchedulerRunAPod(t *testing.T) {
	e := Require(t, env)
	if err := e.StartKWOK(); err != nil {
		t.Fatal(err)
	}
	if err := e.StartScheduler(SchedulerOptions{QPS: 500, Burst: 500}); err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(e.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	gpu := corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("8"), "pods": resource.MustParse("110"),
		"cpu": resource.MustParse("64"), "memory": resource.MustParse("512Gi")}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "kwok-1", Annotations: map[string]string{KWOKNodeAnnotation: KWOKNodeValue}}}
	node, err = cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.CoreV1().Nodes().Delete(context.Background(), node.Name, metav1.DeleteOptions{})
	node.Status.Capacity, node.Status.Allocatable = gpu, gpu
	if _, err := cs.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "one-gpu", Namespace: "default"}, Spec: corev1.PodSpec{
		Containers: []corev1.Container{{Name: "c", Image: "busybox", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")},
			Limits:   corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}}}},
	}}
	if _, err := cs.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	defer cs.CoreV1().Pods("default").Delete(context.Background(), pod.Name, *metav1.NewDeleteOptions(0))
	for {
		got, err := cs.CoreV1().Pods("default").Get(ctx, pod.Name, metav1.GetOptions{})
		n, nerr := cs.CoreV1().Nodes().Get(ctx, node.Name, metav1.GetOptions{})
		if err == nil && nerr == nil && got.Spec.NodeName == node.Name && got.Status.Phase == corev1.PodRunning && ready(n) {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("pod not bound to %s and Running, or node not Ready: %v %v pod %+v node %+v", node.Name, err, nerr, got.Status, n.Status)
		case <-time.After(100 * time.Millisecond):
		}
	}
	for _, name := range []string{"kube-scheduler", "kwok"} {
		if err := e.StopProgram(name); err != nil {
			t.Error(err)
		}
		if _, p := e.find(name); p != nil {
			t.Errorf("%s still listed after StopProgram", name)
		}
	}
}

func ready(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
