package placement_test

import (
	"encoding/csv"
	"fmt"
	"math/rand"
	"os"
	"strconv"
	"testing"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/placement"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// bigCluster is 10,000 nodes in racks of 32: 7,000 whole-GPU H100 nodes and 3,000 A100
// nodes in MIG all-balanced (80,000 GPUs).
func bigCluster(b *testing.B) *cluster.Snapshot {
	nodes := make([]cluster.Node, 0, 10000)
	for i := 0; i < 10000; i++ {
		w := gt.MakeNode(fmt.Sprintf("n%05d", i)).Label(rack, fmt.Sprintf("r%03d", i/32))
		if i%10 < 7 {
			w = w.GPUs("H100", 8)
		} else {
			w = w.GPUs("A100-SXM4-80GB", 8).MIG("all-balanced")
		}
		nodes = append(nodes, w.Obj())
	}
	return snap(b, rackTopo, nodes...)
}

// BenchmarkGang16RackOn10000Nodes is the same gang with a required rack topology.
func BenchmarkGang16RackOn10000Nodes(b *testing.B) {
	s := bigCluster(b)
	w := gt.MakeWorkload("ns", "train").PodSet("workers", 16).Requests(gt.Req("cpu", "16", "nvidia.com/gpu", "8")).RequiredTopology(rack).Obj()
	b.ReportAllocs()
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		pl, d := placement.PlaceWorkload(s.Overlay(), w, nil, placement.Options{Rand: rand.New(rand.NewSource(1))})
		if d != nil || len(pl.Pods) != 16 {
			b.Fatalf("gang not placed: %s", d)
		}
	}
}

// BenchmarkGang32On10000Nodes places one 32-pod gang of 8-GPU pods on 10,000 nodes with
// 80,000 GPUs: 7,000 whole-GPU H100 nodes and 3,000 A100 nodes in MIG all-balanced.
func BenchmarkGang32On10000Nodes(b *testing.B) {
	s := bigCluster(b)
	w := gt.MakeWorkload("ns", "train").PodSet("workers", 32).Requests(gt.Req("cpu", "16", "nvidia.com/gpu", "8")).Obj()
	b.ReportAllocs()
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		pl, d := placement.PlaceWorkload(s.Overlay(), w, nil, placement.Options{Rand: rand.New(rand.NewSource(1))})
		if d != nil || len(pl.Pods) != 32 {
			b.Fatalf("gang not placed: %s", d)
		}
	}
}

// BenchmarkGang32On10000NodesFitCache is the same gang placed as the engine places it:
// with the placer's fit cache, kept from one placement to the next (nodes whose state
// did not change keep their device answers; the choosers reuse their buffers).
func BenchmarkGang32On10000NodesFitCache(b *testing.B) {
	s := bigCluster(b)
	w := gt.MakeWorkload("ns", "train").PodSet("workers", 32).Requests(gt.Req("cpu", "16", "nvidia.com/gpu", "8")).Obj()
	fits := &placement.FitCache{}
	b.ReportAllocs()
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		pl, d := placement.PlaceWorkload(s.Overlay(), w, nil, placement.Options{Rand: rand.New(rand.NewSource(1)), FitCache: fits})
		if d != nil || len(pl.Pods) != 32 {
			b.Fatalf("gang not placed: %s", d)
		}
	}
}

const openbDir = "../../../shared/traces/alibaba-gpu-v2023/csv/"

// BenchmarkFGD8000PodsOpenb places 8,000 single pods drawn from the openb pod list with
// Gantry's policy (the fragmentation scorer, learning the shapes as pods arrive) on the
// 1,213 openb GPU nodes (fractional sharing). One op is all 8,000.
func BenchmarkFGD8000PodsOpenb(b *testing.B) {
	nodeRows := readCSV(b, openbDir+"openb_node_list_gpu_node.csv")
	podRows := readCSV(b, openbDir+"openb_pod_list_default.csv")
	var nodes []cluster.Node
	for _, r := range nodeRows[1:] {
		gpus, _ := strconv.Atoi(r[3])
		nodes = append(nodes, gt.MakeNode(r[0]).CPU(r[1]+"m").Memory(r[2]+"Mi").
			GPUs(r[4], gpus).Sharing(devices.Sharing{Mode: devices.Fractional}).Obj())
	}
	s := snap(b, nil, nodes...)
	rnd := rand.New(rand.NewSource(42))
	var pods []*placement.PodRequest
	for len(pods) < 8000 {
		r := podRows[1+rnd.Intn(len(podRows)-1)]
		req := gt.Req("cpu", r[1]+"m", "memory", r[2]+"Mi")
		numGPU, _ := strconv.Atoi(r[3])
		milli, _ := strconv.Atoi(r[4])
		switch {
		case numGPU == 1 && milli > 0 && milli < 1000:
			req[resources.GPUMilli] = resources.Amount(milli)
		case numGPU > 0:
			req[resources.NvidiaGPU] = resources.Amount(numGPU)
		}
		p, err := placement.NewSimplePodRequest(req)
		if err != nil {
			b.Fatal(err)
		}
		pods = append(pods, p)
	}
	b.ReportAllocs()
	b.ResetTimer()
	placed := 0
	for n := 0; n < b.N; n++ {
		ov, shapes := s.Overlay(), placement.NewShapeStats()
		pol, _ := placement.NewPolicy(placement.PolicyGantry, shapes)
		r := rand.New(rand.NewSource(42))
		placed = 0
		for k, p := range pods {
			shapes.Observe(p.Requests)
			c, ok := pol.Choose(ov, p, r)
			if !ok {
				continue
			}
			if err := ov.AssumeAt(cluster.PodRef{Workload: api.WorkloadID(fmt.Sprint("p", k)), PodSet: "pod"}, c.Node, p.Requests, c.Devices); err != nil {
				b.Fatal(err)
			}
			placed++
		}
	}
	b.ReportMetric(float64(placed), "placed-pods") // a count for the report, not a quota
}

func readCSV(b *testing.B, path string) [][]string {
	f, err := os.Open(path)
	if err != nil {
		b.Skipf("trace not available: %v", err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		b.Fatal(err)
	}
	return rows
}

// BenchmarkGang32MIGOn10000Nodes places a 32-pod gang of 1g.10gb MIG pods on the big
// cluster (3,000 MIG nodes are candidates), without and with a FitCache shared across
// placements: each op starts a fresh overlay of the same snapshot, as an engine cycle
// does, so with the cache the device model is asked again only on changed nodes.
func BenchmarkGang32MIGOn10000Nodes(b *testing.B) {
	s := bigCluster(b)
	w := gt.MakeWorkload("ns", "infer").PodSet("workers", 32).Requests(gt.Req("cpu", "2", "nvidia.com/mig-1g.10gb", "1")).Obj()
	for _, tc := range []struct {
		name  string
		cache *placement.FitCache
	}{{"no-cache", nil}, {"fit-cache", &placement.FitCache{}}} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for n := 0; n < b.N; n++ {
				pl, d := placement.PlaceWorkload(s.Overlay(), w, nil, placement.Options{Rand: rand.New(rand.NewSource(1)), FitCache: tc.cache})
				if d != nil || len(pl.Pods) != 32 {
					b.Fatalf("gang not placed: %s", d)
				}
			}
		})
	}
}
