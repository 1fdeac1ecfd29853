package placement

import (
	"testing"

	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
	"pgregory.net/rapid"
)

const gib = resources.Amount(1 << 30)

// shapeSpec is one observed pod shape for the fluent stats builder.
type shapeSpec struct {
	milli    resources.MilliGPU // fraction of one GPU (0: whole GPUs)
	units    int                // whole GPUs
	cpu, mem resources.Amount
	count    int
}

// statsBuilder builds a ShapeStats fluently: newStats().Frac(500, 4000, 0, 2).Obj().
type statsBuilder struct{ specs []shapeSpec }

func newStats() *statsBuilder { return &statsBuilder{} }

func (b *statsBuilder) Frac(m resources.MilliGPU, cpu, mem resources.Amount, n int) *statsBuilder {
	b.specs = append(b.specs, shapeSpec{milli: m, cpu: cpu, mem: mem, count: n})
	return b
}

func (b *statsBuilder) Whole(k int, cpu, mem resources.Amount, n int) *statsBuilder {
	b.specs = append(b.specs, shapeSpec{units: k, cpu: cpu, mem: mem, count: n})
	return b
}

func (b *statsBuilder) Obj() *ShapeStats {
	s := NewShapeStats()
	for _, sp := range b.specs {
		for range sp.count {
			s.observe(sp.milli, sp.units, sp.cpu, sp.mem)
		}
	}
	return s
}

func gpus(f ...resources.MilliGPU) []resources.MilliGPU { return f }

// Observe keeps a GPU pod's binned cpu and memory with its GPU class and ignores pods
// without GPUs.
func TestObserveKeepsCPUAndMemory(t *testing.T) {
	s := NewShapeStats()
	s.Observe(resources.Vector{resources.CPU: 3152, resources.Memory: 1000 << 20, resources.GPUMilli: 810})
	s.Observe(resources.Vector{resources.CPU: 3152, resources.Memory: 1000 << 20, resources.GPUMilli: 810})
	s.Observe(resources.Vector{resources.CPU: 32000}) // CPU-only: not a shape
	if s.Total() != 2 || len(s.classes) != 1 {
		t.Fatalf("total %d, %d classes; want 2 pods in 1 class", s.Total(), len(s.classes))
	}
	c := s.classes[0]
	// cpu rounds up to 3200m, memory to 1024 MiB (4 bins of 256 MiB).
	want := cpuMemShape{cpu: 3200, mem: 1024 << 20, count: 2}
	if c.milli != 810 || c.units != 0 || len(c.shapes) != 1 || c.shapes[0] != want {
		t.Fatalf("class %+v, want 810m with shape %+v", c, want)
	}
}

// Hand-computed fragmentation of one node against a shape distribution.
func TestFragmentationAt(t *testing.T) {
	cases := []struct {
		name  string
		stats *ShapeStats
		node  nodeFree
		want  int64 // Σ over shapes of count × the free milli-GPU that shape cannot use
	}{
		{"cpu exhausted: all free GPU is fragment", newStats().Frac(500, 4000, 0, 1).Obj(),
			nodeFree{cpu: 2000, mem: 64 * gib, gpu: gpus(1000, 300)}, 1300},
		{"cpu enough: only the GPU with less than 500m free is fragment", newStats().Frac(500, 4000, 0, 1).Obj(),
			nodeFree{cpu: 8000, mem: 64 * gib, gpu: gpus(1000, 300)}, 300},
		{"memory exhausted: all free GPU is fragment", newStats().Frac(500, 0, gib, 1).Obj(),
			nodeFree{cpu: 8000, mem: gib / 2, gpu: gpus(1000, 300)}, 1300},
		{"2-GPU shape with two untouched GPUs: the partial GPU is fragment", newStats().Whole(2, 1000, 0, 1).Obj(),
			nodeFree{cpu: 8000, mem: gib, gpu: gpus(1000, 1000, 400)}, 400},
		{"2-GPU shape with one untouched GPU: everything is fragment", newStats().Whole(2, 1000, 0, 1).Obj(),
			nodeFree{cpu: 8000, mem: gib, gpu: gpus(1000, 400, 0)}, 1400},
		{"mixed: two 500m pods fit (300m fragment each), the 16-core 1-GPU pod does not (1300m)",
			newStats().Frac(500, 4000, 0, 2).Whole(1, 16000, 0, 1).Obj(),
			nodeFree{cpu: 8000, mem: gib, gpu: gpus(1000, 300)}, 2*300 + 1300},
		{"fully allocated GPUs: no fragment even with cpu exhausted", newStats().Frac(500, 4000, 0, 3).Obj(),
			nodeFree{cpu: 0, mem: 0, gpu: gpus(0, 0)}, 0},
		{"no shapes observed: no fragment", newStats().Obj(),
			nodeFree{cpu: 0, mem: 0, gpu: gpus(1000)}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.stats.fragmentationAt(tc.node); got != tc.want {
				t.Fatalf("fragmentation = %d, want %d", got, tc.want)
			}
		})
	}
}

