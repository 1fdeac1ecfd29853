package controller

import (
	"context"
	"os"
	"sort"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/internal/testing/k8s"
	"github.com/gantry-sched/gantry/pkg/api"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// hyperNodeCRD is the minimal HyperNode CRD of testdata.
func hyperNodeCRD(t *testing.T) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	data, err := os.ReadFile("testdata/hypernode-crd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(data, crd); err != nil {
		t.Fatalf("testdata/hypernode-crd.yaml: %v", err)
	}
	return crd
}

// hyperNodeObj is a HyperNode of tier whose members are the named nodes, or (tier > 1)
// the named HyperNodes.
func hyperNodeObj(name string, tier int64, members ...string) *unstructured.Unstructured {
	typ := "Node"
	if tier > 1 {
		typ = "HyperNode"
	}
	var ms []any
	for _, m := range members {
		ms = append(ms, map[string]any{"type": typ, "selector": map[string]any{"exactMatch": map[string]any{"name": m}}})
	}
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"tier": tier, "members": ms}}}
	u.SetGroupVersionKind(hyperNodeKind())
	u.SetName(name)
	return u
}

// TestHyperNodeTiersOnCluster: HyperNodes created on a running cluster label the
// controller's nodes with their tiers, so a Job whose pods must share one tier-1
// HyperNode (a required topology on its label) is admitted once they exist, inside the
// HyperNode that holds two nodes; before, no node had the level and it waited.
func TestHyperNodeTiersOnCluster(t *testing.T) {
	f := newFixture(t)
	if err := testEnv.CreateCRDs(f.ctx, hyperNodeCRD(t)); err != nil {
		t.Fatal(err)
	}
	f.create(k8s.MakeNode("hnt-a0").H100(8).Obj(), k8s.MakeNode("hnt-b0").H100(8).Obj(), k8s.MakeNode("hnt-b1").H100(8).Obj(),
		k8s.MakeFlavor("h100").Obj(), k8s.MakeClusterQueue("hnt-cq").Quota("h100", "nvidia.com/gpu", "24").Obj(),
		k8s.MakeLocalQueue("", "lq", "hnt-cq").Obj())
	job := k8s.MakeJob("", "train").Queue("lq").Pods(2).GPUs("8").Obj()
	job.Spec.Template.Annotations = map[string]string{api.AnnotationRequiredTopology: api.HyperNodeTierLabel(1)}
	f.create(job)
	f.startController() // the shipped role lists HyperNodes
	f.eventually(30*time.Second, "train waits: no node has the tier label yet", func() (bool, string) {
		wl := f.workload(WorkloadNameForJob("train"))
		if wl == nil {
			return false, "no workload yet"
		}
		return wl.Status.Admission == nil && wl.Status.Layer == "placement", wl.Status.Reason + ": " + wl.Status.Message
	})

	hns := []*unstructured.Unstructured{hyperNodeObj("hnt-ra", 1, "hnt-a0"), hyperNodeObj("hnt-rb", 1, "hnt-b0", "hnt-b1"), hyperNodeObj("hnt-spine", 2, "hnt-ra", "hnt-rb")}
	for _, h := range hns {
		if err := f.c.Create(f.ctx, h); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { // cluster-scoped: the fixture's cleanup leaves them
		for _, h := range hns {
			_ = f.c.Delete(context.Background(), h)
		}
	})
	var nodes []string
	f.eventually(30*time.Second, "train admitted", func() (bool, string) {
		wl := f.workload(WorkloadNameForJob("train"))
		if wl.Status.Admission == nil {
			return false, wl.Status.Reason + ": " + wl.Status.Message
		}
		nodes = nodes[:0]
		for _, p := range wl.Status.Admission.Placements {
			nodes = append(nodes, p.Node)
		}
		return true, ""
	})
	sort.Strings(nodes)
	if len(nodes) != 2 || nodes[0] != "hnt-b0" || nodes[1] != "hnt-b1" {
		t.Errorf("train placed on %v, want [hnt-b0 hnt-b1] (one tier-1 HyperNode)", nodes)
	}
}
