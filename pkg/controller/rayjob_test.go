package controller

import (
	"strings"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/internal/testing/k8s"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
)

// minimalCRD serves group/version kind with an open schema: enough for Gantry, which
// reads such kinds through unstructured objects, without their operator installed.
func minimalCRD(group, version, kind string) *apiextensionsv1.CustomResourceDefinition {
	singular := strings.ToLower(kind)
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: singular + "s." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group, Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: singular + "s", Singular: singular, Kind: kind, ListKind: kind + "List"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: version, Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptr.To(true)}}}},
		},
	}
}

// TestRayJobSuspendedUntilAdmittedThenBound: a RayJob is held suspended until its
// embedded cluster (head + 2 GPU workers) is admitted as one gang; the pods KubeRay
// would make (played here) are bound whole; jobDeploymentStatus Complete finishes it.
func TestRayJobSuspendedUntilAdmittedThenBound(t *testing.T) {
	f := newFixture(t)
	if err := testEnv.CreateCRDs(f.ctx, minimalCRD("ray.io", "v1", "RayJob")); err != nil {
		t.Fatal(err)
	}
	f.create(k8s.MakeNode("rj-1").H100(4).Obj(), k8s.MakeFlavor("h100").Obj(),
		k8s.MakeClusterQueue("rj-cq").Quota("h100", "cpu", "8", "nvidia.com/gpu", "4").Obj(), k8s.MakeLocalQueue("", "lq", "rj-cq").Obj())
	f.startController()
	rj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "ray.io/v1", "kind": "RayJob",
		"metadata": map[string]any{"name": "rj", "namespace": f.ns, "labels": map[string]any{"gantry.dev/queue-name": "lq"}},
		"spec": map[string]any{"entrypoint": "python train.py", "rayClusterSpec": map[string]any{
			"headGroupSpec": map[string]any{"template": rayPodTemplate(map[string]any{"cpu": "1"}, nil)},
			"workerGroupSpecs": []any{map[string]any{"groupName": "gpu", "replicas": int64(2),
				"template": rayPodTemplate(nil, map[string]any{"nvidia.com/gpu": "2"})}},
		}},
	}}
	if err := f.c.Create(f.ctx, rj); err != nil {
		t.Fatal(err)
	}
	get := func() *unstructured.Unstructured { return f.object(rj.GroupVersionKind(), "rj") }
	f.waitResumed("RayJob", rj.GroupVersionKind(), "rj", "rayjob-rj", "spec", "suspend")
	gpu := corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("2")}
	names := []string{"rj-head", "rj-gpu-0", "rj-gpu-1"}
	for i, n := range names {
		group, req := "gpu", gpu
		if i == 0 {
			group, req = "headgroup", corev1.ResourceList{"cpu": resource.MustParse("1")}
		}
		p := rayPod(f.ns, n, group, req)
		p.Labels = map[string]string{"ray.io/originated-from-cr-name": "rj", "ray.io/group": group}
		f.create(p)
	}
	f.eventually(20*time.Second, "RayJob pods bound", func() (bool, string) {
		n, desc := f.podsBound(names...)
		return n == 3, desc
	})
	f.assertNoDeviceSharedTwice()
	u := get()
	_ = unstructured.SetNestedField(u.Object, "Complete", "status", "jobDeploymentStatus")
	if err := f.c.Update(f.ctx, u); err != nil {
		t.Fatal(err)
	}
	f.eventually(20*time.Second, "RayJob workload finished", func() (bool, string) {
		wl := f.workload("rayjob-rj")
		return meta.IsStatusConditionTrue(wl.Status.Conditions, v1alpha1.WorkloadFinished), string(wl.Status.State)
	})
}
