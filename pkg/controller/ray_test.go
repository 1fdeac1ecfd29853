package controller

import (
	"strings"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/internal/testing/k8s"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// minimalRayClusterCRD serves ray.io/v1 RayCluster with an open schema: enough for
// Gantry, which reads it through unstructured objects, without KubeRay installed.
func minimalRayClusterCRD() *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "rayclusters.ray.io"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "ray.io", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "rayclusters", Singular: "raycluster", Kind: "RayCluster", ListKind: "RayClusterList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptr.To(true)}}}},
		},
	}
}

func rayPodTemplate(requests map[string]any, limits map[string]any) map[string]any {
	return map[string]any{"spec": map[string]any{"schedulerName": SchedulerName, "containers": []any{map[string]any{
		"name": "ray", "image": "rayproject/ray", "resources": map[string]any{"requests": requests, "limits": limits}}}}}
}

// rayPod is a pod as KubeRay would create it for group of cluster rc.
func rayPod(ns, name, group string, req corev1.ResourceList) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"ray.io/cluster": "rc", "ray.io/group": group}},
		Spec: corev1.PodSpec{SchedulerName: SchedulerName, Containers: []corev1.Container{{Name: "ray", Image: "rayproject/ray",
			Resources: corev1.ResourceRequirements{Limits: req, Requests: req}}}},
	}
}

// TestRayClusterWithMIGWorkersAdmittedAsOneGang: a RayCluster (head + 3 workers of two
// 1g.10gb MIG slices each) becomes one Workload; it is unsuspended on admission, and
// its pods are bound only once all four exist, the workers on distinct MIG instances.
func TestRayClusterWithMIGWorkersAdmittedAsOneGang(t *testing.T) {
	f := newFixture(t)
	if err := testEnv.CreateCRDs(f.ctx, minimalRayClusterCRD()); err != nil {
		t.Fatal(err)
	}
	f.create(k8s.MakeNode("mig-1").A100MIG(1).Obj(), k8s.MakeFlavor("a100").Obj(),
		k8s.MakeClusterQueue("ray-cq").Quota("a100", "cpu", "8", "nvidia.com/mig-1g.10gb", "7").Obj(),
		k8s.MakeLocalQueue("", "lq", "ray-cq").Obj())
	rc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "ray.io/v1", "kind": "RayCluster",
		"metadata": map[string]any{"name": "rc", "namespace": f.ns, "labels": map[string]any{"gantry.dev/queue-name": "lq"}},
		"spec": map[string]any{
			"suspend":       true,
			"headGroupSpec": map[string]any{"template": rayPodTemplate(map[string]any{"cpu": "1"}, nil)},
			"workerGroupSpecs": []any{map[string]any{"groupName": "workers", "replicas": int64(3),
				"template": rayPodTemplate(nil, map[string]any{"nvidia.com/mig-1g.10gb": "2"})}},
		},
	}}
	if err := f.c.Create(f.ctx, rc); err != nil {
		t.Fatal(err)
	}
	f.startController()
	f.eventually(20*time.Second, "RayCluster unsuspended on admission", func() (bool, string) {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(rc.GroupVersionKind())
		if err := f.c.Get(f.ctx, client.ObjectKey{Namespace: f.ns, Name: "rc"}, u); err != nil {
			return false, err.Error()
		}
		s, _, _ := unstructured.NestedBool(u.Object, "spec", "suspend")
		msg := "suspended"
		if wl := f.workload("raycluster-rc"); wl != nil {
			msg += "; workload " + string(wl.Status.State) + ": " + wl.Status.Message
		}
		return !s, msg
	})

	// Play KubeRay: the head and two workers first; the gang is incomplete.
	mig := corev1.ResourceList{"nvidia.com/mig-1g.10gb": resource.MustParse("2")}
	f.create(rayPod(f.ns, "rc-head", "headgroup", corev1.ResourceList{"cpu": resource.MustParse("1")}),
		rayPod(f.ns, "rc-worker-0", "workers", mig), rayPod(f.ns, "rc-worker-1", "workers", mig))
	time.Sleep(700 * time.Millisecond)
	var pods corev1.PodList
	if err := f.c.List(f.ctx, &pods, client.InNamespace(f.ns)); err != nil {
		t.Fatal(err)
	}
	if n := boundCount(pods.Items); n != 0 {
		t.Fatalf("%d pods bound before the gang was complete; want 0", n)
	}
	f.create(rayPod(f.ns, "rc-worker-2", "workers", mig))
	f.eventually(20*time.Second, "all 4 Ray pods bound", func() (bool, string) {
		if err := f.c.List(f.ctx, &pods, client.InNamespace(f.ns)); err != nil {
			return false, err.Error()
		}
		return boundCount(pods.Items) == 4, describePods(pods.Items)
	})
	for _, p := range pods.Items {
		devs := p.Annotations[AnnotationDevices]
		switch {
		case p.Labels["ray.io/group"] == "headgroup" && devs != "":
			t.Errorf("head pod got devices %q; it asked for none", devs)
		case p.Labels["ray.io/group"] == "workers" && (strings.Count(devs, "mig-1g.10gb@") != 2):
			t.Errorf("worker %s devices %q: want 2 MIG 1g.10gb instances", p.Name, devs)
		}
	}
	f.assertNoDeviceSharedTwice()
}
