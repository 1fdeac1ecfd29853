//go:build k8sscale

package controller

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/internal/testing/k8s"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// envInt reads a size override (GANTRY_SCALE_NODES, GANTRY_SCALE_PODS).
func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// createParallel runs n creations on 16 workers and returns how long they took.
func createParallel(t *testing.T, n int, create func(i int) error) time.Duration {
	start := time.Now()
	runParallel(t, 16, n, create)
	return time.Since(start)
}

// runParallel runs do(0..n-1) on the given number of workers and fails t with the
// first error once all are done.
func runParallel(t *testing.T, workers, n int, do func(i int) error) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	next := make(chan int)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := do(i); err != nil {
					errs <- err
				}
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// TestScaleBinding (`go test -tags k8sscale -run TestScaleBinding ./pkg/controller`; make
// bench-k8s runs TestBenchK8s, which measures the same Jobs beside kube-scheduler):
// 1,000 eight-GPU nodes and 5,000 one-GPU pods in Jobs of 8 through the real API server. It reports the API server's raw write rate,
// Gantry's pods bound per second, and the latency from Job creation to all of the
// Job's pods bound. Every gang must end up bound and no device shared.
func TestScaleBinding(t *testing.T) {
	nodes, pods := envInt("GANTRY_SCALE_NODES", 1000), envInt("GANTRY_SCALE_PODS", 5000)
	const gang = 8
	jobs := pods / gang
	f := newFixtureWith(t, false)
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Minute)
	defer cancel()
	f.ctx = ctx

	raw := createParallel(t, 2000, func(i int) error {
		return f.c.Create(f.ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("raw-%d", i), Namespace: f.ns}})
	})
	t.Logf("API server raw write rate: %.0f creates/s (2000 ConfigMaps, 16 writers)", 2000/raw.Seconds())

	createParallel(t, nodes, func(i int) error {
		n := k8s.MakeNode(fmt.Sprintf("scale-%04d", i)).H100(8).Obj()
		st := n.Status
		if err := f.c.Create(f.ctx, n); err != nil {
			return err
		}
		n.Status = st
		return f.c.Status().Update(f.ctx, n)
	})
	f.create(k8s.MakeFlavor("h100").Obj(), k8s.MakeClusterQueue("scale-cq").Quota("h100", "nvidia.com/gpu", strconv.Itoa(nodes*8)).Obj(),
		k8s.MakeLocalQueue("", "lq", "scale-cq").Obj())
	f.startController()

	created := make([]time.Time, jobs)
	start := time.Now()
	createParallel(t, jobs, func(i int) error {
		created[i] = time.Now()
		return f.c.Create(f.ctx, k8s.MakeJob(f.ns, fmt.Sprintf("j%04d", i)).Queue("lq").Pods(gang).GPUs("1").Obj())
	})
	t.Logf("created %d Jobs in %s", jobs, time.Since(start).Round(time.Millisecond))

	doneAt := make([]time.Time, jobs)
	remaining := jobs
	var admitted int
	var allAdmitted time.Time
	deadline := time.Now().Add(20 * time.Minute)
	for remaining > 0 && time.Now().Before(deadline) {
		if allAdmitted.IsZero() {
			// Admission alone (quota and placement decided, Workload status written), the
			// step Kueue's published rate measures; binding comes after.
			if admitted = f.countAdmitted(); admitted == jobs {
				allAdmitted = time.Now()
			}
		}
		var list corev1.PodList
		if err := f.c.List(f.ctx, &list, client.InNamespace(f.ns)); err != nil {
			t.Fatal(err)
		}
		bound := map[string]int{}
		for _, p := range list.Items {
			if p.Spec.NodeName != "" {
				bound[p.Labels[batchv1.JobNameLabel]]++
			}
		}
		now := time.Now()
		for i := range doneAt {
			if doneAt[i].IsZero() && bound[fmt.Sprintf("j%04d", i)] == gang {
				doneAt[i] = now
				remaining--
			}
		}
		time.Sleep(250 * time.Millisecond)
	}
	if remaining > 0 {
		t.Fatalf("%d of %d Jobs not fully bound in time", remaining, jobs)
	}
	var lat []time.Duration
	last := start
	for i := range doneAt {
		lat = append(lat, doneAt[i].Sub(created[i]))
		if doneAt[i].After(last) {
			last = doneAt[i]
		}
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	elapsed := last.Sub(start)
	t.Logf("%d pods in %d gangs bound on %d nodes in %s: %.0f pods/s", jobs*gang, jobs, nodes, elapsed.Round(time.Millisecond),
		float64(jobs*gang)/elapsed.Seconds())
	if !allAdmitted.IsZero() {
		t.Logf("%d Workloads admitted in %s: %.0f workloads/s (Job creation to the last admission)", jobs,
			allAdmitted.Sub(start).Round(time.Millisecond), float64(jobs)/allAdmitted.Sub(start).Seconds())
	}
	t.Logf("Job created -> all pods bound: p50 %s, p90 %s, max %s", lat[len(lat)/2].Round(time.Millisecond),
		lat[len(lat)*9/10].Round(time.Millisecond), lat[len(lat)-1].Round(time.Millisecond))
	f.assertNoDeviceSharedTwice()
}

// countAdmitted is how many Workloads of the fixture's namespace hold an admission.
func (f *fixture) countAdmitted() int {
	var wls v1alpha1.WorkloadList
	if err := f.c.List(f.ctx, &wls, client.InNamespace(f.ns)); err != nil {
		f.t.Fatal(err)
	}
	n := 0
	for _, wl := range wls.Items {
		if wl.Status.Admission != nil {
			n++
		}
	}
	return n
}
