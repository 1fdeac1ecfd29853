package engine

import "github.com/gantry-sched/gantry/pkg/api"

// The scheduler keeps one copy of what workloads of one shape share: a fleet's hundred
// thousand pending workloads come in a few hundred shapes, and a shape key, GPU demand
// and class key of their own each were a fifth of the objects the garbage collector
// traced at every collection. The tables only grow with new shapes; past maxInterned
// they start over (workloads keep the copies they have, which are equal anyway).
const maxInterned = 1 << 16

// interned is what every workload of one shape shares.
type interned struct {
	shape string
	gpu   *gpuDemand
}

// classID is what ClassKey is made of.
type classID struct {
	clusterQueue, shape string
	priority            int32
}

// internTables are the scheduler's tables of shared values.
type internTables struct {
	shapes  map[string]interned
	classes map[classID]string
}

// shapeOf is w's shape key and GPU demand, shared with every workload of its shape.
func (t *internTables) shapeOf(w *api.Workload) interned {
	key := ShapeKey(w)
	if v, ok := t.shapes[key]; ok {
		return v
	}
	if t.shapes == nil || len(t.shapes) >= maxInterned {
		t.shapes = map[string]interned{}
	}
	v := interned{shape: key, gpu: demandOf(w)}
	t.shapes[key] = v
	return v
}

// classOf is ClassKey(clusterQueue, shape, priority), one string per class.
func (t *internTables) classOf(clusterQueue, shape string, priority int32) string {
	id := classID{clusterQueue: clusterQueue, shape: shape, priority: priority}
	if k, ok := t.classes[id]; ok {
		return k
	}
	if t.classes == nil || len(t.classes) >= maxInterned {
		t.classes = map[classID]string{}
	}
	k := ClassKey(clusterQueue, shape, priority)
	t.classes[id] = k
	return k
}
