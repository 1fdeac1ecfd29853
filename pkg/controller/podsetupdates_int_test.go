package controller

import (
	"strings"
	"testing"

	"github.com/gantry-sched/gantry/internal/testing/k8s"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// podSetUpdatesConfig is a config's podSetUpdates: the pool label from the "nodePool"
// detail, the zone label from a "zone" detail the autoscaler does not set.
const podSetUpdatesConfig = `  podSetUpdates:
    nodeSelector:
    - {key: pool.example.com/name, valueFromProvisioningClassDetail: nodePool}
    - {key: topology.kubernetes.io/zone, valueFromProvisioningClassDetail: zone}
`

// provisionWith plays cluster-autoscaler: the request is Provisioned, with these
// provisioning class details.
func (f *fixture) provisionWith(name string, details map[string]string) {
	f.t.Helper()
	pr := f.provRequest(name)
	if pr == nil {
		f.t.Fatalf("ProvisioningRequest %s not found", name)
	}
	cond := map[string]any{"type": provProvisioned, "status": "True", "reason": provProvisioned, "message": "capacity is provisioned",
		"lastTransitionTime": metav1.Now().UTC().Format("2006-01-02T15:04:05Z")}
	if err := unstructured.SetNestedSlice(pr.Object, []any{cond}, "status", "conditions"); err != nil {
		f.t.Fatal(err)
	}
	if err := unstructured.SetNestedStringMap(pr.Object, details, "status", "provisioningClassDetails"); err != nil {
		f.t.Fatal(err)
	}
	if err := f.c.Status().Update(f.ctx, pr); err != nil {
		f.t.Fatalf("status of ProvisioningRequest %s: %v", name, err)
	}
}

// TestProvisioningPodSetUpdates: once the request is Provisioned with the detail
// nodePool=pool-a, the Job is started with the node selector
// pool.example.com/name=pool-a and the provisioning annotations in its pod template
// (its pods have them), on the provisioned nodes; the zone entry, whose detail the
// autoscaler did not set, is skipped as Kueue skips it, and the check's message says
// so. The Workload's spec keeps the Job's own node selector.
func TestProvisioningPodSetUpdates(t *testing.T) {
	f := newFixture(t)
	f.provCheckWorldWith("psu-cq", "{backoffLimitCount: 1, backoffBaseSeconds: 1, backoffMaxSeconds: 10}", podSetUpdatesConfig)
	f.startController()
	job := k8s.MakeJob("", "upd").Queue("lq").Pods(2).GPUs("8").Obj()
	job.Spec.Template.Spec.NodeSelector = map[string]string{"gpu.example.com/family": "hopper"}
	f.create(job)
	name := f.waitRequested("upd", 1)
	f.create(
		k8s.MakeNode("psu-a-1").H100(8).Label("pool.example.com/name", "pool-a").Label("gpu.example.com/family", "hopper").Obj(),
		k8s.MakeNode("psu-a-2").H100(8).Label("pool.example.com/name", "pool-a").Label("gpu.example.com/family", "hopper").Obj())
	f.provisionWith(name, map[string]string{"nodePool": "pool-a"})

	pods := f.waitBound("upd", 2)
	wantSel := map[string]string{"gpu.example.com/family": "hopper", "pool.example.com/name": "pool-a"}
	for _, p := range pods {
		if !strings.HasPrefix(p.Spec.NodeName, "psu-a-") {
			t.Errorf("pod %s on %s, want a pool-a node", p.Name, p.Spec.NodeName)
		}
		if !equalStringMaps(p.Spec.NodeSelector, wantSel) {
			t.Errorf("pod %s node selector %v, want %v", p.Name, p.Spec.NodeSelector, wantSel)
		}
		if p.Annotations[AnnotationConsumeProvisioningRequest] != name ||
			p.Annotations[AnnotationProvisioningClassName] != api.ProvisioningClassAtomicScaleUp {
			t.Errorf("pod %s annotations %v, want the request %s and its class", p.Name, p.Annotations, name)
		}
	}
	var j batchv1.Job
	if err := f.c.Get(f.ctx, client.ObjectKey{Namespace: f.ns, Name: "upd"}, &j); err != nil {
		t.Fatal(err)
	}
	if !equalStringMaps(j.Spec.Template.Spec.NodeSelector, wantSel) {
		t.Errorf("job template node selector %v, want %v", j.Spec.Template.Spec.NodeSelector, wantSel)
	}
	wl := f.workload(WorkloadNameForJob("upd"))
	if c := findCheck(wl.Status, "prov"); c == nil || c.State != v1alpha1.CheckState(api.CheckReady) || !strings.Contains(c.Message, "zone") {
		t.Errorf("check %+v, want Ready with a message naming the missing zone detail", c)
	}
	if got := wl.Spec.PodSets[0].NodeSelector; !equalStringMaps(got, map[string]string{"gpu.example.com/family": "hopper"}) {
		t.Errorf("Workload pod set node selector %v, want the Job's own", got)
	}
}

func equalStringMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestProvisioningPodSetUpdatesPlacement: with a third node of the flavor in another
// pool, free as the provisioned ones, the pods still go to the pool the request's
// detail names: placement sees the added node selector.
func TestProvisioningPodSetUpdatesPlacement(t *testing.T) {
	probe := &v1alpha1.Workload{ObjectMeta: metav1.ObjectMeta{Name: "probe",
		Annotations: map[string]string{AnnotationPodSetUpdates: `[{"name":"main","nodeSelector":{"k":"v"}}]`}},
		Spec: v1alpha1.WorkloadSpec{PodSets: []v1alpha1.PodSet{{Name: "main", Count: 1}}}}
	if m, err := ToAPIWorkload(probe, 0); err != nil || m.PodSets[0].NodeSelector["k"] != "v" {
		t.Fatalf("the Workload's model does not carry its pod set updates' node selector (err %v)", err)
	}
	f := newFixture(t)
	f.provCheckWorldWith("psu-place-cq", "{backoffLimitCount: 1, backoffBaseSeconds: 1, backoffMaxSeconds: 10}", podSetUpdatesConfig)
	f.create(k8s.MakeNode("psu-b-1").H100(8).Label("pool.example.com/name", "pool-b").Obj())
	f.startController()
	f.create(k8s.MakeJob("", "place").Queue("lq").Pods(2).GPUs("8").Obj())
	name := f.waitRequested("place", 1)
	for _, n := range []string{"psu-a-1", "psu-a-2"} {
		f.create(k8s.MakeNode(n).H100(8).Label("pool.example.com/name", "pool-a").Label("topology.kubernetes.io/zone", "zone-1").Obj())
	}
	f.provisionWith(name, map[string]string{"nodePool": "pool-a", "zone": "zone-1"})
	for _, p := range f.waitBound("place", 2) {
		if !strings.HasPrefix(p.Spec.NodeName, "psu-a-") {
			t.Errorf("pod %s on %s, want a pool-a node (its node selector %v)", p.Name, p.Spec.NodeName, p.Spec.NodeSelector)
		}
		if p.Spec.NodeSelector["topology.kubernetes.io/zone"] != "zone-1" {
			t.Errorf("pod %s node selector %v, want the zone detail", p.Name, p.Spec.NodeSelector)
		}
	}
}
