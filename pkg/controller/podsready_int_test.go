package controller

import (
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/internal/testing/k8s"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// testClock is the controller's clock in the waitForPodsReady tests: it moves only
// when the test moves it, so no timeout runs out on its own.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// podsReadyWorld is two 8-GPU nodes and a queue for both, and a controller running
// waitForPodsReady with a 5m timeout, blockAdmission, a 1m backoff and a limit of one
// requeue, on a clock the test moves.
func (f *fixture) podsReadyWorld(cq string) *testClock {
	f.t.Helper()
	f.create(k8s.MakeNode(cq+"-0").H100(8).Obj(), k8s.MakeNode(cq+"-1").H100(8).Obj(),
		k8s.MakeFlavor("h100").Obj(), k8s.MakeClusterQueue(cq).Quota("h100", "nvidia.com/gpu", "16").Obj(),
		k8s.MakeLocalQueue("", "lq", cq).Obj())
	clock := &testClock{t: time.Now().Truncate(time.Second)}
	cfg := api.DefaultWaitForPodsReady(5*time.Minute, true)
	cfg.Requeuing.BackoffBase, cfg.Requeuing.Limited, cfg.Requeuing.BackoffLimit = time.Minute, true, 1
	f.tune = func(o *Options) { o.PodsReady, o.Now = &cfg, clock.Now }
	f.startController()
	return clock
}

// setPodsReady marks every pod of the job Running and Ready, as its kubelet would once
// the containers pass their readiness probes.
func (f *fixture) setPodsReady(job string) {
	f.t.Helper()
	for _, p := range f.jobPods(job) {
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			var cur corev1.Pod
			if err := f.c.Get(f.ctx, client.ObjectKey{Namespace: f.ns, Name: p.Name}, &cur); err != nil {
				return err
			}
			cur.Status.Phase = corev1.PodRunning
			cur.Status.Conditions = append(cur.Status.Conditions, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()})
			return f.c.Status().Update(f.ctx, &cur)
		})
		if err != nil {
			f.t.Fatalf("pod %s Ready: %v", p.Name, err)
		}
	}
}

// waitWorkload waits until the job's Workload satisfies cond.
func (f *fixture) waitWorkload(job, what string, cond func(*v1alpha1.Workload) bool) *v1alpha1.Workload {
	f.t.Helper()
	var wl *v1alpha1.Workload
	f.eventually(30*time.Second, job+" "+what, func() (bool, string) {
		wl = f.workload(WorkloadNameForJob(job))
		if wl == nil {
			return false, "no workload yet"
		}
		pr := meta.FindStatusCondition(wl.Status.Conditions, ConditionPodsReady)
		return cond(wl), string(wl.Status.State) + " " + wl.Status.Reason + ": " + wl.Status.Message + "; PodsReady " + describeCondition(pr)
	})
	return wl
}

func describeCondition(c *metav1.Condition) string {
	if c == nil {
		return "none"
	}
	return string(c.Status) + "/" + c.Reason
}

// hasCondition reports whether wl has condition typ with the given status and reason.
func hasCondition(wl *v1alpha1.Workload, typ string, status metav1.ConditionStatus, reason string) bool {
	c := meta.FindStatusCondition(wl.Status.Conditions, typ)
	return c != nil && c.Status == status && c.Reason == reason
}

