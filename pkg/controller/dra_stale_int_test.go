package controller

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// blockPods makes the API server refuse every new pod of the namespace: a
// ResourceQuota of no pods, its usage written as the quota controller (not running
// here) would write it. The returned function lifts the block.
func (f *fixture) blockPods() func() {
	f.t.Helper()
	none := corev1.ResourceList{corev1.ResourcePods: resource.MustParse("0")}
	q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "no-pods"}, Spec: corev1.ResourceQuotaSpec{Hard: none}}
	f.create(q)
	q.Status = corev1.ResourceQuotaStatus{Hard: none, Used: none}
	if err := f.c.Status().Update(f.ctx, q); err != nil {
		f.t.Fatal(err)
	}
	return func() {
		f.t.Helper()
		if err := f.c.Delete(f.ctx, q); err != nil {
			f.t.Fatal(err)
		}
	}
}

// pokeJob changes an annotation of the job, so the Job controller syncs it now rather
// than after the backoff its refused pod creations built up.
func (f *fixture) pokeJob(name string) {
	f.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var job batchv1.Job
		if err := f.c.Get(f.ctx, client.ObjectKey{Namespace: f.ns, Name: name}, &job); err != nil {
			return err
		}
		if job.Annotations == nil {
			job.Annotations = map[string]string{}
		}
		job.Annotations["test.gantry.dev/poke"] = time.Now().Format(time.RFC3339Nano)
		return f.c.Update(f.ctx, &job)
	})
	if err != nil {
		f.t.Fatal(err)
	}
}

// TestDRAStaleSharedClaimRequeued admits a gang next to a shared claim another gang's
// pod allocated (on that node, without the claim's devices), while the API server
// refuses its pods; the first gang ends and the claim is released before any pod of
// the second exists. The second gang's plan is stale: it is requeued (a requeue
// counted, an Evicted event naming the claim), placed again, and once its pods can be
// created they are bound, with the claim allocated afresh on their node and reserved
// for them, no device in two claims.
func TestDRAStaleSharedClaimRequeued(t *testing.T) {
	f := newFixture(t)
	f.draWorld([]string{"dra-r1", "dra-r2"}, "16")
	f.create(gpuTemplate("one", "gpu.nvidia.com", 1), sharedGPUClaim("data", 1))
	f.startController()
	f.create(sharingJob("first", "lq", 1, "one", "data"))
	first := f.waitBound("first", 1)
	f.waitReservedFor("data", 1)
	node := first[0].Spec.NodeName

	unblock := f.blockPods()
	f.create(sharingJob("late", "lq", 1, "one", "data"))
	f.eventually(30*time.Second, "late admitted next to data on "+node, func() (bool, string) {
		wl := f.workload(WorkloadNameForJob("late"))
		if wl == nil || wl.Status.Admission == nil {
			return false, "not admitted"
		}
		pls := wl.Status.Admission.Placements
		return len(pls) == 1 && pls[0].Node == node && len(pls[0].Devices) == 1, fmt.Sprintf("placements %+v", pls)
	})
	if pods := f.jobPods("late"); len(pods) != 0 {
		t.Fatalf("late's pods created despite the quota: %s", describePods(pods))
	}

	f.finishJob("first")
	f.eventually(30*time.Second, "data released", func() (bool, string) {
		c := f.namedClaim("data")
		return c != nil && c.Status.Allocation == nil, fmt.Sprintf("%+v", c.Status)
	})
	f.eventually(30*time.Second, "late requeued for its stale claim", func() (bool, string) {
		wl := f.workload(WorkloadNameForJob("late"))
		if wl == nil {
			return false, "no workload"
		}
		n := ptr.Deref(ptr.Deref(wl.Status.RequeueState, v1alpha1.RequeueState{}).Count, 0)
		return n >= 1 && f.hasEvent(wl.Name, ReasonEvicted, "ResourceClaim "+f.ns+"/data"),
			fmt.Sprintf("requeued %d times; %s %s: %s", n, wl.Status.State, wl.Status.Reason, wl.Status.Message)
	})

	unblock()
	f.pokeJob("late")
	pods := f.waitBound("late", 1)
	f.waitReservedFor("data", 1)
	f.assertSharedClaim("data", pods)
	if wl := f.workload(WorkloadNameForJob("late")); wl.Status.Reason == ReasonWaitingForClaims || strings.Contains(wl.Status.Message, "waits") {
		t.Errorf("late bound but its Workload says %s: %s", wl.Status.Reason, wl.Status.Message)
	}
}
