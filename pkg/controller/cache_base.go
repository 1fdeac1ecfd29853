package controller

import (
	"reflect"
	"sync"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
)

// baseSnapshots keeps the cluster snapshot of the nodes alone, no pod on them, for
// the node generation (stateCache.nodeGen) and topologies it was built from. A pass
// lays its running pods over it on an overlay, which never writes its base, so passes
// that see the same nodes share one: at 10,000 nodes building it anew was a third of
// a pass's CPU, and most passes see no node change.
type baseSnapshots struct {
	mu   sync.Mutex
	gen  uint64
	topo []api.Topology
	snap *cluster.Snapshot
}

// get returns the snapshot of nodes (generation gen) with topo, built only when either
// changed since the last call. A nil receiver builds one every time.
func (b *baseSnapshots) get(nodes []cluster.Node, gen uint64, topo []api.Topology) (*cluster.Snapshot, error) {
	if b == nil {
		return cluster.NewSnapshot(nodes, topo)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.snap != nil && b.gen == gen && reflect.DeepEqual(b.topo, topo) {
		return b.snap, nil
	}
	snap, err := cluster.NewSnapshot(nodes, topo)
	if err != nil {
		return nil, err
	}
	b.gen, b.topo, b.snap = gen, topo, snap
	return snap, nil
}
