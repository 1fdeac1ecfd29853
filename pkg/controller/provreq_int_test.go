package controller

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/internal/testing/k8s"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	"github.com/gantry-sched/gantry/pkg/resources"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// autoscalerAPIModule is the cluster-autoscaler API module (the version Kueue v0.17
// builds with) whose ProvisioningRequest CRD the tests install.
const autoscalerAPIModule = "k8s.io/autoscaler/cluster-autoscaler/apis@v0.0.0-20240830133931-adfbe7e45277"

// installProvReqCRD installs cluster-autoscaler's ProvisioningRequest CRD, read from the
// Go module cache (downloaded there when missing); skipped only when the module cannot
// be had.
func (f *fixture) installProvReqCRD() {
	f.t.Helper()
	cmd := exec.CommandContext(f.ctx, "go", "mod", "download", "-json", autoscalerAPIModule)
	cmd.Dir = f.t.TempDir() // outside this module: its go.mod does not require it
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	out, err := cmd.Output()
	var mod struct{ Dir, Error string }
	if jerr := json.Unmarshal(out, &mod); err != nil || jerr != nil || mod.Dir == "" {
		f.t.Skipf("go mod download %s: %v %s", autoscalerAPIModule, err, mod.Error)
	}
	path := filepath.Join(mod.Dir, "config/crd/autoscaling.x-k8s.io_provisioningrequests.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		f.t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(data, crd); err != nil {
		f.t.Fatalf("%s: %v", path, err)
	}
	f.applyCRD(crd)
	f.eventually(30*time.Second, "the ProvisioningRequest API is served", func() (bool, string) {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(provReqGVK().GroupVersion().WithKind("ProvisioningRequestList"))
		err := f.c.List(f.ctx, list, client.InNamespace(f.ns))
		return err == nil, "list: " + errText(err)
	})
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// provWorkload creates a Workload of two 8-GPU pods and a 1-CPU launcher pod.
func (f *fixture) provWorkload(name string) *v1alpha1.Workload {
	wl := k8s.MakeWorkload(f.ns, name).Obj()
	wl.Spec.PodSets = []v1alpha1.PodSet{
		{Name: "launcher", Count: 1, Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}},
		{Name: "workers", Count: 2, Requests: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("8")}},
	}
	f.create(&wl)
	return &wl
}

// setProvReqCondition plays cluster-autoscaler: it sets one condition on the request.
func (f *fixture) setProvReqCondition(name, typ, msg string) {
	f.t.Helper()
	pr := &unstructured.Unstructured{}
	pr.SetGroupVersionKind(provReqGVK())
	if err := f.c.Get(f.ctx, client.ObjectKey{Namespace: f.ns, Name: name}, pr); err != nil {
		f.t.Fatal(err)
	}
	cond := map[string]any{"type": typ, "status": "True", "reason": typ, "message": msg,
		"lastTransitionTime": metav1.Now().UTC().Format(time.RFC3339)}
	if err := unstructured.SetNestedSlice(pr.Object, []any{cond}, "status", "conditions"); err != nil {
		f.t.Fatal(err)
	}
	if err := f.c.Status().Update(f.ctx, pr); err != nil {
		f.t.Fatalf("status of ProvisioningRequest %s: %v", name, err)
	}
}

// requestFor makes and creates a check's attempt-th request for wl.
func (f *fixture) requestFor(wl *v1alpha1.Workload, attempt int, cfg api.ProvisioningRequestConfig) string {
	f.t.Helper()
	flavor := api.ResourceFlavor{Meta: api.Meta{Name: "h100"}, NodeLabels: map[string]string{"pool": "h100"}}
	templates, pr, ok := provisioningObjects(wl, "prov", attempt, cfg, nil, map[string]api.ResourceFlavor{"workers": flavor})
	if !ok {
		f.t.Fatal("no request for a workload with GPU pod sets")
	}
	p := provReqs{c: f.c}
	for i := 0; i < 2; i++ { // twice: a pass after a restart makes the same request again
		if err := p.ensure(f.ctx, templates, pr); err != nil {
			f.t.Fatal(err)
		}
	}
	return pr.GetName()
}

