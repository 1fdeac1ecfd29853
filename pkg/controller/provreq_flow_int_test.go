package controller

import (
	"fmt"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/internal/testing/k8s"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// provCheckWorld installs Kueue's and cluster-autoscaler's CRDs and makes a queue
// whose ClusterQueue (16 GPUs of flavor h100) requires the Kueue AdmissionCheck
// "prov", a ProvisioningRequest check with the given retry strategy. The cluster has
// no node: capacity comes only from the autoscaler the test plays.
func (f *fixture) provCheckWorld(cq, retryStrategy string) {
	f.t.Helper()
	f.provCheckWorldWith(cq, retryStrategy, "")
}

// provCheckWorldWith is provCheckWorld with more fields of the config's spec (YAML
// lines indented by two spaces, each ending in a newline).
func (f *fixture) provCheckWorldWith(cq, retryStrategy, moreSpec string) {
	f.t.Helper()
	f.installKueueCRDs("")
	f.installProvReqCRD()
	queue := k8s.MakeClusterQueue(cq).Quota("h100", "nvidia.com/gpu", "16").Obj()
	queue.Spec.AdmissionChecks = []string{"prov"}
	f.create(k8s.MakeFlavor("h100").Obj(), queue, k8s.MakeLocalQueue("", "lq", cq).Obj())
	f.createKueue(`apiVersion: kueue.x-k8s.io/v1beta2
kind: ProvisioningRequestConfig
metadata: {name: prov-config}
spec:
  provisioningClassName: best-effort-atomic-scale-up.autoscaling.x-k8s.io
  managedResources: [nvidia.com/gpu]
  retryStrategy: `+retryStrategy+"\n"+moreSpec, `apiVersion: kueue.x-k8s.io/v1beta2
kind: AdmissionCheck
metadata: {name: prov}
spec:
  controllerName: kueue.x-k8s.io/provisioning-request
  parameters: {apiGroup: kueue.x-k8s.io, kind: ProvisioningRequestConfig, name: prov-config}`)
}

// provRequest reads a ProvisioningRequest; nil when it does not exist.
func (f *fixture) provRequest(name string) *unstructured.Unstructured {
	pr := &unstructured.Unstructured{}
	pr.SetGroupVersionKind(provReqGVK())
	if err := f.c.Get(f.ctx, client.ObjectKey{Namespace: f.ns, Name: name}, pr); err != nil {
		return nil
	}
	return pr
}

// waitRequested waits until the job's Workload holds a reservation whose check waits
// for the attempt-th request, and that request exists; it returns the request's name.
func (f *fixture) waitRequested(job string, attempt int) string {
	f.t.Helper()
	want := api.ProvisioningRequestName(WorkloadNameForJob(job), "prov", attempt)
	f.waitWorkload(job, "quota reserved for "+want, func(wl *v1alpha1.Workload) bool {
		c := findCheck(wl.Status, "prov")
		return wl.Status.QuotaReservation != nil && wl.Status.Admission == nil && c != nil &&
			c.State == v1alpha1.CheckState(api.CheckPending) && c.ProvisioningRequest == want
	})
	f.eventually(30*time.Second, "ProvisioningRequest "+want+" exists", func() (bool, string) {
		return f.provRequest(want) != nil, ""
	})
	return want
}

// assertSuspendedUnbound fails when the job runs or any of its pods is bound.
func (f *fixture) assertSuspendedUnbound(job string) {
	f.t.Helper()
	var j batchv1.Job
	if err := f.c.Get(f.ctx, client.ObjectKey{Namespace: f.ns, Name: job}, &j); err != nil {
		f.t.Fatal(err)
	}
	if j.Spec.Suspend == nil || !*j.Spec.Suspend {
		f.t.Errorf("job %s unsuspended while its admission checks run", job)
	}
	if pods := f.jobPods(job); boundCount(pods) > 0 {
		f.t.Errorf("job %s has bound pods before its checks passed: %s", job, describePods(pods))
	}
}

// TestProvisioningCheckAdmitsOnProvisionedNodes: a Job in a queue with a
// ProvisioningRequest check gets its quota reserved (suspended, nothing bound) and a
// request; a restarted controller keeps the reservation and the request; the test, as
// the autoscaler, adds two nodes and sets Provisioned=True, and the Job is admitted,
// unsuspended and bound on the new nodes. When it finishes the request is deleted.
func TestProvisioningCheckAdmitsOnProvisionedNodes(t *testing.T) {
	f := newFixture(t)
	f.provCheckWorld("prov-cq", "{backoffLimitCount: 1, backoffBaseSeconds: 1, backoffMaxSeconds: 10}")
	f.startController()
	f.create(k8s.MakeJob("", "train").Queue("lq").Pods(2).GPUs("8").Obj())
	name := f.waitRequested("train", 1)
	f.assertSuspendedUnbound("train")
	sets, _, _ := unstructured.NestedSlice(f.provRequest(name).Object, "spec", "podSets")
	if len(sets) != 1 {
		t.Fatalf("request pod sets %v, want the one GPU pod set", sets)
	}
	if n, _, _ := unstructured.NestedInt64(sets[0].(map[string]any), "count"); n != 2 {
		t.Errorf("request asks for %d pods, want 2", n)
	}

	// A restart reads the reservation back from the Workload: still reserved, the same
	// request, no second one.
	f.stopController()
	f.startController()
	f.pokePasses(2)
	wl := f.workload(WorkloadNameForJob("train"))
	if wl.Status.QuotaReservation == nil || wl.Status.Admission != nil || findCheck(wl.Status, "prov").ProvisioningRequest != name {
		t.Fatalf("after a restart: reservation %+v, admission %+v, checks %+v", wl.Status.QuotaReservation, wl.Status.Admission, wl.Status.AdmissionChecks)
	}
	if f.provRequest(api.ProvisioningRequestName(wl.Name, "prov", 2)) != nil {
		t.Error("a restart made a second request")
	}
	f.assertSuspendedUnbound("train")

	f.create(k8s.MakeNode("prov-new-1").H100(8).Obj(), k8s.MakeNode("prov-new-2").H100(8).Obj())
	f.setProvReqCondition(name, provProvisioned, "capacity is provisioned")
	pods := f.waitBound("train", 2)
	for _, p := range pods {
		if p.Spec.NodeName != "prov-new-1" && p.Spec.NodeName != "prov-new-2" {
			t.Errorf("pod %s on %s, want a provisioned node", p.Name, p.Spec.NodeName)
		}
	}
	wl = f.workload(WorkloadNameForJob("train"))
	if wl.Status.Admission == nil || wl.Status.QuotaReservation != nil || !checksReady(wl.Status, []string{"prov"}) {
		t.Errorf("admitted status: admission %v, reservation %+v, checks %+v", wl.Status.Admission != nil, wl.Status.QuotaReservation, wl.Status.AdmissionChecks)
	}

	f.finishJob("train")
	f.eventually(30*time.Second, "the request deleted once the job finished", func() (bool, string) {
		return f.provRequest(name) == nil, ""
	})
}

// TestProvisioningCheckRetryThenReject: a Failed request is a Retry (the reservation
// released, the Workload requeued after the config's 1s backoff, a second request);
// the second Failed request is past backoffLimitCount 1 and rejects the Workload: no
// reservation, Requeued False, the Job suspended, and no third request however many
// passes run.
func TestProvisioningCheckRetryThenReject(t *testing.T) {
	f := newFixture(t)
	f.provCheckWorld("prov-retry-cq", "{backoffLimitCount: 1, backoffBaseSeconds: 1, backoffMaxSeconds: 10}")
	f.startController()
	f.create(k8s.MakeJob("", "big").Queue("lq").Pods(2).GPUs("8").Obj())
	first := f.waitRequested("big", 1)
	f.setProvReqCondition(first, provFailed, "no capacity")
	second := f.waitRequested("big", 2)
	wl := f.workload(WorkloadNameForJob("big"))
	if c := findCheck(wl.Status, "prov"); c.RetryCount == nil || *c.RetryCount != 1 {
		t.Errorf("check after one retry: %+v, want retryCount 1", c)
	}
	f.eventually(30*time.Second, "the failed request deleted", func() (bool, string) {
		return f.provRequest(first) == nil, ""
	})
	f.setProvReqCondition(second, provFailed, "still no capacity")
	wl = f.waitWorkload("big", "rejected", func(wl *v1alpha1.Workload) bool {
		c := findCheck(wl.Status, "prov")
		return wl.Status.QuotaReservation == nil && c != nil && c.State == v1alpha1.CheckState(api.CheckRejected)
	})
	rq := meta.FindStatusCondition(wl.Status.Conditions, ConditionRequeued)
	if rq == nil || rq.Status != metav1.ConditionFalse || rq.Reason != ReasonCheckRejected || rq.ObservedGeneration != wl.Generation {
		t.Errorf("Requeued condition %s, want False %s for generation %d", describeCondition(rq), ReasonCheckRejected, wl.Generation)
	}
	time.Sleep(2 * time.Second) // longer than the backoff: a retry would have come by now
	f.pokePasses(2)
	if pr := f.provRequest(api.ProvisioningRequestName(wl.Name, "prov", 3)); pr != nil {
		t.Error(fmt.Sprintf("a third request after the rejection: %s", pr.GetName()))
	}
	if wl := f.workload(WorkloadNameForJob("big")); wl.Status.QuotaReservation != nil {
		t.Error("quota reserved again after the rejection")
	}
	f.assertSuspendedUnbound("big")
}

// TestProvisioningCheckBookingExpires: a request Provisioned without the nodes showing
// up leaves the workload pending with its checks Ready (it cannot be placed); when the
// booking then expires before it was placed, the check is a Retry: the reservation ends,
// the request is deleted and, after the backoff, a second request is made.
func TestProvisioningCheckBookingExpires(t *testing.T) {
	f := newFixture(t)
	f.provCheckWorld("prov-expire-cq", "{backoffLimitCount: 2, backoffBaseSeconds: 1, backoffMaxSeconds: 10}")
	f.startController()
	f.create(k8s.MakeJob("", "late").Queue("lq").Pods(2).GPUs("8").Obj())
	first := f.waitRequested("late", 1)
	f.setProvReqCondition(first, provProvisioned, "capacity is provisioned")
	f.waitWorkload("late", "checks Ready, not placed", func(wl *v1alpha1.Workload) bool {
		return wl.Status.QuotaReservation != nil && checksReady(wl.Status, []string{"prov"}) && wl.Status.Admission == nil
	})
	f.assertSuspendedUnbound("late")
	f.setProvReqCondition(first, provBookingExpired, "the booking expired")
	f.waitRequested("late", 2)
	if f.provRequest(first) != nil {
		t.Error("the expired request is still there")
	}
}
