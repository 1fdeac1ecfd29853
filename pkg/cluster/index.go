package cluster

import (
	"slices"
	"sort"

	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// The free index files every GPU node by how many units of each device-plugin resource
// it has free, so that placement visits only nodes that can hold a pod instead of every
// node of the fleet (see Overlay.FreeAtLeast).
//
// A group is one resource on nodes of one GPU model; inside a group a node sits in the
// level of its free count, capped at maxLevel (level 0, nothing free, is not stored).
// Each level is a NodeSet, so "at least n free" is the union of levels n..maxLevel,
// word by word. Snapshots share level sets; an overlay copies a level set the first time
// it moves a node in or out of it, so a new overlay costs nothing and a pod assumed or
// forgotten flips two bits per count that changes level.

// maxLevel is the highest level: counts at or above it share it (8 is a full node of
// the common 8-GPU servers, so whole-GPU requests read one level).
const maxLevel = 8

// groupKey names a group: a resource on nodes of one GPU model ("" for nodes that mix
// models, which every model's query reads).
type groupKey struct {
	name  resources.Name
	model devices.ModelID
}

// freeIndex is a snapshot's index: the groups, sorted, and their level sets,
// levels[g*maxLevel+l-1] holding the nodes at level l of group g. Level sets are shared
// between snapshots and never written once a snapshot holds them.
type freeIndex struct {
	keys   []groupKey
	levels [][]uint64
}

// nodeGroups is what one node contributes to the index (static, shared by clones):
// the groups it is filed in and how each count is read.
type nodeGroups struct {
	ids []int32
	// whole[k] is set when group ids[k] counts GPUs whose free share is a whole GPU
	// (nvidia.com/gpu on exclusive and fractional nodes, as placement's pre-filter
	// counts them); otherwise the count is the device model's free amount of the name.
	whole []bool
	names []resources.Name
	// plain: every count is a whole-GPU count, so no NodeDevices.Free call is needed.
	plain bool
	// units describes the GPUs of a node that is not plain (index_shift.go).
	units []gpuUnit
}

// indexNames lists the resources a node is filed under: every device-plugin resource
// its devices offer (gpu-milli and gpu-memory are offered by every GPU and left out),
// and nvidia.com/gpu on exclusive and fractional nodes. Sorted, so groups are stable.
// It appends to out.
func indexNames(st *nodeState, out []resources.Name) []resources.Name {
	if st.devices == nil {
		return out
	}
	for n, a := range st.devCap {
		if n.IsGPU() && n != resources.GPUMilli && n != resources.GPUMemory && a > 0 {
			out = append(out, n)
		}
	}
	if wholeMode(st.mode) && !hasName(out, resources.NvidiaGPU) {
		out = append(out, resources.NvidiaGPU)
	}
	slices.Sort(out)
	return out
}

func hasName(xs []resources.Name, n resources.Name) bool {
	for _, x := range xs {
		if x == n {
			return true
		}
	}
	return false
}

// wholeMode reports whether placement counts nvidia.com/gpu on a node of this mode by
// the GPUs whose free share is a whole GPU.
func wholeMode(m devices.SharingMode) bool { return m == devices.Exclusive || m == devices.Fractional }

// nodeModel is the canonical model of the node's GPUs, or "" when they mix models or a
// model is unknown. resolve caches look-ups by the name a GPU gives.
func nodeModel(gpus []devices.GPU, resolve map[devices.ModelID]devices.ModelID) devices.ModelID {
	var model devices.ModelID
	for k, g := range gpus {
		id, ok := resolve[g.Model]
		if !ok {
			if m, err := devices.LookupModel(string(g.Model)); err == nil {
				id = m.ID
			}
			resolve[g.Model] = id
		}
		if id == "" || (k > 0 && id != model) {
			return ""
		}
		model = id
	}
	return model
}

// freeCounts writes the node's current count for each of its groups into out.
func (g *nodeGroups) freeCounts(st *nodeState, out []int32) {
	var free resources.Vector
	if !g.plain {
		free = st.devices.Free()
	}
	for k := range g.ids {
		if g.whole[k] {
			out[k] = int32(min(wholeFree(st.gpuFree()), 1<<30))
			continue
		}
		out[k] = int32(min(free[g.names[k]], 1<<30))
	}
}

// wholeCounts rewrites the whole-GPU counts of out.
func (g *nodeGroups) wholeCounts(st *nodeState, out []int32) {
	for k := range g.ids {
		if g.whole[k] {
			out[k] = int32(min(wholeFree(st.gpuFree()), 1<<30))
		}
	}
}

// wholeFree counts the GPUs whose free share is a whole GPU.
func wholeFree(gf []resources.MilliGPU) int64 {
	var n int64
	for _, f := range gf {
		if f >= resources.MilliPerGPU {
			n++
		}
	}
	return n
}

// level is the level a count is filed at.
func level(c int32) int { return int(min(c, maxLevel)) }

// buildIndex files every node of a new snapshot: it decides the groups, gives each node
// its nodeGroups and counts, and fills the level sets. empty[i] tells that nothing is
// held on node i's devices (see nothingHeld).
func buildIndex(nodes []*nodeState, gpus [][]devices.GPU, empty []bool) *freeIndex {
	byKey := map[groupKey]int32{}
	var keys []groupKey
	names := make([][]resources.Name, len(nodes))
	total := 0
	var scratch []resources.Name
	var seen recent[[]resources.Name]
	for i, st := range nodes {
		if scratch = indexNames(st, scratch[:0]); len(scratch) == 0 {
			continue
		}
		same, ok := seen.find(func(x []resources.Name) bool { return slices.Equal(x, scratch) })
		if !ok {
			same = slices.Clone(scratch)
			seen.put(same)
		}
		names[i] = same
		total += len(names[i])
		for _, n := range names[i] {
			k := groupKey{n, st.model}
			if _, ok := byKey[k]; !ok {
				byKey[k] = 0
				keys = append(keys, k)
			}
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].name != keys[j].name {
			return keys[i].name < keys[j].name
		}
		return keys[i].model < keys[j].model
	})
	for g, k := range keys {
		byKey[k] = int32(g)
	}
	idx := &freeIndex{keys: keys, levels: make([][]uint64, len(keys)*maxLevel)}
	for l := range idx.levels {
		idx.levels[l] = make([]uint64, wordsFor(len(nodes)))
	}
	counts := make([]int32, total) // one array for every node's counts
	var built recent[*nodeGroups]
	var g nodeGroups // built here first; shared with equal nodes, copied when new
	for i, st := range nodes {
		if len(names[i]) == 0 {
			continue
		}
		g.fill(st, names[i], gpus[i], byKey)
		shared, ok := built.find(g.same)
		if !ok {
			shared = g.clone()
			built.put(shared)
		}
		st.groups = shared
		n := len(shared.ids)
		st.counts, counts = counts[:n:n], counts[n:]
		shared.initialCounts(st, empty[i], st.counts)
		for k, gid := range shared.ids {
			if l := level(st.counts[k]); l > 0 {
				s := NodeSet{words: idx.levels[int(gid)*maxLevel+l-1]}
				s.add(i)
			}
		}
	}
	return idx
}

