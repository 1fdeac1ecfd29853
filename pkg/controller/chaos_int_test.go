package controller

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/internal/testing/k8s"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestChaos runs `gantry controller` as a real process against the test control plane
// and breaks things while ten gangs of 2 x 4 GPUs compete for 32 GPUs: kill -9 of the
// controller (once after a gang's admission and before all its Bindings), crashes
// of kube-apiserver and of etcd, a node deleted under a running gang (a fresh one
// joins), and jobs finishing. After each blow, once the controller has settled: no
// device is in two pods, no gang is partly bound, every Workload is admitted with all
// its pods bound or pending with a reason, and no Job has a failed pod. The order of
// the blows is seeded.
// chaosFlags make the controller quick to react, so each blow settles in seconds.
var chaosFlags = []string{"--interval=50ms", "--health-probe-bind-address=0", "--grace=1s"}

func TestChaos(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the gantry binary against the control plane")
	}
	f := newFixture(t)
	bin := buildGantry(t)
	for i := 1; i <= 4; i++ {
		f.create(k8s.MakeNode(fmt.Sprintf("chaos-%d", i)).H100(8).Obj())
	}
	f.create(k8s.MakeFlavor("h100").Obj(), k8s.MakeClusterQueue("chaos-cq").Quota("h100", "nvidia.com/gpu", "32").Obj(),
		k8s.MakeLocalQueue("", "lq", "chaos-cq").Obj())
	ctl := startGantry(t, bin, chaosFlags...)
	defer func() { ctl.kill() }()
	var jobs []string
	for i := 0; i < 10; i++ {
		name := fmt.Sprintf("gang-%d", i)
		jobs = append(jobs, name)
		f.create(k8s.MakeJob("", name).Queue("lq").Pods(2).GPUs("4").Obj())
	}
	f.settled(jobs)

	rng := rand.New(rand.NewSource(7))
	blows := []struct {
		name string
		do   func()
	}{
		{"kill -9 the controller", func() { ctl.kill(); ctl = startGantry(t, bin, chaosFlags...) }},
		{"kill -9 between admission and binding", func() {
			// Each finish frees a slot, so a gang is admitted and bound next; the window
			// between the Workload's admission and its pods' Bindings is short, so up to
			// three chances to hit it.
			caught := false
			for try := 0; try < 3 && !caught; try++ {
				f.finishJob(f.runningJob(jobs, rng))
				caught = f.waitAdmittedUnbound(jobs, 5*time.Second)
			}
			ctl.kill()
			t.Logf("killed with a gang admitted and not all bound: %v", caught)
			ctl = startGantry(t, bin, chaosFlags...)
		}},
		{"crash kube-apiserver", func() { f.crash("kube-apiserver") }},
		{"crash etcd", func() { f.crash("etcd") }},
		{"delete a node under a gang", func() {
			node := f.nodeOfRunning(jobs, rng)
			if err := f.c.Delete(f.ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}}); err != nil {
				t.Fatal(err)
			}
			f.create(k8s.MakeNode(node + "-new").H100(8).Obj())
		}},
		{"a job finishes", func() { f.finishJob(f.runningJob(jobs, rng)) }},
	}
	for round, i := range rng.Perm(len(blows)) {
		b := blows[i]
		t.Logf("round %d: %s", round, b.name)
		b.do()
		f.settled(jobs)
		if t.Failed() {
			t.Fatalf("after %q", b.name)
		}
	}
}

// crash kills and restarts a control-plane program.
func (f *fixture) crash(name string) {
	f.t.Helper()
	if err := testEnv.Crash(name, 60*time.Second); err != nil {
		f.t.Fatal(err)
	}
}

// runningJob picks one of the jobs with all pods running.
func (f *fixture) runningJob(jobs []string, rng *rand.Rand) string {
	f.t.Helper()
	var running []string
	for _, j := range jobs {
		if pods := f.jobPods(j); len(pods) == 2 && boundCount(pods) == 2 && pods[0].Status.Phase == corev1.PodRunning {
			running = append(running, j)
		}
	}
	if len(running) == 0 {
		f.t.Fatal("no running job")
	}
	return running[rng.Intn(len(running))]
}

// nodeOfRunning is a node holding a pod of a running job.
func (f *fixture) nodeOfRunning(jobs []string, rng *rand.Rand) string {
	return f.jobPods(f.runningJob(jobs, rng))[0].Spec.NodeName
}

// waitAdmittedUnbound waits until a gang is admitted and not all its pods are bound:
// the moment between the controller's admission and its Bindings (it may pass unseen;
// the kill still counts).
func (f *fixture) waitAdmittedUnbound(jobs []string, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		var wls v1alpha1.WorkloadList
		if err := f.c.List(f.ctx, &wls, client.InNamespace(f.ns)); err == nil {
			for _, wl := range wls.Items {
				if wl.Status.Admission == nil || wl.Status.State == v1alpha1.StateFinished {
					continue
				}
				for _, j := range jobs {
					if WorkloadNameForJob(j) == wl.Name && boundCount(f.jobPods(j)) < 2 {
						return true
					}
				}
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	return false
}

// settled waits until the controller's decisions hold everywhere (each Workload
// admitted with every pod bound, or pending with a reason; every job's pods
// accounted for), then checks that no device is held twice and no Job counted a
// failed pod.
func (f *fixture) settled(jobs []string) {
	f.t.Helper()
	f.eventually(90*time.Second, "every Workload admitted and bound, or pending with a reason", func() (bool, string) {
		for _, j := range jobs {
			if ok, why := f.jobSettled(j); !ok {
				return false, j + ": " + why
			}
		}
		return true, ""
	})
	f.assertNoDeviceSharedTwice()
	for _, j := range jobs {
		var job batchv1.Job
		if err := f.c.Get(f.ctx, client.ObjectKey{Namespace: f.ns, Name: j}, &job); err != nil {
			f.t.Fatal(err)
		}
		if job.Status.Failed != 0 {
			f.t.Errorf("job %s counted %d failed pods", j, job.Status.Failed)
		}
	}
}

// jobSettled: a finished job's Workload is finished; an admitted one has its two pods
// bound on the nodes of its placements; a pending one has a reason and no pod bound.
func (f *fixture) jobSettled(job string) (bool, string) {
	wl := f.workload(WorkloadNameForJob(job))
	if wl == nil {
		return false, "no Workload"
	}
	var live []corev1.Pod
	for _, p := range f.jobPods(job) {
		if p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded {
			live = append(live, p)
		}
	}
	switch {
	case wl.Status.State == v1alpha1.StateFinished:
		return true, ""
	case wl.Status.Admission != nil:
		nodes := map[string]bool{}
		for _, pl := range wl.Status.Admission.Placements {
			nodes[pl.Node] = true
		}
		if len(live) != 2 || boundCount(live) != 2 {
			return false, "admitted, pods " + describePods(live)
		}
		for _, p := range live {
			if !nodes[p.Spec.NodeName] {
				return false, "pod " + p.Name + " bound off its placement: " + describePods(live)
			}
		}
		return true, ""
	default:
		if boundCount(live) != 0 || wl.Status.Reason == "" {
			return false, fmt.Sprintf("pending (%s %q), pods %s", wl.Status.State, wl.Status.Reason, describePods(live))
		}
		return !strings.Contains(wl.Status.Reason, "Admitted"), string(wl.Status.State)
	}
}
