package cluster

import (
	"sort"

	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// FreeAtLeast sets dst to the nodes with at least n units of device-plugin resource name
// free in the overlay, on GPUs of one of models (any model when models is empty; nodes
// that mix GPU models always qualify by their count over all GPUs). A unit is what the
// device model advertises under name (NodeDevices.Free), except nvidia.com/gpu on nodes
// in exclusive or fractional mode (Overlay.GPUMode), where it is a GPU whose free share
// is a whole GPU: the count placement's pre-filter compares a whole-GPU request with.
// n <= 0 gives every node. The cost is a few words per 64 nodes per level read, plus
// the nodes at the top level when n is above it.
func (o *Overlay) FreeAtLeast(dst *NodeSet, name resources.Name, n int64, models []devices.ModelID) {
	if n <= 0 {
		dst.fill(o.NumNodes())
		return
	}
	dst.reset(o.NumNodes())
	keys := o.base.index.keys
	g := sort.Search(len(keys), func(k int) bool { return keys[k].name >= name })
	for ; g < len(keys) && keys[g].name == name; g++ {
		if m := keys[g].model; m != "" && len(models) > 0 && !hasModel(models, m) {
			continue
		}
		for l := int(min(n, maxLevel)); l < maxLevel; l++ {
			dst.or(o.level(g*maxLevel + l - 1))
		}
		top := NodeSet{words: o.level(g*maxLevel + maxLevel - 1)}
		if n <= maxLevel {
			dst.or(top.words)
			continue
		}
		// Counts above maxLevel share the top level: read those nodes' own counts.
		for i := top.Next(0); i >= 0; i = top.Next(i + 1) {
			if o.count(i, int32(g)) >= n {
				dst.add(i)
			}
		}
	}
}

// count is node i's free count in group g (0 when the node is not in it).
func (o *Overlay) count(i int, g int32) int64 {
	st := o.state(i)
	if st.groups == nil {
		return 0
	}
	for k, id := range st.groups.ids {
		if id == g {
			return int64(st.counts[k])
		}
	}
	return 0
}

func hasModel(models []devices.ModelID, m devices.ModelID) bool {
	for _, x := range models {
		if x == m {
			return true
		}
	}
	return false
}

// StaticSet is Snapshot.StaticSet of the overlay's base (static sets do not depend on
// what is bound).
func (o *Overlay) StaticSet(key string, keep func(*Node) bool) *NodeSet {
	return o.base.StaticSet(key, keep)
}
