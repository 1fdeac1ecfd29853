package devices

import (
	"fmt"
	"slices"
	"sort"

	"github.com/gantry-sched/gantry/pkg/resources"
)

// What the external tests (prop_test.go, request_test.go) check inside a node: they
// build their nodes with the shared builders of internal/testing, which import this
// package, so they cannot be internal tests themselves.

// DumpState renders what is held on every GPU canonically (shares sorted).
func DumpState(n *NodeDevices) string {
	s := ""
	for _, g := range n.gpus {
		sh := slices.Clone(g.shares)
		sort.Slice(sh, func(i, j int) bool {
			return sh[i].milli < sh[j].milli || (sh[i].milli == sh[j].milli && sh[i].memory < sh[j].memory)
		})
		s += fmt.Sprintf("%d:%v%v%v%v%x|", g.spec.Index, g.wholeUsed, g.instUsed, g.replicaUsed, sh, g.carved)
	}
	return s
}

// FreeViewMismatch says where the kept per-GPU view (FreeMilliView) disagrees with Free
// recomputed from scratch, GPU by GPU; nil when it agrees everywhere.
func FreeViewMismatch(n *NodeDevices) error {
	view := n.FreeMilliView()
	for i := range n.gpus {
		v := resources.Vector{}
		if n.gpus[i].healthy {
			n.gpus[i].addOffer(v, true)
		}
		if view[i] != resources.MilliGPU(v[resources.GPUMilli]) {
			return fmt.Errorf("GPU-%d: FreeMilliView %d, Free says %d", n.gpus[i].spec.Index, view[i], v[resources.GPUMilli])
		}
	}
	return nil
}