// fill makes g how node st, offering names, is filed, reusing g's storage.
func (g *nodeGroups) fill(st *nodeState, names []resources.Name, gpus []devices.GPU, byKey map[groupKey]int32) {
	g.names, g.plain, g.ids, g.whole, g.units = names, true, g.ids[:0], g.whole[:0], g.units[:0]
	for _, n := range names {
		whole := n == resources.NvidiaGPU && wholeMode(st.mode)
		g.ids = append(g.ids, byKey[groupKey{n, st.model}])
		g.whole = append(g.whole, whole)
		g.plain = g.plain && whole
	}
	if !g.plain {
		g.units = appendUnits(g.units, gpus)
	}
}

// clone is a copy of g that shares none of its storage.
func (g *nodeGroups) clone() *nodeGroups {
	return &nodeGroups{names: g.names, plain: g.plain, ids: slices.Clone(g.ids), whole: slices.Clone(g.whole), units: slices.Clone(g.units)}
}

func (g *nodeGroups) same(o *nodeGroups) bool {
	return g.plain == o.plain && slices.Equal(g.ids, o.ids) && slices.Equal(g.whole, o.whole) &&
		slices.Equal(g.names, o.names) && slices.Equal(g.units, o.units)
}

// initialCounts is freeCounts for a node just built: when nothing is held on it the
// counts are its capacity, without building the free vector.
func (g *nodeGroups) initialCounts(st *nodeState, empty bool, out []int32) {
	if g.plain || !empty {
		g.freeCounts(st, out)
		return
	}
	for k := range g.ids {
		if g.whole[k] {
			out[k] = int32(min(wholeFree(st.gpuFree()), 1<<30))
		} else {
			out[k] = int32(min(st.devCap[g.names[k]], 1<<30))
		}
	}
}
