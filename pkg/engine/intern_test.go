package engine

import (
	"testing"

	gt "github.com/gantry-sched/gantry/internal/testing"
)

// Workloads of one shape share one shape key, GPU demand and class key; another shape,
// ClusterQueue or priority gets its own, equal to what it would compute alone.
func TestInternSharesPerShape(t *testing.T) {
	var tab internTables
	a := tab.shapeOf(gt.MakeWorkload("ns", "a").GPUs(4).Obj())
	b := tab.shapeOf(gt.MakeWorkload("other", "b").GPUs(4).Obj())
	c := tab.shapeOf(gt.MakeWorkload("ns", "c").GPUs(2).Obj())
	if a.gpu != b.gpu || a.shape != b.shape {
		t.Fatalf("same shape, different values: %+v / %+v", a, b)
	}
	if c.gpu == a.gpu || c.shape == a.shape {
		t.Fatalf("different shapes share values: %+v / %+v", a, c)
	}
	if want := gpuNeed(gt.MakeWorkload("ns", "c").GPUs(2).Obj()); c.gpu.milli != want {
		t.Errorf("interned demand %d milli-GPU, want %d", c.gpu.milli, want)
	}
	k1, k2 := tab.classOf("cq", a.shape, 1), tab.classOf("cq", b.shape, 1)
	if k1 != ClassKey("cq", a.shape, 1) || k1 != k2 {
		t.Fatalf("class keys %q / %q, want %q", k1, k2, ClassKey("cq", a.shape, 1))
	}
	for _, k := range []string{tab.classOf("cq2", a.shape, 1), tab.classOf("cq", a.shape, 2), tab.classOf("cq", c.shape, 1)} {
		if k == k1 {
			t.Errorf("class %q shared with another ClusterQueue, priority or shape", k)
		}
	}
}

// Past maxInterned entries a table starts over and keeps answering correctly.
func TestInternStartsOverWhenFull(t *testing.T) {
	var tab internTables
	for i := range maxInterned + 3 {
		if got, want := tab.classOf("cq", "s", int32(i)), ClassKey("cq", "s", int32(i)); got != want {
			t.Fatalf("class %d: %q, want %q", i, got, want)
		}
	}
	if n := len(tab.classes); n > maxInterned {
		t.Fatalf("class table holds %d entries, cap %d", n, maxInterned)
	}
}