// Hand-computed growth of fragmentation when one pod lands.
func TestFragmentationDelta(t *testing.T) {
	shareOn := func(g int, m resources.MilliGPU) []devices.Device {
		return []devices.Device{{GPU: g, Kind: devices.ShareDevice, Milli: m}}
	}
	cases := []struct {
		name     string
		stats    *ShapeStats
		node     nodeFree
		cpu, mem resources.Amount
		devs     []devices.Device
		want     int64 // fragmentation after minus before
	}{
		// Before: GPU0's 500m is fragment for 700m pods. Filling it to 200m shrinks the
		// fragment by 300m; splitting the fresh GPU to 700m leaves GPU0 as it was.
		{"300m pod on the partly used GPU shrinks fragment", newStats().Frac(700, 0, 0, 1).Obj(),
			nodeFree{cpu: 8000, mem: gib, gpu: gpus(500, 1000)}, 0, 0, shareOn(0, 300), -300},
		{"300m pod on the fresh GPU changes nothing", newStats().Frac(700, 0, 0, 1).Obj(),
			nodeFree{cpu: 8000, mem: gib, gpu: gpus(500, 1000)}, 0, 0, shareOn(1, 300), 0},
		// A CPU-only pod taking 4 of 6 free cores leaves 2: the 4-core GPU pods can no
		// longer use the node's free GPU, all 1000m becomes fragment.
		{"cpu-only pod strands the GPU of a small node", newStats().Frac(500, 4000, 0, 1).Obj(),
			nodeFree{cpu: 6000, mem: gib, gpu: gpus(1000)}, 4000, 0, nil, 1000},
		{"cpu-only pod on a node with cores to spare changes nothing", newStats().Frac(500, 4000, 0, 1).Obj(),
			nodeFree{cpu: 64000, mem: gib, gpu: gpus(1000)}, 4000, 0, nil, 0},
		{"memory counts the same way", newStats().Frac(500, 0, 2*gib, 1).Obj(),
			nodeFree{cpu: 8000, mem: 3 * gib, gpu: gpus(1000)}, 0, 2 * gib, nil, 1000},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.stats.delta(tc.node, tc.cpu, tc.mem, tc.devs); got != tc.want {
				t.Fatalf("delta = %d, want %d", got, tc.want)
			}
		})
	}
}

// The scorer ranks a CPU-only pod away from the node it would starve of cpu, and among
// nodes where it strands nothing, toward the one with the fewest free GPUs.
func TestFragmentationScoreCPUOnlyPod(t *testing.T) {
	s := newStats().Frac(500, 4000, 0, 5).Obj()
	p, err := NewSimplePodRequest(resources.Vector{resources.CPU: 4000})
	if err != nil {
		t.Fatal(err)
	}
	mk := func(freeCPU resources.Amount, free ...resources.MilliGPU) *Candidate {
		return &Candidate{Free: resources.Vector{resources.CPU: freeCPU, resources.Memory: 64 * gib},
			GPUFree: free, GPUMode: devices.Fractional, Pod: p}
	}
	f := Fragmentation{Shapes: s}
	cases := []struct {
		name string
		c    *Candidate
		want int64 // MaxScore/2 - growth·(tieSpan+1) + (tieSpan - free GPUs, rounded up)
	}{
		// 6 cores -> 2: all five 4-core pods lose the node, 2000m each: growth 2000m/pod.
		{"starved node", mk(6000, 1000, 1000), MaxScore/2 - 2000*(tieSpan+1) + tieSpan - 2},
		{"roomy node, two free GPUs", mk(64000, 1000, 1000), MaxScore/2 + tieSpan - 2},
		{"roomy node, 300m free (rounds up to one GPU)", mk(64000, 300, 0), MaxScore/2 + tieSpan - 1},
		{"roomy node, no GPU free", mk(64000, 0, 0), MaxScore/2 + tieSpan},
		{"node without GPUs", mk(64000), MaxScore/2 + tieSpan},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := f.Score(tc.c); got != tc.want {
				t.Fatalf("score %d, want %d", got, tc.want)
			}
		})
	}
}

