package bench

import (
	"bytes"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

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
	if p := run.At(1000); p.UnallocatedPermille != 0 || p.Arrived != 1000 {
		t.Errorf("at 100%%: %+v, want nothing unallocated of 1000", p)
	}
	if p := run.At(1300); p.UnallocatedPermille != 333 || p.Arrived != 1500 || p.Allocated != 1000 {
		t.Errorf("at 130%%: %+v, want 500 of 1500 unallocated (333‰)", p)
	}
	var csvOut bytes.Buffer
	if err := WriteFragCSV(&csvOut, []FragRun{run}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(csvOut.String(), "cap,1,130.0,1.500,1.000,33.3\n") {
		t.Errorf("curve CSV lacks the 130%% row:\n%s", csvOut.String())
	}
	sums := SummariseFrag([]FragRun{run, run}, 1300)
	if len(sums) != 1 || sums[0].AtEndMean != 33.3 || sums[0].AtEndStd != 0 || sums[0].Seeds != 2 {
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