// TestProvisioningRequestOnTheCluster: the request and its templates are made as Kueue
// makes them (names, owner, only the managed pod set, the flavor's node labels); the
// test plays the autoscaler (a node is added, Provisioned=True) and the check turns
// Ready in the Workload's status; deleting removes both.
func TestProvisioningRequestOnTheCluster(t *testing.T) {
	f := newFixture(t)
	f.installProvReqCRD()
	wl := f.provWorkload("train")
	cfg := api.ProvisioningRequestConfig{ClassName: api.ProvisioningClassAtomicScaleUp, Parameters: map[string]string{"ValidUntilSeconds": "600"},
		ManagedResources: []resources.Name{"nvidia.com/gpu"}, Retry: api.DefaultProvisioningRetry()}
	name := f.requestFor(wl, 1, cfg)
	if name != "train-prov-1" {
		t.Errorf("request name %q, want Kueue's train-prov-1", name)
	}
	pr := &unstructured.Unstructured{}
	pr.SetGroupVersionKind(provReqGVK())
	if err := f.c.Get(f.ctx, client.ObjectKey{Namespace: f.ns, Name: name}, pr); err != nil {
		t.Fatal(err)
	}
	sets, _, _ := unstructured.NestedSlice(pr.Object, "spec", "podSets")
	if len(sets) != 1 {
		t.Fatalf("podSets %v, want the workers only (the launcher requests no managed resource)", sets)
	}
	ref, _, _ := unstructured.NestedString(sets[0].(map[string]any), "podTemplateRef", "name")
	count, _, _ := unstructured.NestedInt64(sets[0].(map[string]any), "count")
	if ref != "ppt-train-prov-1-workers" || count != 2 {
		t.Errorf("pod set refers to %q × %d, want ppt-train-prov-1-workers × 2", ref, count)
	}
	if owners := pr.GetOwnerReferences(); len(owners) != 1 || owners[0].UID != wl.UID || owners[0].Kind != "Workload" {
		t.Errorf("owners %v, want the Workload", owners)
	}
	var pt corev1.PodTemplate
	if err := f.c.Get(f.ctx, client.ObjectKey{Namespace: f.ns, Name: ref}, &pt); err != nil {
		t.Fatal(err)
	}
	if pt.Template.Spec.NodeSelector["pool"] != "h100" || pt.Template.Spec.Containers[0].Resources.Limits.Name("nvidia.com/gpu", resource.DecimalSI).Value() != 8 {
		t.Errorf("template spec %+v: want the flavor's node label and 8 GPUs", pt.Template.Spec)
	}
	p := provReqs{c: f.c}
	conds, found, err := p.conditions(f.ctx, f.ns, name)
	if err != nil || !found {
		t.Fatalf("conditions: %v, found %v", err, found)
	}
	if d := decideProvCheck(conds, 1, cfg.Retry, false); d.State != api.CheckPending {
		t.Errorf("fresh request: %s, want Pending", d.State)
	}
	f.create(k8s.MakeNode("prov-node-1").H100(8).Obj(), k8s.MakeNode("prov-node-2").H100(8).Obj())
	f.setProvReqCondition(name, provProvisioned, "capacity is provisioned")
	conds, _, _ = p.conditions(f.ctx, f.ns, name)
	d := decideProvCheck(conds, 1, cfg.Retry, false)
	if d.State != api.CheckReady {
		t.Fatalf("after Provisioned: %s, want Ready", d.State)
	}
	setCheckState(&wl.Status, "prov", name, d, time.Now())
	if err := f.c.Status().Update(f.ctx, wl); err != nil {
		t.Fatalf("write the check state: %v", err)
	}
	got := f.workload("train")
	if !checksReady(got.Status, []string{"prov"}) || got.Status.AdmissionChecks[0].ProvisioningRequest != name {
		t.Errorf("status.admissionChecks = %+v, want prov Ready with its request", got.Status.AdmissionChecks)
	}
	if err := p.remove(f.ctx, wl); err != nil {
		t.Fatal(err)
	}
	if _, found, _ := p.conditions(f.ctx, f.ns, name); found {
		t.Error("the request is still there after remove")
	}
	var left corev1.PodTemplateList
	if err := f.c.List(f.ctx, &left, client.InNamespace(f.ns)); err != nil || len(left.Items) != 0 {
		t.Errorf("%d PodTemplates left after remove (%v)", len(left.Items), err)
	}
}

// TestProvisioningRequestFailedRetries: each Failed request is a Retry with Kueue's
// backoff (base·2^(n-1)) and the next request is named with the next attempt; the
// request that fails past backoffLimitCount rejects the workload.
func TestProvisioningRequestFailedRetries(t *testing.T) {
	f := newFixture(t)
	f.installProvReqCRD()
	wl := f.provWorkload("big")
	cfg := api.ProvisioningRequestConfig{ClassName: api.ProvisioningClassCheckCapacity,
		Retry: api.ProvisioningRetry{BackoffLimitCount: 2, BackoffBase: 30 * time.Second, BackoffMax: 100 * time.Second}}
	want := []provCheckDecision{
		{State: api.CheckRetry, Wait: 30 * time.Second},
		{State: api.CheckRetry, Wait: 60 * time.Second},
		{State: api.CheckRejected},
	}
	p := provReqs{c: f.c}
	for i, w := range want {
		attempt := i + 1
		name := f.requestFor(wl, attempt, cfg)
		if name != api.ProvisioningRequestName("big", "prov", attempt) {
			t.Errorf("attempt %d named %q", attempt, name)
		}
		f.setProvReqCondition(name, provFailed, "not enough capacity")
		conds, _, err := p.conditions(f.ctx, f.ns, name)
		if err != nil {
			t.Fatal(err)
		}
		d := decideProvCheck(conds, attempt, cfg.Retry, false)
		if d.State != w.State || d.Wait != w.Wait {
			t.Errorf("attempt %d: %s after %s, want %s after %s", attempt, d.State, d.Wait, w.State, w.Wait)
		}
		setCheckState(&wl.Status, "prov", name, d, time.Now())
		if err := f.c.Status().Update(f.ctx, wl); err != nil {
			t.Fatal(err)
		}
		wl = f.workload("big")
	}
	st := wl.Status.AdmissionChecks
	if len(st) != 1 || st[0].State != v1alpha1.CheckState(api.CheckRejected) || st[0].RetryCount == nil || *st[0].RetryCount != 2 {
		t.Errorf("status.admissionChecks = %+v, want Rejected after retries", st)
	}
}
