package sim

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/manifest"
)

// runPartitionable runs examples/dra-partitionable with its node pool's MIG layout set to
// layout, and returns the event log.
func runPartitionable(t *testing.T, layout string) []EventRecord {
	t.Helper()
	objs, err := manifest.Load([]string{filepath.Join("..", "..", "examples", "dra-partitionable")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs.NodePools) != 1 || !objs.NodePools[0].Sharing.DynamicMIG() {
		t.Fatalf("the example has %d node pools, want one with layout %s", len(objs.NodePools), devices.LayoutDynamic)
	}
	objs.NodePools[0].Sharing.Layout = layout
	s, err := New(objs, Options{KeepLog: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Run(); err != nil {
		t.Fatal(err)
	}
	return s.Log()
}

// placedAt renders a placed record's time and its pods' nodes and devices.
func placedAt(r EventRecord) string {
	out := r.T.Duration().String()
	for _, p := range r.Pods {
		out += fmt.Sprintf(" %s%v", p.Node, p.Devices)
	}
	return out
}

// The example's point: three Jobs asking through claims for a 3g.20gb and two 2g.10gb
// all run at once on its one A100, carved for them as they come; under mig-parted's
// all-balanced layout (one 2g.10gb) embed-b waits until embed-a finishes.
func TestDRAPartitionableExample(t *testing.T) {
	t.Run("all-dynamic", func(t *testing.T) {
		log := runPartitionable(t, devices.LayoutDynamic)
		want := map[string]string{
			"inference/summarize": "0s a100-dynamic-0[GPU-0/mig-3g.20gb@4]",
			"inference/embed-a":   "1m0s a100-dynamic-0[GPU-0/mig-2g.10gb@0]",
			"inference/embed-b":   "2m0s a100-dynamic-0[GPU-0/mig-2g.10gb@2]",
		}
		for wl, w := range want {
			p, ok := firstOf(log, wl, EvPlaced)
			if !ok {
				t.Errorf("%s never placed", wl)
				continue
			}
			if got := placedAt(p); got != w {
				t.Errorf("%s placed %s, want %s", wl, got, w)
			}
		}
	})
	t.Run("all-balanced", func(t *testing.T) {
		log := runPartitionable(t, devices.LayoutBalanced)
		for _, wl := range []string{"inference/summarize", "inference/embed-a"} {
			if p, ok := firstOf(log, wl, EvPlaced); !ok || p.T.Duration() > time.Minute {
				t.Errorf("%s placed %v (%v), want at once", wl, ok, placedAt(p))
			}
		}
		done, ok := firstOf(log, "inference/embed-a", EvFinished)
		if !ok {
			t.Fatal("embed-a never finishes")
		}
		p, ok := firstOf(log, "inference/embed-b", EvPlaced)
		if !ok || p.T != done.T || len(p.Pods) != 1 || p.Pods[0].Node != "a100-dynamic-0" {
			t.Errorf("embed-b placed %v (%s), want on a100-dynamic-0 when embed-a finishes at %v", ok, placedAt(p), done.T.Duration())
		}
	})
}
