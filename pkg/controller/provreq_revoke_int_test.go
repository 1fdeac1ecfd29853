package controller

import (
	"testing"
	"time"

	"github.com/gantry-sched/gantry/internal/testing/k8s"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestProvisioningCapacityRevokedAfterAdmission: the test, as cluster-autoscaler,
// provisions two nodes, the Job runs on them, and then the autoscaler revokes the
// capacity. The check turns Rejected, the Workload is evicted and deactivated (Requeued
// False, AdmissionCheckRejected, for its generation), the Job suspended, its pods gone
// and not bound again although the nodes are still there, no quota held, and a Warning
// event names the request.
func TestProvisioningCapacityRevokedAfterAdmission(t *testing.T) {
	f := newFixture(t)
	f.provCheckWorld("prov-revoke-cq", "{backoffLimitCount: 1, backoffBaseSeconds: 1, backoffMaxSeconds: 10}")
	f.startController()
	f.create(k8s.MakeJob("", "run").Queue("lq").Pods(2).GPUs("8").Obj())
	name := f.waitRequested("run", 1)
	f.create(k8s.MakeNode("revoke-new-1").H100(8).Obj(), k8s.MakeNode("revoke-new-2").H100(8).Obj())
	f.setProvReqCondition(name, provProvisioned, "capacity is provisioned")
	f.waitBound("run", 2)

	f.setProvReqCondition(name, provCapacityRevoked, "the nodes were reclaimed")
	wl := f.waitWorkload("run", "evicted and deactivated", func(wl *v1alpha1.Workload) bool {
		c := findCheck(wl.Status, "prov")
		return wl.Status.Admission == nil && c != nil && c.State == v1alpha1.CheckState(api.CheckRejected)
	})
	rq := meta.FindStatusCondition(wl.Status.Conditions, ConditionRequeued)
	if rq == nil || rq.Status != metav1.ConditionFalse || rq.Reason != ReasonCheckRejected || rq.ObservedGeneration != wl.Generation {
		t.Errorf("Requeued condition %s, want False %s for generation %d", describeCondition(rq), ReasonCheckRejected, wl.Generation)
	}
	if ev := meta.FindStatusCondition(wl.Status.Conditions, v1alpha1.WorkloadEvicted); ev == nil || ev.Status != metav1.ConditionTrue || ev.Reason != ReasonCheckRejected {
		t.Errorf("Evicted condition %s, want True %s", describeCondition(ev), ReasonCheckRejected)
	}
	if c := findCheck(wl.Status, "prov"); c.Message != "the nodes were reclaimed" {
		t.Errorf("check message %q, want the autoscaler's", c.Message)
	}
	f.eventually(30*time.Second, "a Warning event naming the request", func() (bool, string) {
		return f.hasEvent(wl.Name, ReasonCapacityRevoked, name), ""
	})
	f.eventually(30*time.Second, "the job's pods gone", func() (bool, string) {
		pods := f.jobPods("run")
		return len(pods) == 0, describePods(pods)
	})

	// Passes after the eviction: the nodes are free, yet the deactivated workload is
	// neither admitted nor bound again, holds no quota, and its request is deleted.
	f.pokePasses(3)
	var job batchv1.Job
	if err := f.c.Get(f.ctx, client.ObjectKey{Namespace: f.ns, Name: "run"}, &job); err != nil {
		t.Fatal(err)
	}
	if job.Spec.Suspend == nil || !*job.Spec.Suspend {
		t.Error("job running again after its capacity was revoked")
	}
	if pods := f.jobPods("run"); boundCount(pods) > 0 {
		t.Errorf("pods bound again: %s", describePods(pods))
	}
	wl = f.workload(wl.Name)
	if wl.Status.Admission != nil || wl.Status.QuotaReservation != nil {
		t.Errorf("deactivated workload holds quota: admission %+v, reservation %+v", wl.Status.Admission, wl.Status.QuotaReservation)
	}
	f.eventually(30*time.Second, "the revoked request deleted", func() (bool, string) {
		return f.provRequest(name) == nil, ""
	})
}
