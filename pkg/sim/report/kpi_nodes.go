package report

import (
	"slices"

	"github.com/gantry-sched/gantry/pkg/resources"
	"github.com/gantry-sched/gantry/pkg/sim"
)

// nodeEntry is one node name's rows in the current state and what they add to the KPIs.
// A name has one row, two when the simulator lists a node both live and offline.
type nodeEntry struct {
	rows []sim.NodeState
	// heat are the rows as heat map rows, shared by every heat map taken (never written).
	heat  []HeatmapRow
	alloc []seriesPart
	// cap is what the rows added when capacity was last computed; stale marks rows
	// changed since (cap is then refreshed at the next capacity point).
	cap   capacityPart
	stale bool
}

// nodeTable is the current state's nodes by name, names kept sorted for heat maps.
type nodeTable struct {
	byName map[string]*nodeEntry
	names  []string
	stale  []string // names whose rows changed since the last capacity computation
}

func newNodeTable() nodeTable { return nodeTable{byName: map[string]*nodeEntry{}} }

// insert adds an empty entry for a new name.
func (t *nodeTable) insert(name string) *nodeEntry {
	e := &nodeEntry{}
	t.byName[name] = e
	i, _ := slices.BinarySearch(t.names, name)
	t.names = slices.Insert(t.names, i, name)
	return e
}

// delete drops a name.
func (t *nodeTable) delete(name string) {
	delete(t.byName, name)
	if i, ok := slices.BinarySearch(t.names, name); ok {
		t.names = slices.Delete(t.names, i, i+1)
	}
}

// markStale queues a changed entry for the next capacity computation.
func (t *nodeTable) markStale(name string, e *nodeEntry) {
	if !e.stale {
		e.stale = true
		t.stale = append(t.stale, name)
	}
}

// heatmap is every row's GPU allocation at t, nodes by name.
func (t *nodeTable) heatmap(at sim.Seconds) Heatmap {
	h := Heatmap{T: at, Rows: make([]HeatmapRow, 0, len(t.names))}
	for _, name := range t.names {
		h.Rows = append(h.Rows, t.byName[name].heat...)
	}
	return h
}

// putNodes replaces the rows of every node named in rows. Rows come by name, so a
// node's rows are one run of the slice, kept without copying; a name whose rows are
// split (rows not in order) gets them all.
func (c *KPICollector) putNodes(rows []sim.NodeState) {
	seen := map[string]bool{}
	for start, i := 0, 1; start < len(rows); i++ {
		if i < len(rows) && rows[i].Name == rows[start].Name {
			continue
		}
		run, name := rows[start:i:i], rows[start].Name
		if seen[name] {
			run = append(slices.Clip(c.nodes.byName[name].rows), run...)
		}
		seen[name] = true
		c.putNode(name, run)
		start = i
	}
}

// putNode sets one name's rows; unchanged rows cost a comparison only.
func (c *KPICollector) putNode(name string, rows []sim.NodeState) {
	e := c.nodes.byName[name]
	if e != nil && slices.EqualFunc(e.rows, rows, sameNode) {
		return
	}
	if e == nil {
		e = c.nodes.insert(name)
	} else {
		c.addAlloc(e.alloc, -1)
	}
	e.rows, e.heat, e.alloc = rows, heatRows(rows), allocParts(rows)
	c.addAlloc(e.alloc, 1)
	c.nodes.markStale(name, e)
}

// removeNode drops a name and everything its rows added.
func (c *KPICollector) removeNode(name string) {
	e := c.nodes.byName[name]
	if e == nil {
		return
	}
	c.addAlloc(e.alloc, -1)
	c.capTot.add(&e.cap, -1)
	c.nodes.delete(name)
}

// sameNode reports whether two rows are equal.
func sameNode(a, b sim.NodeState) bool {
	return a.Name == b.Name && a.Pool == b.Pool && a.CapacityType == b.CapacityType && a.Ready == b.Ready && slices.Equal(a.GPUs, b.GPUs)
}

// heatRows are rows as heat map rows (each with its own GPU slice, empty but not nil
// for a node without GPUs).
func heatRows(rows []sim.NodeState) []HeatmapRow {
	out := make([]HeatmapRow, 0, len(rows))
	for _, n := range rows {
		row := HeatmapRow{Node: n.Name, Down: !n.Ready, GPUs: make([]resources.MilliGPU, len(n.GPUs))}
		for i, g := range n.GPUs {
			row.GPUs[i] = g.Allocated
		}
		out = append(out, row)
	}
	return out
}
