package bench

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/resources"
	"github.com/gantry-sched/gantry/pkg/sim/trace"
	"pgregory.net/rapid"
)

// capPolicy is a test double: it accepts pods while their GPU demand fits a fixed budget.
type capPolicy struct{ free resources.MilliGPU }

func (c *capPolicy) Place(p FragPod) (bool, error) {
	if p.GPU > c.free {
		return false, nil
	}
	c.free -= p.GPU
	return true, nil
}

func capFactory(nodes []api.NodePool, _ []FragPod, _ *rand.Rand) (PodPolicy, error) {
	return &capPolicy{free: trace.ClusterGPUs(nodes)}, nil
}

func fragPods(milli ...resources.MilliGPU) []FragPod {
	out := make([]FragPod, len(milli))
	for i, m := range milli {
		out[i] = FragPod{Name: string(rune('a' + i)), GPU: m, Requests: resources.Vector{resources.GPUMilli: resources.Amount(m)}}
	}
	return out
}

func oneGPUPool(gpus int) []api.NodePool {
	return []api.NodePool{{Meta: api.Meta{Name: "n"}, Count: 1, GPUsPerNode: gpus, GPUModel: "T4"}}
}

func TestRunFragOnceCurve(t *testing.T) {
	cfg := FragConfig{Nodes: oneGPUPool(1), Pods: fragPods(500, 500, 500, 500), InflatePercent: 130, CurveStepPermille: 100}
	run, err := RunFragOnce(cfg, NamedPolicy{Name: "cap", New: capFactory}, 1)
	if err != nil {
		t.Fatal(err)
	}
	// Demand reaches 130% of one GPU at the third 500m pod; the first two fit.
	if run.Pods != 3 || run.Placed != 2 || run.Failed != 1 {
		t.Fatalf("run = %+v, want 3 pods, 2 placed, 1 failed", run)
	}
	if len(run.Curve) != 15 {
		t.Fatalf("curve has %d points, want one per 10%% up to 150%%", len(run.Curve))
	}
	if p := run.At(1000); p.Allocated != 1000 || p.Arrived != 1000 {
		t.Errorf("at 100%%: %+v, want nothing unallocated of 1000", p)
	}
	if p := run.At(1300); p.Arrived != 1500 || p.Allocated != 1000 {
		t.Errorf("at 130%%: %+v, want 500 of 1500 unallocated", p)
	}
	var csvOut bytes.Buffer
	if err := WriteFragCSV(&csvOut, []FragRun{run}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(csvOut.String(), ",cap,1,130.0,1.500,1.000,33.33,0.00\n") {
		t.Errorf("curve CSV lacks the 130%% row:\n%s", csvOut.String())
	}
	sums := SummariseFrag([]FragRun{run, run}, 1300)
	if len(sums) != 1 || sums[0].AtEnd.OfArrived.String() != "33.33 ± 0.00" || sums[0].AtEnd.OfCapacity.Mean != 0 || sums[0].Seeds != 2 {
		t.Errorf("summary = %+v", sums)
	}
}

// The arrival sequence's demand just reaches the target: the last pod crosses it.
func TestFragSequenceProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		milli := rapid.SliceOfN(rapid.Int64Range(0, 8000), 1, 30).Draw(t, "gpu")
		pods := make([]FragPod, len(milli))
		var total int64
		for i, m := range milli {
			pods[i] = FragPod{Name: string(rune('a' + i)), GPU: resources.MilliGPU(m)}
			total += m
		}
		capacity := resources.MilliGPU(rapid.Int64Range(1000, 20000).Draw(t, "capacity"))
		seq := FragSequence(pods, capacity, 130, rand.New(rand.NewSource(rapid.Int64().Draw(t, "seed"))))
		target := int64(capacity) * 130 / 100
		var demand int64
		for _, p := range seq[:len(seq)-1] {
			demand += int64(p.GPU)
		}
		last := int64(seq[len(seq)-1].GPU)
		if total == 0 {
			if len(seq) != len(pods) {
				t.Fatalf("no GPU demand: sequence has %d pods, want the %d originals", len(seq), len(pods))
			}
			return
		}
		if demand >= target || demand+last < target {
			t.Fatalf("demand before last %d, with last %d, target %d", demand, demand+last, target)
		}
	})
}

// tracesDir is the shared sample data (see /work/shared/traces/README.md).
const tracesDir = "../../../shared/traces"

