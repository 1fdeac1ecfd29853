package controller

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/internal/testing/k8s"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// minimalJobSetCRD serves jobset.x-k8s.io/v1alpha2 JobSet with an open schema: enough for
// Gantry, which reads JobSets unstructured, without the JobSet controller installed.
func minimalJobSetCRD() *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "jobsets.jobset.x-k8s.io"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "jobset.x-k8s.io", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "jobsets", Singular: "jobset", Kind: "JobSet", ListKind: "JobSetList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1alpha2", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptr.To(true)}}}},
		},
	}
}

// tasWorld is two racks under Kueue's TAS, as in the simulator's scenarios: rack small
// of one 8-GPU node and rack big of three, one flavor on the Topology "dc" and a queue
// for all 32 GPUs. It returns each node's rack.
func (f *fixture) tasWorld(cq string) map[string]string {
	f.t.Helper()
	racks := map[string]string{"small-0": "small", "big-0": "big", "big-1": "big", "big-2": "big"}
	for node, rack := range racks {
		f.create(k8s.MakeNode(node).H100(8).Label(testRack, rack).Obj())
	}
	topo := &v1alpha1.Topology{ObjectMeta: metav1.ObjectMeta{Name: "dc"}, Spec: v1alpha1.TopologySpec{
		Levels: []v1alpha1.TopologyLevel{{NodeLabel: testRack}, {NodeLabel: "kubernetes.io/hostname"}}}}
	f.create(topo)
	f.t.Cleanup(func() { _ = f.c.Delete(context.Background(), topo) }) // cluster-scoped: the fixture's cleanup leaves it
	flavor := k8s.MakeFlavor("h100").Obj()
	flavor.Spec.TopologyName = ptr.To("dc")
	f.create(flavor, k8s.MakeClusterQueue(cq).Quota("h100", "nvidia.com/gpu", "32").Obj(), k8s.MakeLocalQueue("", "lq", cq).Obj())
	return racks
}

// waitPlacedRacks waits until workload name is admitted and returns the racks of its
// planned pods, "podSet@rack" sorted.
func (f *fixture) waitPlacedRacks(name string, racks map[string]string) []string {
	f.t.Helper()
	var got []string
	f.eventually(30*time.Second, name+" admitted", func() (bool, string) {
		wl := f.workload(name)
		if wl == nil {
			return false, "no workload yet"
		}
		if wl.Status.Admission == nil {
			return false, string(wl.Status.State) + " " + wl.Status.Reason + ": " + wl.Status.Message
		}
		got = got[:0]
		for _, p := range wl.Status.Admission.Placements {
			got = append(got, p.PodSet+"@"+racks[p.Node])
		}
		return true, ""
	})
	sort.Strings(got)
	return got
}

// TestTopoPodSetGroupOnCluster: a JobSet's leader and workers in one podset-group-name
// land in one rack on a real API server: the Workload object keeps the group (and the
// required level), and the admission puts all three pods in the rack of three nodes,
// though the leader alone would best-fit the rack of one.
func TestTopoPodSetGroupOnCluster(t *testing.T) {
	f := newFixture(t)
	if err := testEnv.CreateCRDs(f.ctx, minimalJobSetCRD()); err != nil {
		t.Fatal(err)
	}
	racks := f.tasWorld("tas-group-cq")
	grouped := map[string]any{api.AnnotationRequiredTopology: testRack, api.AnnotationPodSetGroupName: "g"}
	js := jobSetObj(f.ns, groupedJob("leader", 1, grouped), groupedJob("workers", 2, grouped))
	js.Object["spec"].(map[string]any)["suspend"] = true
	if err := f.c.Create(f.ctx, js); err != nil {
		t.Fatal(err)
	}
	f.startController()

	got := f.waitPlacedRacks(WorkloadNameFor("JobSet", "js"), racks)
	if want := []string{"leader@big", "workers@big", "workers@big"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("placements %v, want %v (one rack for the group)", got, want)
	}
	wl := f.workload(WorkloadNameFor("JobSet", "js"))
	for _, ps := range wl.Spec.PodSets {
		tr := ps.TopologyRequest
		if tr == nil || ptr.Deref(tr.PodSetGroupName, "") != "g" || ptr.Deref(tr.Required, "") != testRack {
			t.Errorf("pod set %s topology request %+v: want required %s in group g", ps.Name, tr, testRack)
		}
	}
}

