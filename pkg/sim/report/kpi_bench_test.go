package report

import (
	"testing"

	"github.com/gantry-sched/gantry/pkg/resources"
)

// BenchmarkKPISample times one state sample of a 1,000-node, 8-GPU cluster with pending
// shapes (allocation, stranded capacity and fragmentation).
func BenchmarkKPISample(b *testing.B) {
	st := MakeState(0)
	for i := 0; i < 1000; i++ {
		n := MakeNode("n")
		for g := 0; g < 8; g++ {
			n.GPU("G2", "fractional", resources.MilliGPU((i*7+g*13)%1001))
		}
		st.Node(n)
	}
	st.Pending("ns/a", resources.Vector{resources.NvidiaGPU: 1}).Pending("ns/b", resources.Vector{resources.GPUMilli: 300})
	s := st.Obj()
	c := NewKPICollector(KPIOptions{Shapes: []ShapeCount{{GPUShape{Kind: ShapeWhole, GPUs: 1}, 5}, {GPUShape{Kind: ShapeFraction, Milli: 300}, 3}}})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.T = secs(int64(i))
		c.OnSample(s)
	}
}
