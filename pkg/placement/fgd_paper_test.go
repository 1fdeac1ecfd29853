package placement

import (
	"math"
	"testing"

	"github.com/gantry-sched/gantry/pkg/resources"
	"pgregory.net/rapid"
)

// The paper's target workload: the most frequent shapes until they cover 95% of the
// pods, larger shapes first among equal counts, CPU-only pods included, zero cpu read as
// 100 milli-CPU.
func TestTypicalPods(t *testing.T) {
	s := NewShapeStats()
	add := func(n int, v resources.Vector) {
		for range n {
			s.Observe(v)
		}
	}
	add(50, resources.Vector{resources.CPU: 4000, resources.GPUMilli: 500})
	add(30, resources.Vector{resources.CPU: 8000})    // CPU-only
	add(15, resources.Vector{resources.NvidiaGPU: 1}) // no cpu
	add(4, resources.Vector{resources.CPU: 1000, resources.NvidiaGPU: 2})
	add(1, resources.Vector{resources.CPU: 1000, resources.NvidiaGPU: 8})
	tp := s.typicalPods()
	want := []typicalPod{
		{paperShape{cpu: 4000, milli: 500}, 50},
		{paperShape{cpu: 8000}, 30},
		{paperShape{cpu: 100, units: 1}, 15},
	}
	if tp.total != 95 || len(tp.pods) != len(want) {
		t.Fatalf("typical pods %+v (total %d), want %+v covering 95", tp.pods, tp.total, want)
	}
	for k, p := range want {
		if tp.pods[k] != p {
			t.Errorf("typical pod %d = %+v, want %+v", k, tp.pods[k], p)
		}
	}
	// Equal counts: the larger shape first.
	s2 := NewShapeStats()
	s2.Observe(resources.Vector{resources.CPU: 1000, resources.NvidiaGPU: 1})
	s2.Observe(resources.Vector{resources.CPU: 2000, resources.NvidiaGPU: 1})
	if got := s2.typicalPods().pods; len(got) != 2 || got[0].cpu != 2000 {
		t.Fatalf("tie order %+v, want the 2000m shape first", got)
	}
}

// A typical pod's fragment on a node: all free GPU when it takes none, lacks cpu or GPUs
// with room; otherwise the free share of the GPUs with too little free for it.
func TestPaperFragment(t *testing.T) {
	free := gpus(1000, 300, 600)
	const sum = 1900
	cases := []struct {
		name string
		tp   typicalPod
		cpu  resources.Amount
		want int64
	}{
		{"cpu-only pod: every free GPU", typicalPod{paperShape: paperShape{cpu: 1000}}, 8000, sum},
		{"500m share fits: the 300m GPU is fragment", typicalPod{paperShape: paperShape{cpu: 1000, milli: 500}}, 8000, 300},
		{"500m share without cpu: all", typicalPod{paperShape: paperShape{cpu: 9000, milli: 500}}, 8000, sum},
		{"700m share: 300m and 600m are fragment", typicalPod{paperShape: paperShape{cpu: 1000, milli: 700}}, 8000, 900},
		{"1 GPU: the partly used GPUs", typicalPod{paperShape: paperShape{cpu: 1000, units: 1}}, 8000, 900},
		{"2 GPUs with one untouched: all", typicalPod{paperShape: paperShape{cpu: 1000, units: 2}}, 8000, sum},
		{"another model: all", typicalPod{paperShape: paperShape{cpu: 1000, milli: 500, where: 1}}, 8000, sum},
	}
	for _, tc := range cases {
		if got := tc.tp.fragment(tc.cpu, free, 1, sum); got != tc.want {
			t.Errorf("%s: fragment %d, want %d", tc.name, got, tc.want)
		}
	}
}

// paperScore is ⌊100·sigmoid(Δ/1000)⌋ of the mean drop Δ = drop/total, computed by
// comparing integers with the thresholds; it agrees with the float formula away from
// the thresholds themselves.
func TestPaperScoreMatchesSigmoid(t *testing.T) {
	th := sigmoidThresholds()
	for _, tc := range []struct{ drop, total, want int64 }{
		{0, 7, 50}, {-1_000_000, 10, 0}, {1_000_000, 10, 99}, {1000, 1, 73}, {-1000, 1, 26},
	} {
		if got := paperScore(&th, tc.drop, tc.total); got != tc.want {
			t.Errorf("paperScore(%d, %d) = %d, want %d", tc.drop, tc.total, got, tc.want)
		}
	}
	rapid.Check(t, func(t *rapid.T) {
		total := rapid.Int64Range(1, 10_000).Draw(t, "total")
		drop := rapid.Int64Range(-8000*total, 8000*total).Draw(t, "drop")
		x := float64(drop) / float64(total) / 1000
		exact := 100 / (1 + math.Exp(-x))
		if math.Abs(exact-math.Round(exact)) < 1e-6 {
			return // on a threshold: rounding may go either way
		}
		if got, want := paperScore(&th, drop, total), int64(exact); got != want {
			t.Fatalf("paperScore(%d, %d) = %d, float formula %d", drop, total, got, want)
		}
	})
}
