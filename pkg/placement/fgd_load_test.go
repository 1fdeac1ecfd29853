package placement

import (
	"testing"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
)

func podSetOn(req resources.Vector, selector map[string]string) *api.PodSet {
	return &api.PodSet{Name: "p", Count: 1, Requests: req, NodeSelector: selector}
}

// Stranding: at the workload's 8 cores per GPU, 16 free cores serve 2 of 8 free GPUs;
// a CPU-only pod is judged against the ratio that counts CPU-only pods' cpu too.
func TestStranded(t *testing.T) {
	s := NewShapeStats()
	s.Observe(resources.Vector{resources.CPU: 8000, resources.NvidiaGPU: 1})
	s.Observe(resources.Vector{resources.CPU: 8000}) // CPU-only: 16 cores per GPU in all
	cases := []struct {
		name     string
		cpu      resources.Amount
		gpu      int64
		cpuOnly  bool
		stranded int64
	}{
		{"cpu for every GPU", 64000, 8000, false, 0},
		{"cpu for two of eight GPUs", 16000, 8000, false, 6000},
		{"no cpu left", 0, 3000, false, 3000},
		{"no GPU left", 0, 0, false, 0},
		{"CPU-only pods read 16 cores per GPU", 64000, 8000, true, 4000},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := s.load.stranded(tc.cpu, 1<<40, tc.gpu, tc.cpuOnly); got != tc.stranded {
				t.Fatalf("stranded = %d, want %d", got, tc.stranded)
			}
		})
	}
}

// Pressure: a place's share of GPU demand over its nodes' share of GPUs, summed over the
// places a node meets and capped at 1, whether nodes or pods were observed first.
func TestPlacePressure(t *testing.T) {
	const key = "model"
	t4, g2 := map[string]string{key: "T4"}, map[string]string{key: "G2"}
	gpu := resources.Vector{resources.NvidiaGPU: 1}
	cases := []struct {
		name       string
		tied, free int // pods tied to T4, pods that may run anywhere
		t4GPUs     int
		want       int64 // the T4 node's pressure in thousandths
	}{
		{"a quarter of the demand on half the GPUs", 1, 3, 4, 500},
		{"three quarters of the demand on a quarter of the GPUs: capped", 3, 1, 2, 1000},
		{"no tied demand", 0, 4, 4, 0},
	}
	for _, tc := range cases {
		for _, nodesFirst := range []bool{true, false} {
			s := NewShapeStats()
			nodes := func() {
				s.ObserveNode(t4, tc.t4GPUs)
				s.ObserveNode(g2, 8-tc.t4GPUs)
			}
			if nodesFirst {
				nodes()
			}
			for range tc.tied {
				s.ObservePodSet(podSetOn(gpu, t4))
			}
			for range tc.free {
				s.ObservePodSet(podSetOn(gpu, nil))
			}
			if !nodesFirst {
				nodes()
			}
			if got := s.load.pressure(s.where.mask(t4)); got != tc.want {
				t.Errorf("%s (nodes first %v): pressure %d, want %d", tc.name, nodesFirst, got, tc.want)
			}
			if got := s.load.pressure(s.where.mask(g2)); got != 0 {
				t.Errorf("%s: the G2 node has pressure %d, want 0", tc.name, got)
			}
		}
	}
}

// growth adds to the fragmentation delta the change in stranded GPU and the place
// pressure times the GPU taken, each times the observed pod count.
func TestGrowthAddsStrandingAndPressure(t *testing.T) {
	s := NewShapeStats()
	s.ObserveNode(map[string]string{"m": "T4"}, 2)
	s.ObserveNode(map[string]string{"m": "G2"}, 2)
	tied := resources.Vector{resources.CPU: 4000, resources.NvidiaGPU: 1}
	s.ObservePodSet(podSetOn(tied, map[string]string{"m": "T4"}))
	s.ObservePodSet(podSetOn(tied, nil))
	t4 := nodeFree{cpu: 8000, mem: 1 << 40, gpu: gpus(1000, 1000), places: s.where.mask(map[string]string{"m": "T4"})}
	one := wholeDevices(0)
	// Delta: taking a whole GPU of two leaves no partial GPU: no fragment for 1-GPU
	// shapes. Stranding: 8 cores at 4 per GPU serve both GPUs; after, 4 cores serve the
	// last one: none either way. Pressure: half the demand on half the GPUs, 1000 × 1.
	if got, want := s.growth(t4, 0, 0, one), s.delta(t4, 0, 0, one)+s.total*1000; got != want {
		t.Fatalf("growth on T4 = %d, want %d", got, want)
	}
	// A CPU-only pod taking 6 of 8 cores on the G2 node: at 4 cores per GPU (no CPU-only
	// pod observed) the 2 cores left serve half a GPU, so 1500 of 2000 are stranded,
	// none before; the G2 node meets no place, so there is no pressure.
	g2 := nodeFree{cpu: 8000, mem: 1 << 40, gpu: gpus(1000, 1000), places: s.where.mask(map[string]string{"m": "G2"})}
	if got, want := s.growth(g2, 6000, 0, nil), s.delta(g2, 6000, 0, nil)+s.total*1500; got != want {
		t.Fatalf("growth of a CPU-only pod = %d, want %d", got, want)
	}
}

func wholeDevices(gpu ...int) []devices.Device {
	var out []devices.Device
	for _, g := range gpu {
		out = append(out, devices.Device{GPU: g, Kind: devices.WholeGPU, Milli: resources.MilliPerGPU})
	}
	return out
}

// A pool's nodes are observed with the labels ExpandPool gives them: a pod selecting the
// GPU product label puts pressure on that pool's nodes only.
func TestObserveNodePoolLabels(t *testing.T) {
	s := NewShapeStats()
	for _, p := range []api.NodePool{
		{Meta: api.Meta{Name: "t4"}, Count: 2, CPU: 32000, Memory: 1 << 37, GPUModel: "T4", GPUsPerNode: 2},
		{Meta: api.Meta{Name: "h100"}, Count: 1, CPU: 32000, Memory: 1 << 37, GPUModel: "H100", GPUsPerNode: 4},
	} {
		if err := s.ObserveNodePool(p); err != nil {
			t.Fatal(err)
		}
	}
	t4, err := devices.LookupModel("T4")
	if err != nil {
		t.Fatal(err)
	}
	gpu := resources.Vector{resources.NvidiaGPU: 1}
	s.ObservePodSet(podSetOn(gpu, map[string]string{devices.LabelGPUProduct: string(t4.ID)}))
	s.ObservePodSet(podSetOn(gpu, nil))
	// Half the demand on the 4 T4 GPUs of 8: pressure 1000 on T4 nodes, none on H100.
	if got := s.load.pressure(s.where.mask(map[string]string{devices.LabelGPUProduct: string(t4.ID)})); got != 1000 {
		t.Errorf("T4 pressure %d, want 1000", got)
	}
	if s.load.capTotal != 8 || s.load.placeCap[1] != 4 {
		t.Errorf("capacity %d GPUs, %d meeting the T4 place; want 8 and 4", s.load.capTotal, s.load.placeCap[1])
	}
}
