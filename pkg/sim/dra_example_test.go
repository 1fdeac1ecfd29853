package sim

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gantry-sched/gantry/pkg/manifest"
)

// decisions renders what the scheduler decided, event by event: when, what, which
// workload, queue and flavors, and every pod's node and devices (victims too), so two
// runs with equal renderings admitted the same workloads in the same order onto the
// same nodes and device IDs.
func decisions(t *testing.T, paths ...string) []string {
	t.Helper()
	objs, err := manifest.Load(paths, nil)
	if err != nil {
		t.Fatalf("load %v: %v", paths, err)
	}
	s, err := New(objs, Options{KeepLog: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Run(); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range s.Log() {
		if r.Event == EvRejected {
			continue // the reason's wording names claims on one side: not a decision
		}
		line := fmt.Sprintf("%v %s %s %s %s victims=%v", r.T.Duration(), r.Event, r.Workload, r.ClusterQueue, r.Flavor, r.Victims)
		for _, p := range r.Pods {
			line += fmt.Sprintf(" %s@%s%v", p.Name, p.Node, p.Devices)
		}
		out = append(out, line)
	}
	return out
}

// The DRA example asks for the same jobs' GPUs and MIG instances through
// ResourceClaimTemplates and NVIDIA's DeviceClasses instead of nvidia.com/* limits; on
// the same cluster and queues every decision is the same.
func TestDRAExampleDecidesAsExtendedResources(t *testing.T) {
	ex := filepath.Join("..", "..", "examples")
	shared := []string{filepath.Join(ex, "cluster"), filepath.Join(ex, "queues"), filepath.Join(ex, "events")}
	extended := decisions(t, append(shared, filepath.Join(ex, "workloads"))...)
	claims := decisions(t, append(shared, filepath.Join(ex, "dra"))...)
	placed := 0
	for _, l := range extended {
		if strings.Contains(l, " placed ") {
			placed++
		}
	}
	if placed < 10 {
		t.Fatalf("only %d placements in the extended-resource run: the comparison would prove little", placed)
	}
	for i := 0; i < max(len(extended), len(claims)); i++ {
		var a, b string
		if i < len(extended) {
			a = extended[i]
		}
		if i < len(claims) {
			b = claims[i]
		}
		if a != b {
			t.Fatalf("decision %d differs:\nextended resources: %s\nDRA claims:         %s", i, a, b)
		}
	}
}
