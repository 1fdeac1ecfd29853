//go:build k8sscale

package controller

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
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
// GANTRY_SCALE_PODS one-GPU pods, default 10,000), side by side, two tables.
//
// Create + bind, the binder running while the pods are created:
//   - the raw rate: create each pod and POST its Binding, 32 workers, client QPS 10000;
//   - kube-scheduler of the same release (client QPS 5000) binding the pods;
//   - Gantry binding the pods as plain-pod gangs of 8;
//   - Gantry binding pods/8 Jobs x 8 through a LocalQueue and ClusterQueue.
//
// Bind only, every pod created and seen before the binder starts:
//   - the raw rate: POST each pod's Binding, 32 workers;
//   - kube-scheduler started after the pods exist;
//   - Gantry's controller started after the plain-pod gangs exist.
//
// Each scenario gets a fresh namespace and its own fresh nodes, and the cluster is
// emptied after it. Each table gives pods/s, latencies at p50/p99 and each rate's ratio
// to its table's kube-scheduler and raw rates (see columnsFor). No speed is
// asserted; each scenario must bind every pod exactly once, keep gangs whole and
// over-commit no GPU.
func TestBenchK8s(t *testing.T) {
	shape := benchShape{nodes: envInt("GANTRY_SCALE_NODES", 2000), pods: envInt("GANTRY_SCALE_PODS", 10000)}
	shape.pods -= shape.pods % benchGang
	if shape.pods == 0 || shape.pods > benchNodeGPUs*shape.nodes {
		t.Fatalf("GANTRY_SCALE_PODS=%d GANTRY_SCALE_NODES=%d: want 8 to %d pods, a multiple of %d (one GPU each, all running at once)",
			shape.pods, shape.nodes, benchNodeGPUs*shape.nodes, benchGang)
	}
	cs := startBench(t, kubeenv.KWOKOptions{})
	gantry := buildGantry(t)
	createBind, bindOnly := benchScenarios(shape, gantry), benchBindOnlyScenarios(gantry)
	results := map[string]benchResult{}
	for _, sc := range append(append([]benchScenario(nil), createBind...), bindOnly...) {
		t.Run(sc.sub, func(t *testing.T) {
			r := runScenario(t, cs, shape, sc)
			results[sc.sub] = r
			t.Logf("%s: %d pods in %s: %.0f pods/s", sc.row, r.pods, r.elapsed.Round(time.Millisecond), r.rate())
		})
	}
	fmt.Printf("\n%d nodes x %d GPUs (KWOK), %d one-GPU pods, kube-apiserver %s + etcd, %d CPUs\n",
		shape.nodes, benchNodeGPUs, shape.pods, kubeenv.KubeVersion, runtime.NumCPU())
	fmt.Printf("\nCreate + bind (pods/s from the first create call to the last bind seen):\n\n")
	fmt.Print(benchTable(false, createBind, results))
	fmt.Printf("\nBind only (every pod created and seen first; pods/s from the binder's start to the last bind seen):\n\n")
	fmt.Print(benchTable(true, bindOnly, results))
}

// startBench starts KWOK with o on the test control plane (stopped in t's cleanup) and
// returns the benchmark's own client, fast enough never to throttle the work.
func startBench(t *testing.T, o kubeenv.KWOKOptions) kubernetes.Interface {
	env := kubeenv.Require(t, testEnv)
	if err := env.StartKWOKWith(o); err != nil {
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
	return cs
}

// runScenario measures one binder on fresh nodes and a fresh namespace (work and binder
// in submitAndStart's order), waits for every bind, then runs the correctness checks.
func runScenario(t *testing.T, cs kubernetes.Interface, shape benchShape, sc benchScenario) benchResult {
	f := newFixtureWith(t, false)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Minute)
	t.Cleanup(cancel)
	f.ctx = ctx
	b := &benchRun{f: f, cs: cs, shape: shape, prefix: strings.ReplaceAll(sc.sub, "-", ""), gangs: newGangClock()}
	t.Cleanup(b.teardown) // before the fixture's cleanup: it removes thousands of objects
	b.makeNodes()
	if sc.setup != nil {
		sc.setup(b)
	}
	clock := newPodClock(time.Now, sc.gang)
	stopWatch, err := watchPods(cs, f.ns, clock)
	if err != nil {
		t.Fatal(err)
	}
	defer stopWatch() // before the teardown, whose deletions are no binder's
	before, err := readAPIRequests(ctx, cs)
	if err != nil {
		t.Fatal(err)
	}
	stopProfile := profileScenario(t, sc.sub)
	start := b.submitAndStart(sc, clock)
	b.waitAllBound(clock, shape.pods, start)
	stopProfile()
	if after, err := readAPIRequests(ctx, cs); err == nil {
		t.Logf("writes to the API server until the last bind: %s", after.since(before, 10))
	}
	return b.check(clock, sc, start)
}

