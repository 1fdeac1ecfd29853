package sim

import (
	"fmt"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/engine"
)

// BenchmarkSimulate2000Jobs100Nodes replays 2,000 jobs of 1-8 GPUs arriving every 30s on
// 100 nodes of 8 H100s with a spot interruption, through the real engine.
func BenchmarkSimulate2000Jobs100Nodes(b *testing.B) {
	w := MakeWorld().Pool("spot", 20, 8, api.CapacitySpot).Pool("od", 80, 8, api.CapacityOnDemand).Queue("cq", 800, "spot", "od")
	for i := 0; i < 2000; i++ {
		w.Job(fmt.Sprintf("j%04d", i), 1, int64(1<<(i%4)), time.Duration(i)*30*time.Second, time.Duration(20+i%90)*time.Minute, 10*time.Minute)
	}
	objs := w.Event(api.ClusterEvent{Meta: api.Meta{Name: "r"}, Type: api.EventSpotInterruption, At: 3 * time.Hour, Pool: "spot",
		Notice: 2 * time.Minute, ReturnAfter: time.Hour}).Obj()
	cfg := engine.Config{Preemption: true, Reservations: true, Grace: 2 * time.Minute}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s, err := New(objs, Options{Policy: engine.Policy{Config: cfg, Seed: 1}})
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Run(); err != nil {
			b.Fatal(err)
		}
		cycles, considered := s.sched.Stats()
		b.ReportMetric(float64(cycles), "cycles")         // a benchmark metric, not accounting
		b.ReportMetric(float64(considered), "considered") // pending workloads handed to cycles
	}
}
