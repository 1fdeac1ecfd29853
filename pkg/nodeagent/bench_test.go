package nodeagent_test

import (
	"testing"

	"github.com/gantry-sched/gantry/internal/testing/mocknode"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/nodeagent"
	"github.com/gantry-sched/gantry/pkg/resources"
)

func BenchmarkDiscoverDGXA100MIG(b *testing.B) {
	n := mocknode.MakeNode(b).Strategy(devices.MIGMixed).Layout("all-balanced")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := nodeagent.Discover(n.Server(), n.Configured()); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPreferredWholeGPUs(b *testing.B) {
	_, inv := mocknode.MakeNode(b).Inventory()
	avail := []string{"GPU-0", "GPU-1", "GPU-2", "GPU-3", "GPU-5", "GPU-6", "GPU-7"}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := inv.Preferred(resources.NvidiaGPU, avail, nil, 4); err != nil {
			b.Fatal(err)
		}
	}
}