// TestPodsReadyTimeoutOnCluster: a Job whose pod never becomes Ready is evicted with
// PodsReadyTimeout once the clock passes the timeout, suspended, and requeued after its
// backoff; blockAdmission holds a second Job while the first is not Ready and admits it
// once the first is gone; the second timeout is past the requeue limit, and the Job is
// not admitted again.
func TestPodsReadyTimeoutOnCluster(t *testing.T) {
	f := newFixture(t)
	clock := f.podsReadyWorld("pr-timeout")
	f.create(k8s.MakeJob("", "stuck").Queue("lq").GPUs("8").Obj())
	f.waitBound("stuck", 1)
	admitted := f.waitWorkload("stuck", "waiting for its pods", func(wl *v1alpha1.Workload) bool {
		return hasCondition(wl, ConditionPodsReady, metav1.ConditionFalse, ReasonWaitForStart)
	})
	admittedAt := meta.FindStatusCondition(admitted.Status.Conditions, v1alpha1.WorkloadAdmitted).LastTransitionTime

	f.create(k8s.MakeJob("", "second").Queue("lq").GPUs("8").Obj())
	f.waitWorkload("second", "held by blockAdmission", func(wl *v1alpha1.Workload) bool {
		return wl.Status.Reason == ReasonWaitingPodsReady && wl.Status.Admission == nil
	})

	clock.Add(4 * time.Minute) // not yet
	f.passAfter("stuck")
	f.passAfter("stuck")
	if wl := f.workload(WorkloadNameForJob("stuck")); wl.Status.Admission == nil {
		t.Fatalf("stuck evicted before its timeout: %s %s", wl.Status.Reason, wl.Status.Message)
	}
	if wl := f.workload(WorkloadNameForJob("second")); wl.Status.Admission != nil {
		t.Fatalf("second admitted while stuck is not Ready")
	}
	clock.Add(2 * time.Minute)
	f.pokeJob("stuck")
	evicted := f.waitWorkload("stuck", "evicted by PodsReadyTimeout", func(wl *v1alpha1.Workload) bool {
		return wl.Annotations[AnnotationPodsReadyTimeouts] == "1" && hasCondition(wl, v1alpha1.WorkloadEvicted, metav1.ConditionTrue, api.ReasonPodsReadyTimeout)
	})
	if evicted.Status.Admission != nil {
		t.Errorf("evicted workload keeps its admission %+v", evicted.Status.Admission)
	}
	evictedAt := meta.FindStatusCondition(evicted.Status.Conditions, v1alpha1.WorkloadEvicted).LastTransitionTime
	if got := evictedAt.Sub(admittedAt.Time); got < 5*time.Minute {
		t.Errorf("evicted %s after admission, before the 5m timeout", got)
	}
	if rs := evicted.Status.RequeueState; rs == nil || rs.RequeueAt == nil || !rs.RequeueAt.Equal(ptr.To(metav1.NewTime(evictedAt.Add(time.Minute)))) {
		t.Errorf("requeueState %+v, want requeueAt one backoff (1m) after the eviction at %s", rs, evictedAt)
	}
	var job batchv1.Job
	if err := f.c.Get(f.ctx, client.ObjectKey{Namespace: f.ns, Name: "stuck"}, &job); err != nil {
		t.Fatal(err)
	}
	if !ptr.Deref(job.Spec.Suspend, false) {
		t.Errorf("stuck was not suspended by its eviction")
	}
	f.waitBound("second", 1) // the blocking workload is gone: blockAdmission lets it in

	f.setPodsReady("second")
	f.waitWorkload("second", "Ready", func(wl *v1alpha1.Workload) bool {
		return hasCondition(wl, ConditionPodsReady, metav1.ConditionTrue, ReasonPodsStarted)
	})
	clock.Add(2 * time.Minute) // past the backoff
	f.pokeJob("stuck")
	f.waitWorkload("stuck", "admitted again after its backoff", func(wl *v1alpha1.Workload) bool { return wl.Status.Admission != nil })

	clock.Add(6 * time.Minute) // still never Ready: the second timeout is past the limit of 1
	f.pokeJob("stuck")
	f.waitWorkload("stuck", "past the requeue limit", func(wl *v1alpha1.Workload) bool {
		return wl.Annotations[AnnotationPodsReadyTimeouts] == "2" && wl.Status.Admission == nil &&
			hasCondition(wl, ConditionRequeued, metav1.ConditionFalse, ReasonRequeueLimit)
	})
	clock.Add(time.Hour)
	f.passAfter("stuck")
	f.passAfter("stuck")
	if wl := f.workload(WorkloadNameForJob("stuck")); wl.Status.Admission != nil || wl.Status.Reason != ReasonRequeueLimit {
		t.Errorf("stuck past its requeue limit: admitted %v, reason %s; want not admitted, %s", wl.Status.Admission != nil, wl.Status.Reason, ReasonRequeueLimit)
	}
}

// TestPodsReadyKeptOnCluster: a Job whose pod becomes Ready gets PodsReady True
// (Started) and keeps its admission long past the timeout.
func TestPodsReadyKeptOnCluster(t *testing.T) {
	f := newFixture(t)
	clock := f.podsReadyWorld("pr-kept")
	f.create(k8s.MakeJob("", "healthy").Queue("lq").GPUs("8").Obj())
	f.waitBound("healthy", 1)
	f.setPodsReady("healthy")
	f.waitWorkload("healthy", "Ready", func(wl *v1alpha1.Workload) bool {
		return hasCondition(wl, ConditionPodsReady, metav1.ConditionTrue, ReasonPodsStarted)
	})

	clock.Add(time.Hour)
	f.passAfter("healthy")
	f.passAfter("healthy") // the first may have started before the clock moved
	wl := f.workload(WorkloadNameForJob("healthy"))
	if wl.Status.Admission == nil || !hasCondition(wl, ConditionPodsReady, metav1.ConditionTrue, ReasonPodsStarted) {
		t.Errorf("healthy: state %s reason %s, PodsReady %s; want admitted and Ready", wl.Status.State, wl.Status.Reason,
			describeCondition(meta.FindStatusCondition(wl.Status.Conditions, ConditionPodsReady)))
	}
}

// passAfter pokes the job and waits for a pass that started after the poke.
func (f *fixture) passAfter(job string) {
	f.t.Helper()
	before, _ := f.ctl.passStats()
	f.pokeJob(job)
	f.eventually(30*time.Second, "a pass after poking "+job, func() (bool, string) {
		n, _ := f.ctl.passStats()
		return n > before, strconv.FormatInt(n-before, 10) + " passes"
	})
}