// groupedJob is a replicated job of parallelism whole-node (8-GPU) pods whose template
// carries the given annotations.
func groupedJob(name string, parallelism int64, ann map[string]any) map[string]any {
	rj := replicatedJob(name, 1, parallelism, "8")
	tmpl := rj["template"].(map[string]any)["spec"].(map[string]any)["template"].(map[string]any)
	tmpl["metadata"] = map[string]any{"annotations": ann}
	return rj
}

// TestTopoUnconstrainedJobOnCluster: a Job with podset-unconstrained-topology keeps it
// through the Workload object (Kueue's field unconstrained: true, read back as the
// Unconstrained mode) and is admitted across both racks, which no single rack holds.
func TestTopoUnconstrainedJobOnCluster(t *testing.T) {
	f := newFixture(t)
	racks := f.tasWorld("tas-unconstrained-cq")
	job := k8s.MakeJob("", "spread").Queue("lq").Pods(4).GPUs("8").Obj()
	job.Spec.Template.Annotations = map[string]string{api.AnnotationUnconstrainedTopology: "true"}
	f.create(job)
	f.startController()

	got := f.waitPlacedRacks(WorkloadNameForJob("spread"), racks)
	if want := []string{"main@big", "main@big", "main@big", "main@small"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("placements %v, want %v (both racks)", got, want)
	}
	wl := f.workload(WorkloadNameForJob("spread"))
	tr := wl.Spec.PodSets[0].TopologyRequest
	if tr == nil || !ptr.Deref(tr.Unconstrained, false) || tr.Required != nil || tr.Preferred != nil {
		t.Fatalf("topology request on the server %+v, want unconstrained only", tr)
	}
	model, err := ToAPIWorkload(wl, 0)
	if err != nil {
		t.Fatal(err)
	}
	if m := model.PodSets[0].Topology; m == nil || m.Mode != api.TopologyUnconstrained {
		t.Errorf("read back %+v, want mode %s", m, api.TopologyUnconstrained)
	}
	if n := len(f.waitBound("spread", 4)); n != 4 {
		t.Errorf("%d pods bound, want 4", n)
	}
}

// TestTopoCRDRefusesContradictions: the Workload CRD's rules refuse what Kueue's webhook
// refuses in a topology request, and accept Kueue's fields used as Kueue allows.
func TestTopoCRDRefusesContradictions(t *testing.T) {
	f := newFixture(t)
	layers := []v1alpha1.PodsetSliceRequiredTopologyConstraint{{Topology: testRack, Size: 4}, {Topology: "kubernetes.io/hostname", Size: 2}}
	for _, tc := range []struct {
		name string
		tr   v1alpha1.PodSetTopologyRequest
		want string // "" when the server accepts it
	}{
		{name: "ok-layers", tr: v1alpha1.PodSetTopologyRequest{Required: ptr.To("block"), PodsetSliceRequiredTopologyConstraints: layers}},
		{name: "ok-group", tr: v1alpha1.PodSetTopologyRequest{Preferred: ptr.To(testRack), PodSetGroupName: ptr.To("g")}},
		{name: "required-and-unconstrained", tr: v1alpha1.PodSetTopologyRequest{Required: ptr.To(testRack), Unconstrained: ptr.To(true)},
			want: "set at most one of required, preferred and unconstrained"},
		{name: "layers-and-slice", tr: v1alpha1.PodSetTopologyRequest{PodSetSliceRequiredTopology: ptr.To(testRack), PodSetSliceSize: ptr.To(int32(2)),
			PodsetSliceRequiredTopologyConstraints: layers}, want: "excludes podSetSliceRequiredTopology"},
		{name: "group-unconstrained", tr: v1alpha1.PodSetTopologyRequest{Unconstrained: ptr.To(true), PodSetGroupName: ptr.To("g")},
			want: "podSetGroupName needs required or preferred"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := tc.tr
			wl := &v1alpha1.Workload{ObjectMeta: metav1.ObjectMeta{Name: tc.name, Namespace: f.ns},
				Spec: v1alpha1.WorkloadSpec{QueueName: "lq", PodSets: []v1alpha1.PodSet{{Name: "main", Count: 8, TopologyRequest: &tr}}}}
			err := f.c.Create(f.ctx, wl)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("err = %v, want one saying %q", err, tc.want)
			}
		})
	}
}