// Properties: fragmentation is never negative, never more than observed pods × free GPU,
// never shrinks when a CPU-only pod lands, and is zero on a node whose GPUs are fully
// allocated, whatever its cpu and memory.
func TestPropFragmentationBounds(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := NewShapeStats()
		for range rapid.IntRange(0, 40).Draw(t, "pods") {
			cpu := resources.Amount(rapid.IntRange(0, 64000).Draw(t, "cpu"))
			mem := resources.Amount(rapid.IntRange(0, 256).Draw(t, "memGiB")) * gib
			if rapid.Bool().Draw(t, "fraction") {
				s.observe(resources.MilliGPU(rapid.IntRange(1, 999).Draw(t, "milli")), 0, cpu, mem)
			} else {
				s.observe(0, rapid.IntRange(1, 8).Draw(t, "units"), cpu, mem)
			}
		}
		n := nodeFree{cpu: resources.Amount(rapid.IntRange(-1, 96000).Draw(t, "freeCPU")),
			mem: resources.Amount(rapid.IntRange(0, 512).Draw(t, "freeMemGiB")) * gib}
		var sum int64
		for range rapid.IntRange(0, 8).Draw(t, "gpus") {
			f := resources.MilliGPU(rapid.SampledFrom([]int{0, 1000, rapid.IntRange(1, 999).Draw(t, "part")}).Draw(t, "free"))
			n.gpu = append(n.gpu, f)
			sum += int64(f)
		}
		got := s.fragmentationAt(n)
		if got < 0 || got > s.Total()*sum {
			t.Fatalf("fragmentation %d outside [0, %d·%d]", got, s.Total(), sum)
		}
		// Taking cpu or memory alone can only strand GPUs, never free them.
		cpu := resources.Amount(rapid.IntRange(0, 64000).Draw(t, "podCPU"))
		if d := s.delta(n, cpu, 0, nil); d < 0 {
			t.Fatalf("a %dm CPU-only pod shrinks fragmentation by %d", cpu, -d)
		}
		zero := nodeFree{cpu: n.cpu, mem: n.mem, gpu: make([]resources.MilliGPU, len(n.gpu))}
		if z := s.fragmentationAt(zero); z != 0 {
			t.Fatalf("fully allocated node has fragmentation %d", z)
		}
	})
}

// Property: past maxShapeKinds cpu/memory variants the bins coarsen, the variants stay
// under the cap (and Observe terminates), and no pod is lost from the counts.
func TestPropShapeBinningBounded(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := NewShapeStats()
		n := rapid.IntRange(0, 1500).Draw(t, "pods")
		for range n {
			s.observe(resources.MilliGPU(rapid.IntRange(1, 999).Draw(t, "milli")), 0,
				resources.Amount(rapid.IntRange(0, 128000).Draw(t, "cpu")), resources.Amount(rapid.IntRange(0, 1<<20).Draw(t, "memMiB"))<<20)
		}
		var kinds int
		var pods int64
		for _, c := range s.classes {
			var inClass int64
			for _, sh := range c.shapes {
				inClass += sh.count
				kinds++
			}
			if inClass != c.count {
				t.Fatalf("class %dm counts %d pods, its shapes %d", c.milli, c.count, inClass)
			}
			pods += inClass
		}
		if kinds-len(s.classes) > maxShapeKinds || kinds != s.kinds {
			t.Fatalf("%d kinds in %d classes (tracked %d), cap %d beyond one per class", kinds, len(s.classes), s.kinds, maxShapeKinds)
		}
		if pods != int64(n) || s.Total() != int64(n) {
			t.Fatalf("%d pods in shapes, total %d, observed %d", pods, s.Total(), n)
		}
	})
}

// BenchmarkFragmentationScore scores one 8-GPU node against a distribution the size of
// the openb trace's (about 150 cpu/memory/GPU kinds).
func BenchmarkFragmentationScore(b *testing.B) {
	s := NewShapeStats()
	for k := range 150 {
		cpu, mem := resources.Amount(1000+k*500), resources.Amount(k%40)*gib
		if k%3 == 0 {
			s.observe(0, 1+k%2, cpu, mem)
		} else {
			s.observe(resources.MilliGPU(100+k*37%900), 0, cpu, mem)
		}
	}
	before := nodeFree{cpu: 40000, mem: 128 * gib, gpu: gpus(1000, 1000, 400, 1000, 0, 1000, 650, 1000)}
	devs := []devices.Device{{GPU: 2, Kind: devices.ShareDevice, Milli: 300}}
	b.ReportAllocs()
	for b.Loop() {
		_ = s.delta(before, 4000, 8*gib, devs)
	}
}
