//go:build k8sscale

package controller

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/internal/testing/kubeenv"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// TestBenchK8s (make bench-k8s) measures, in one run on one control plane shape (the
// test control plane plus KWOK, GANTRY_SCALE_NODES nodes of 8 GPUs, default 2,000, and
// GANTRY_SCALE_PODS one-GPU pods, default 10,000), side by side:
//   - the raw rate: create each pod and POST its Binding, 32 workers, client QPS 10000;
//   - kube-scheduler of the same release (client QPS 5000) binding the pods;
//   - Gantry binding the pods as plain-pod gangs of 8;
//   - Gantry binding pods/8 Jobs x 8 through a LocalQueue and ClusterQueue.
//
// Each scenario gets a fresh namespace and its own fresh nodes, and the cluster is
// emptied after it. It prints one markdown table: pods/s (first submission to the
// last bind seen), pod seen -> bound and gang created -> all bound p50/p99, and each
// rate's ratio to kube-scheduler's and to the raw rate. No speed is asserted; each
// scenario must bind every pod exactly once, keep gangs whole and over-commit no GPU.
func TestBenchK8s(t *testing.T) {
	shape := benchShape{nodes: envInt("GANTRY_SCALE_NODES", 2000), pods: envInt("GANTRY_SCALE_PODS", 10000)}
	shape.pods -= shape.pods % benchGang
	if shape.pods == 0 || shape.pods > benchNodeGPUs*shape.nodes {
		t.Fatalf("GANTRY_SCALE_PODS=%d GANTRY_SCALE_NODES=%d: want 8 to %d pods, a multiple of %d (one GPU each, all running at once)",
			shape.pods, shape.nodes, benchNodeGPUs*shape.nodes, benchGang)
	}
	env := kubeenv.Require(t, testEnv)
	if err := env.StartKWOK(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := env.StopProgram("kwok"); err != nil {
			t.Error(err)
		}
	})
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS, cfg.Burst = benchClientQPS, benchClientQPS
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	scenarios := benchScenarios(shape)
	results := map[string]benchResult{}
	var rows []string
	for _, sc := range scenarios {
		rows = append(rows, sc.row)
		t.Run(sc.sub, func(t *testing.T) {
			r := runScenario(t, cs, shape, sc)
			results[sc.row] = r
			t.Logf("%s: %d pods in %s: %.0f pods/s", sc.row, r.pods, r.elapsed.Round(time.Millisecond), r.rate())
		})
	}
	fmt.Printf("\n%d nodes x %d GPUs (KWOK), %d one-GPU pods, kube-apiserver %s + etcd, %d CPUs\n\n",
		shape.nodes, benchNodeGPUs, shape.pods, kubeenv.KubeVersion, runtime.NumCPU())
	fmt.Print(benchTable(rows, results, scenarios[1].row, scenarios[0].row))
}

// runScenario measures one binder: fresh nodes and namespace, the binder started and
// ready, the work submitted, every bind seen, then the correctness checks.
func runScenario(t *testing.T, cs kubernetes.Interface, shape benchShape, sc benchScenario) benchResult {
	f := newFixtureWith(t, false)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Minute)
	t.Cleanup(cancel)
	f.ctx = ctx
	b := &benchRun{f: f, cs: cs, shape: shape, prefix: strings.ReplaceAll(sc.sub, "-", ""), gangs: newGangClock()}
	t.Cleanup(b.teardown) // before the fixture's cleanup: it removes thousands of objects
	b.makeNodes()
	clock := newPodClock(time.Now, sc.gang)
	stopWatch, err := watchPods(cs, f.ns, clock)
	if err != nil {
		t.Fatal(err)
	}
	defer stopWatch() // before the teardown, whose deletions are no binder's
	stopBinder := sc.start(b)
	defer stopBinder()
	start := time.Now()
	sc.submit(b)
	t.Logf("submitted in %s", time.Since(start).Round(time.Millisecond))
	b.waitAllBound(clock, shape.pods, start)
	return b.check(clock, sc, start)
}

// check asserts the scenario's correctness and returns its measurement: every pod
// bound exactly once, gangs whole, no GPU over-committed (from a fresh list of the
// pods and the nodes' allocatable).
func (b *benchRun) check(clock *podClock, sc benchScenario, start time.Time) benchResult {
	t := b.f.t
	pods, faults := clock.snapshot()
	problems := checkBoundOnce(pods, faults, b.shape.pods)
	if sc.gangs {
		problems = append(problems, checkGangsWhole(pods, benchGang)...)
	}
	list, err := b.cs.CoreV1().Pods(b.f.ns).List(b.f.ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list pods of %s: %v", b.f.ns, err)
	}
	_, alloc, err := b.readyNodes()
	if err != nil {
		t.Fatal(err)
	}
	problems = append(problems, checkNoOvercommit(list.Items, alloc)...)
	if len(problems) > 0 {
		if len(problems) > 20 {
			problems = append(problems[:20], fmt.Sprintf("... %d more", len(problems)-20))
		}
		t.Fatalf("%s: %d problems:\n%s", sc.row, len(problems), strings.Join(problems, "\n"))
	}
	var gangs *gangClock
	if sc.gangs {
		gangs = b.gangs
	}
	r, err := resultOf(sc.row, start, pods, gangs)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
