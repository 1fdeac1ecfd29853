package controller

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/internal/testing/k8s"
	"github.com/gantry-sched/gantry/internal/testing/kubeenv"
	"github.com/gantry-sched/gantry/internal/testing/upstream"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensions "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// kueueModulePath and kueueModuleVersion are the Kueue release whose CRDs the tests install, as a platform
// engineer replacing Kueue has them on the cluster.
const (
	kueueModulePath    = "sigs.k8s.io/kueue"
	kueueModuleVersion = "v0.19.0"
)

// kueueCRDFiles are the CRDs of the kinds Gantry reads (not Kueue's Workload).
func kueueCRDFiles() []string {
	return []string{"resourceflavors", "cohorts", "clusterqueues", "localqueues", "workloadpriorityclasses", "topologies",
		"admissionchecks", "provisioningrequestconfigs"}
}

// installKueueCRDs installs Kueue's own CRDs of the queue kinds, read from the Go
// module cache (downloaded there when missing), or changes the installed ones: only
// "" serves them as released (v1beta1 and v1beta2, stored as v1beta2); only "v1beta1"
// serves and stores v1beta1 alone, as a Kueue before v0.16 installs them. It waits
// until discovery shows exactly the versions served. The test is skipped only when the
// module cannot be had (no network and no module cache).
func (f *fixture) installKueueCRDs(only string) {
	f.t.Helper()
	crds := f.kueueCRDs()
	for _, crd := range crds {
		for i := range crd.Spec.Versions {
			v := &crd.Spec.Versions[i]
			if only != "" {
				v.Served, v.Storage = v.Name == only, v.Name == only
			}
		}
		// Kueue converts between v1beta1 and v1beta2 with its own webhook, which does
		// not run here (Gantry replaces Kueue's controller, and the test has no
		// webhook server). With strategy None the API server serves every version
		// with the same fields, relabelled, and prunes those the version read does
		// not know: objects written as v1beta2, with v1beta2's names, and read as
		// v1beta1 would lose the ClusterQueues' cohortName. The borrowing and reclaim
		// of TestKueueV1beta2ObjectsOnTheCluster therefore show the controller read
		// v1beta2, the version it prefers.
		crd.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.NoneConverter}
		f.applyCRD(crd)
	}
	if err := testEnv.CreateCRDs(f.ctx, crds...); err != nil { // waits until established and served
		f.t.Fatal(err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(testEnv.Config)
	if err != nil {
		f.t.Fatal(err)
	}
	for _, crd := range crds {
		for _, v := range crd.Spec.Versions {
			f.eventually(30*time.Second, crd.Name+" "+v.Name+" out of discovery", func() (bool, string) {
				return v.Served || !kubeenv.ServesKind(dc, kueueGroup+"/"+v.Name, crd.Spec.Names.Kind), ""
			})
		}
	}
}

// kueueCRDs reads the CRDs of kueueCRDFiles from the module cache.
func (f *fixture) kueueCRDs() []*apiextensionsv1.CustomResourceDefinition {
	f.t.Helper()
	dir := upstream.ModuleDir(f.t, kueueModulePath, kueueModuleVersion)
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, name := range kueueCRDFiles() {
		path := filepath.Join(dir, "config/components/crd/bases", "kueue.x-k8s.io_"+name+".yaml")
		data, err := os.ReadFile(path)
		if err != nil {
			f.t.Fatal(err)
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(data, crd); err != nil {
			f.t.Fatalf("%s: %v", path, err)
		}
		crds = append(crds, crd)
	}
	return crds
}

// applyCRD creates crd, or sets the spec of the one installed (the versions an
// earlier test served).
func (f *fixture) applyCRD(crd *apiextensionsv1.CustomResourceDefinition) {
	f.t.Helper()
	cs, err := apiextensions.NewForConfig(testEnv.Config)
	if err != nil {
		f.t.Fatal(err)
	}
	api := cs.ApiextensionsV1().CustomResourceDefinitions()
	if _, err := api.Create(f.ctx, crd, metav1.CreateOptions{}); err == nil || !apierrors.IsAlreadyExists(err) {
		if err != nil {
			f.t.Fatalf("create CRD %s: %v", crd.Name, err)
		}
		return
	}
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := api.Get(f.ctx, crd.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		cur.Spec = crd.Spec
		_, err = api.Update(f.ctx, cur, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		f.t.Fatalf("update CRD %s: %v", crd.Name, err)
	}
}

// createKueue creates Kueue objects from YAML documents (namespaced ones in the
// test's namespace) and deletes them when the test ends.
func (f *fixture) createKueue(docs ...string) []*unstructured.Unstructured {
	f.t.Helper()
	var out []*unstructured.Unstructured
	for _, doc := range docs {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(strings.ReplaceAll(doc, "NS", f.ns)), &u.Object); err != nil {
			f.t.Fatal(err)
		}
		if err := f.c.Create(f.ctx, u); err != nil {
			f.t.Fatalf("create %s %s: %v", u.GetKind(), u.GetName(), err)
		}
		f.t.Cleanup(func() { _ = f.c.Delete(f.ctx, u) })
		out = append(out, u)
	}
	return out
}

// kueueStatus reads an object's status counts as written on the cluster.
func (f *fixture) kueueStatus(u *unstructured.Unstructured) (pending, reserving, admitted int64) {
	cur := &unstructured.Unstructured{}
	cur.SetGroupVersionKind(u.GroupVersionKind())
	if err := f.c.Get(f.ctx, client.ObjectKeyFromObject(u), cur); err != nil {
		f.t.Fatal(err)
	}
	pending, _, _ = unstructured.NestedInt64(cur.Object, "status", "pendingWorkloads")
	reserving, _, _ = unstructured.NestedInt64(cur.Object, "status", "reservingWorkloads")
	admitted, _, _ = unstructured.NestedInt64(cur.Object, "status", "admittedWorkloads")
	return pending, reserving, admitted
}

// TestKueueV1beta2ObjectsOnTheCluster: a cluster that ran Kueue keeps its v1beta2
// ResourceFlavor, ClusterQueues (in a cohort, with preemption) and LocalQueues;
// Gantry, with no gantry.dev queue objects, admits Jobs labelled
// kueue.x-k8s.io/queue-name within the Kueue quota (borrowing from the cohort), holds
// the next one though the node has room, reclaims the lent quota for the lender by
// preemption, writes the counts on the Kueue objects' status, and reports a Kueue
// object whose name a gantry.dev object holds.
func TestKueueV1beta2ObjectsOnTheCluster(t *testing.T) {
	f := newFixture(t)
	f.installKueueCRDs("")
	f.create(k8s.MakeNode("kueue-1").H100(16).Obj(), k8s.MakeFlavor("kueue-dup").Obj())
	objs := f.createKueue(`apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: kueue-h100}
`, kueueTestCQ("kueue-cq", 8), kueueTestCQ("kueue-lender", 4), `apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: kueue-lq, namespace: NS}
spec: {clusterQueue: kueue-cq}
`, `apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: kueue-lender-lq, namespace: NS}
spec: {clusterQueue: kueue-lender}
`, `apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: kueue-dup}
`)
	cq, lq, dup := objs[1], objs[3], objs[5]
	f.startController()
	f.create(k8s.MakeJob("", "a").KueueQueue("kueue-lq").Pods(2).GPUs("4").Obj())
	f.waitBound("a", 2)
	// 8 GPUs of nominal quota are used: b borrows the lender's 4 through the cohort.
	f.create(k8s.MakeJob("", "b").KueueQueue("kueue-lq").Pods(1).GPUs("4").Obj())
	f.waitBound("b", 1)
	// The cohort's 12 GPUs are used; the node's last 4 are not the queue's to take.
	f.create(k8s.MakeJob("", "c").KueueQueue("kueue-lq").Pods(1).GPUs("4").Obj())
	for _, u := range []*unstructured.Unstructured{cq, lq} {
		f.eventually(30*time.Second, u.GetKind()+" status counts", func() (bool, string) {
			p, r, a := f.kueueStatus(u)
			return p == 1 && r == 2 && a == 2, fmt.Sprintf("pending %d reserving %d admitted %d", p, r, a)
		})
	}
	if wl := f.workload(WorkloadNameForJob("c")); wl == nil || wl.Status.Admission != nil {
		t.Fatalf("c admitted beyond the cohort's 12 GPUs: %+v", wl)
	}
	// `gantry get --kubeconfig` reads the same Kueue objects.
	v, err := ReadView(f.ctx, f.c)
	if err != nil {
		t.Fatal(err)
	}
	var seen bool
	for _, q := range v.Queues {
		if q.Name == "kueue-cq" {
			seen = q.Cohort == "kueue-org" && q.Pending == 1 && q.Admitted == 2 && q.BorrowedGPU == 4000
			t.Logf("view of kueue-cq: %+v", q)
		}
	}
	if !seen {
		t.Errorf("the view has no kueue-cq in cohort kueue-org with 1 pending, 2 admitted, 4 GPUs borrowed")
	}
	// The lender's own job reclaims its quota (reclaimWithinCohort: Any): b is preempted.
	f.create(k8s.MakeJob("", "l").KueueQueue("kueue-lender-lq").Pods(1).GPUs("4").Obj())
	f.waitBound("l", 1)
	if wl := f.workload(WorkloadNameForJob("b")); wl == nil || wl.Status.Admission != nil {
		t.Errorf("b still admitted after the lender reclaimed its quota: %+v", wl)
	}
	f.eventually(30*time.Second, "event on the Kueue ResourceFlavor kueue-dup", func() (bool, string) {
		var evs corev1.EventList
		if err := f.c.List(f.ctx, &evs, client.InNamespace("default")); err != nil {
			return false, err.Error()
		}
		for _, e := range evs.Items {
			if e.InvolvedObject.Name == dup.GetName() && e.InvolvedObject.APIVersion == "kueue.x-k8s.io/v1beta2" && e.Reason == reasonLeftOut &&
				strings.Contains(e.Message, "a gantry.dev/v1alpha1 ResourceFlavor of the same name exists") {
				return true, ""
			}
		}
		return false, fmt.Sprintf("%d events", len(evs.Items))
	})
}

// kueueTestCQ is a v1beta2 ClusterQueue of the cohort kueue-org with gpus H100s of
// flavor kueue-h100, reclaiming what it lent by preemption.
func kueueTestCQ(name string, gpus int) string {
	return fmt.Sprintf(`apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: %s}
spec:
  cohortName: kueue-org
  namespaceSelector: {}
  preemption: {withinClusterQueue: LowerPriority, reclaimWithinCohort: Any}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: kueue-h100
      resources: [{name: nvidia.com/gpu, nominalQuota: %d}]
`, name, gpus)
}

// TestKueueV1beta1ObjectsOnTheCluster: on a cluster whose Kueue (before v0.16) serves
// and stores v1beta1 only, the controller watches v1beta1 and reads v1beta1's names
// (the ClusterQueue's cohort): a job borrows through the cohort and the lender
// reclaims.
func TestKueueV1beta1ObjectsOnTheCluster(t *testing.T) {
	f := newFixture(t)
	f.installKueueCRDs("v1beta1")
	t.Cleanup(func() { f.installKueueCRDs("") }) // as released, for the tests after
	f.create(k8s.MakeNode("kueue-b1").H100(16).Obj())
	cq := func(name string, gpus int) string {
		return strings.ReplaceAll(strings.ReplaceAll(kueueTestCQ(name, gpus), "v1beta2", "v1beta1"), "cohortName:", "cohort:")
	}
	f.createKueue("apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {name: kueue-h100}\n",
		cq("kueue-cq", 4), cq("kueue-lender", 4),
		"apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata: {name: kueue-lq, namespace: NS}\nspec: {clusterQueue: kueue-cq}\n",
		"apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata: {name: kueue-lender-lq, namespace: NS}\nspec: {clusterQueue: kueue-lender}\n")
	f.startController()
	f.create(k8s.MakeJob("", "a").KueueQueue("kueue-lq").Pods(2).GPUs("4").Obj()) // 4 nominal + 4 borrowed
	f.waitBound("a", 2)
	f.create(k8s.MakeJob("", "l").KueueQueue("kueue-lender-lq").Pods(1).GPUs("4").Obj())
	f.waitBound("l", 1)
	if wl := f.workload(WorkloadNameForJob("a")); wl == nil || wl.Status.Admission != nil {
		t.Errorf("a still admitted after the lender reclaimed its quota: %+v", wl)
	}
}