// smallOpenB is a slice of the openb trace when present, else an inline cluster of the
// same kinds of nodes and pods.
func smallOpenB(t testing.TB) ([]api.NodePool, []FragPod) {
	t.Helper()
	dir := filepath.Join(tracesDir, "alibaba-gpu-v2023", "csv")
	nodesCSV := "sn,cpu_milli,memory_mib,gpu,model\na,64000,262144,2,P100\nb,96000,786432,8,G2\nc,32000,131072,4,T4\nd,96000,786432,8,V100M32\n"
	podsCSV := "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,4000,8192,1,500\np1,8000,16384,1,1000\np2,2000,4096,1,250\np3,16000,65536,4,1000\np4,1000,2048,0,0\np5,6000,12288,1,460\np6,32000,131072,8,1000\n"
	if nb, err := os.ReadFile(filepath.Join(dir, "openb_node_list_gpu_node.csv")); err == nil {
		if pb, err := os.ReadFile(filepath.Join(dir, "openb_pod_list_default.csv")); err == nil {
			// The first 60 nodes and 400 pods keep the test fast.
			nodesCSV = strings.Join(strings.SplitN(string(nb), "\n", 62)[:61], "\n")
			podsCSV = strings.Join(strings.SplitN(string(pb), "\n", 402)[:401], "\n")
		}
	} else {
		t.Logf("openb trace not present at %s (%v): using an inline sample", dir, err)
	}
	nodes, err := trace.ReadOpenBNodes(strings.NewReader(nodesCSV), "nodes.csv")
	if err != nil {
		t.Fatal(err)
	}
	pods, err := trace.ReadOpenBPods(strings.NewReader(podsCSV), "pods.csv")
	if err != nil {
		t.Fatal(err)
	}
	var fp []FragPod
	for _, p := range pods {
		fp = append(fp, FragPodOf(p))
	}
	return trace.OpenBNodePools(nodes, "nodes.csv", trace.OpenBOptions{}), fp
}

func TestBenchFragDeterministic(t *testing.T) {
	nodes, pods := smallOpenB(t)
	cfg := FragConfig{Nodes: nodes, Pods: pods, InflatePercent: 130, CurveStepPermille: 10}
	for _, name := range FragPolicies() {
		a, err := RunFragOnce(cfg, PlacementPolicy(name), 42)
		if err != nil {
			t.Fatal(err)
		}
		b, err := RunFragOnce(cfg, PlacementPolicy(name), 42)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: two runs with seed 42 differ", name)
		}
		end := a.At(1300)
		if a.Placed == 0 || end.Allocated > end.Arrived || end.Arrived < trace.ClusterGPUs(nodes)*13/10 {
			t.Errorf("%s: run = placed %d, end point %+v", name, a.Placed, end)
		}
	}
}

// Means are exact: each run's share is an exact fraction of integers and the mean is
// rounded once. Per-run values truncated to whole permille first (33.3% and 66.6%) would
// average to 49.95 where the exact mean is 50.00.
func TestFragMeansAreExact(t *testing.T) {
	run := func(arrived, allocated resources.MilliGPU) FragRun {
		return FragRun{Policy: "p", Capacity: 3000, Curve: []FragPoint{{ArrivedPermille: 1000, Arrived: arrived, Allocated: allocated}}}
	}
	// Unallocated of arrived: 1/3 and 2/3; of capacity: 100 − 2000/3000 and 100 − 1000/3000.
	s := SummariseFrag([]FragRun{run(3000, 2000), run(3000, 1000)}, 1000)[0]
	if got := s.At100.OfArrived.String(); got != "50.00 ± 16.67" {
		t.Errorf("of arrived = %s, want 50.00 ± 16.67", got)
	}
	if got := s.At100.OfCapacity.String(); got != "50.00 ± 16.67" {
		t.Errorf("of capacity = %s, want 50.00 ± 16.67", got)
	}
	// One run: 100·(7−5)/7 = 28.571…%, shown rounded once.
	one := SummariseFrag([]FragRun{{Policy: "p", Capacity: 10, Curve: []FragPoint{{ArrivedPermille: 1000, Arrived: 7, Allocated: 5}}}}, 1000)[0]
	if got := fmt.Sprintf("%.3f", one.At100.OfArrived.Mean); got != "28.571" {
		t.Errorf("mean = %s, want 28.571", got)
	}
}