// submitAndStart submits the scenario's work and starts its binder in the scenario's
// order, and returns when the timer started. Create + bind: the binder, then the
// timer, then the work. Bind only: the work, every pod seen and none bound, then the
// timer, then the binder. The binder is stopped in the test's cleanup, so that a
// failure part way never leaves it running into the next scenario.
func (b *benchRun) submitAndStart(sc benchScenario, clock *podClock) time.Time {
	t := b.f.t
	if sc.bindOnly {
		sc.submit(b)
		b.waitAllSeenUnbound(clock, b.shape.pods)
		start := time.Now()
		t.Cleanup(sc.start(b))
		t.Logf("binder's start call returned after %s", time.Since(start).Round(time.Millisecond))
		return start
	}
	t.Cleanup(sc.start(b))
	start := time.Now()
	sc.submit(b)
	t.Logf("submitted in %s", time.Since(start).Round(time.Millisecond))
	return start
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
	if dir := os.Getenv("GANTRY_BENCH_DUMP"); dir != "" {
		dumpPodTimes(t, filepath.Join(dir, sc.sub+".csv"), pods, b.gangs)
	}
	r, err := resultOf(sc.row, start, pods, gangs, sc.bindOnly)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// dumpPodTimes writes one line per pod (name, gang, gang created, seen, bound and
// finished, Unix milliseconds, 0 for never) to path, for a look at where a scenario's
// time went (GANTRY_BENCH_DUMP names the folder).
func dumpPodTimes(t *testing.T, path string, pods []podTimes, gangs *gangClock) {
	ms := func(at time.Time) int64 {
		if at.IsZero() {
			return 0
		}
		return at.UnixMilli()
	}
	var b strings.Builder
	b.WriteString("pod,gang,gang_created_ms,seen_ms,bound_ms,finished_ms\n")
	for _, p := range pods {
		created, _ := gangs.get(p.gang)
		fmt.Fprintf(&b, "%s,%s,%d,%d,%d,%d\n", p.name, p.gang, ms(created), ms(p.seen), ms(p.bound), ms(p.finished))
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Errorf("GANTRY_BENCH_DUMP: %v", err)
	}
}

// profileScenario writes a CPU profile of the process from the scenario's first create
// to its last bind when GANTRY_BENCH_CPUPROFILE names a path prefix (the file is
// <prefix>-<scenario>.cpu): go test's -cpuprofile is written only after the teardown,
// which takes minutes at a fleet's size. It returns the function that stops it.
func profileScenario(t *testing.T, scenario string) func() {
	prefix := os.Getenv("GANTRY_BENCH_CPUPROFILE")
	if prefix == "" {
		return func() {}
	}
	f, err := os.Create(prefix + "-" + scenario + ".cpu")
	if err != nil {
		t.Fatalf("GANTRY_BENCH_CPUPROFILE: %v", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		t.Fatalf("GANTRY_BENCH_CPUPROFILE: %v (is go test's -cpuprofile set too?)", err)
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			t.Errorf("GANTRY_BENCH_CPUPROFILE: %v", err)
		}
		t.Logf("CPU profile of the scenario in %s", f.Name())
	}
}
