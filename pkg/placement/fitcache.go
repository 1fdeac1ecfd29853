package placement

import (
	"strings"

	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// fitCache remembers the device model's answer per node state and GPU request shape.
// Between two single-pod decisions only one node changes, and pod shapes repeat, so most
// Fit calls of a stream of pods are answered from here. Entries are keyed by the node's
// cluster.Stamp, so a changed node is never answered from a stale entry.
type fitCache struct {
	byShape map[fitKey]map[int]fitEntry
}

// fitKey is a GPU request in comparable form.
type fitKey struct {
	units, shared int64
	milli         resources.MilliGPU
	memory        resources.MiB
	mig, models   string
}

type fitEntry struct {
	stamp  cluster.Stamp
	ok     bool
	assign devices.Assignment
}

// maxShapes bounds the cache: past it the cache starts over (a trace with ever new
// shapes gains nothing from it anyway).
const maxShapes = 256

func fitKeyOf(r devices.Request) fitKey {
	k := fitKey{units: r.Units, shared: r.Shared, milli: r.Milli, memory: r.Memory}
	if len(r.MIG) > 0 {
		parts := make([]string, len(r.MIG))
		for i, m := range r.MIG {
			parts[i] = m.Profile + "=" + resources.Format("", resources.Amount(m.Count))
		}
		k.mig = strings.Join(parts, ",")
	}
	if len(r.ModelConstraint) > 0 {
		parts := make([]string, len(r.ModelConstraint))
		for i, m := range r.ModelConstraint {
			parts[i] = string(m)
		}
		k.models = strings.Join(parts, ",")
	}
	return k
}

// fit answers the device part of pod p on node i, from the cache when node i has not
// changed since the same shape was last asked.
func (c *fitCache) fit(ov *cluster.Overlay, i int, p *PodRequest, key fitKey) (devices.Assignment, bool) {
	if c.byShape == nil || len(c.byShape) > maxShapes {
		c.byShape = map[fitKey]map[int]fitEntry{}
	}
	nodes := c.byShape[key]
	if nodes == nil {
		nodes = map[int]fitEntry{}
		c.byShape[key] = nodes
	}
	stamp := ov.Stamp(i)
	if e, hit := nodes[i]; hit && e.stamp == stamp {
		return e.assign, e.ok
	}
	var a devices.Assignment
	ok := false
	if d := ov.Devices(i); d != nil {
		var ref *devices.Refusal
		a, ref = d.Fit(p.GPU)
		ok = ref == nil
	}
	nodes[i] = fitEntry{stamp: stamp, ok: ok, assign: a}
	return a, ok
}