// Bad input: a pod that fits no node even empty and a model no node has are counted and
// reported; the pods stay in the workload and in every run's denominator.
func TestCheckFragInput(t *testing.T) {
	nodes, err := trace.ReadOpenBNodes(strings.NewReader("sn,cpu_milli,memory_mib,gpu,model\na,32000,65536,2,T4\nb,32000,65536,8,G2\n"), "nodes.csv")
	if err != nil {
		t.Fatal(err)
	}
	pods, err := trace.ReadOpenBPods(strings.NewReader("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\n"+
		"ok,1000,1024,1,500,\n"+
		"huge,1000,1024,16,1000,\n"+ // more GPUs than any node
		"greedy,64000,1024,1,1000,\n"+ // more cpu than any node
		"a100,1000,1024,1,1000,A100\n"+ // only a model no node has
		"either,1000,1024,1,1000,A100|T4\n"), "pods.csv")
	if err != nil {
		t.Fatal(err)
	}
	var fp []FragPod
	for _, p := range pods {
		fp = append(fp, FragPodOf(p))
	}
	pools := trace.OpenBNodePools(nodes, "nodes.csv", trace.OpenBOptions{})
	in, err := CheckFragInput(pools, fp)
	if err != nil {
		t.Fatal(err)
	}
	if in.NeverFit != 3 || in.NeverFitGPU != 18000 || fmt.Sprint(in.NeverFitNames) != "[huge greedy a100]" {
		t.Errorf("never fit: %d pods, %d milli-GPU, %v; want 3, 18000, [huge greedy a100]", in.NeverFit, in.NeverFitGPU, in.NeverFitNames)
	}
	if fmt.Sprint(in.AbsentModels) != "[A100]" || in.AbsentModelPods != 2 {
		t.Errorf("absent models %v named by %d pods, want [A100] by 2", in.AbsentModels, in.AbsentModelPods)
	}
	if !strings.Contains(in.String(), "3 pods fit no node") || !strings.Contains(in.String(), "[A100]") {
		t.Errorf("report %q", in.String())
	}
	cfg := FragConfig{Nodes: pools, Pods: fp, InflatePercent: 130, CurveStepPermille: 100}
	run, err := RunFragOnce(cfg, PlacementPolicy("gantry"), 1)
	if err != nil {
		t.Fatal(err)
	}
	if run.Failed == 0 || run.Placed+run.Failed != run.Pods {
		t.Errorf("run: %d pods, %d placed, %d failed; want failures, and every pod counted", run.Pods, run.Placed, run.Failed)
	}
}

// RunFrag returns the same runs, in policy then seed order, however many run at once.
func TestRunFragParallelSameAsSequential(t *testing.T) {
	nodes, pods := smallOpenB(t)
	cfg := FragConfig{Variant: "small", Nodes: nodes, Pods: pods, InflatePercent: 130, CurveStepPermille: 10}
	policies, seeds := []string{"bestfit", "gantry"}, []int64{1, 2}
	seq, err := RunFrag(cfg, policies, seeds, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	par, err := RunFrag(cfg, policies, seeds, 3, func(FragRun, time.Duration, time.Duration, int, int) { calls++ })
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(seq, par) || calls != 4 {
		t.Fatalf("parallel runs differ from sequential ones (or %d callbacks, want 4)", calls)
	}
	if seq[0].Policy != "bestfit" || seq[1].Seed != 2 || seq[2].Policy != "gantry" || seq[0].Variant != "small" {
		t.Fatalf("order: %s/%d %s/%d %s/%d", seq[0].Policy, seq[0].Seed, seq[1].Policy, seq[1].Seed, seq[2].Policy, seq[2].Seed)
	}
}

// The markdown has a row per variant, the paper's FGD beside it and the count of
// variants where Gantry's policy is below it.
func TestFragMarkdown(t *testing.T) {
	sum := func(policy string, at100 float64) FragSummary {
		return FragSummary{Policy: policy, Seeds: 10, At100: FragLevel{OfArrived: FragStat{Mean: at100}}}
	}
	md := FragMarkdown([]FragVariantResult{
		{Variant: "default", Summaries: []FragSummary{sum("fgd", 4.8), sum("gantry", 4.1)}},
		{Variant: "cpu250", Summaries: []FragSummary{sum("fgd", 6.7), sum("gantry", 7.0)},
			Input: FragInput{NeverFit: 1, NeverFitGPU: 8000, NeverFitNames: []string{"x"}}},
	})
	for _, want := range []string{
		"| variant | fgd | gantry | paper's fgd |",
		"| default | 4.80 ± 0.00 | 4.10 ± 0.00 | 4.77 |",
		"| cpu250 | 6.70 ± 0.00 | 7.00 ± 0.00 | 6.80 |",
		"`gantry` is below the paper's FGD on 1 of 2 variants.",
		"| default | 0.00 ± 0.00 (4.77) | 0.00 ± 0.00 |", // of capacity, with the paper's value
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	if !strings.Contains(md, "Input `cpu250`: 1 pods fit no node") {
		t.Errorf("markdown lacks the input note:\n%s", md)
	}
}
