package controller

import (
	"github.com/gantry-sched/gantry/pkg/api"
)

// The HyperNodes' Topology (api.HyperNodeTopology, one level per tier) joins the queue
// objects of a snapshot as the loader adds it to a simulation's (manifest's
// addHyperNodeTopology, run by ResolveHyperNodes): a networkTopology bounded by a tier
// above 1 counts the tiers of that Topology.

// resolvedHyperNodes are the HyperNodes as the last snapshot resolved them (nil when
// none, or the controller has no cache: a unit test's bare Controller).
func (c *stateCache) resolvedHyperNodes() []api.HyperNode {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hyperNodes.resolved.HyperNodes
}

// withTopology returns objs with the HyperNodes' Topology added (a copy: the queue
// store's objects are shared between snapshots), or objs itself when there is none.
// A Topology of the same name defined on the cluster wins, with a warning, as the
// loader refuses the HyperNodes' one beside it.
func (s *hyperNodeStore) withTopology(objs *api.Objects) (*api.Objects, []string) {
	t := s.resolved.Topology
	if t == nil {
		return objs, nil
	}
	for _, have := range objs.Topologies {
		if have.Name == t.Name {
			return objs, []string{"HyperNode Topology not added: Topology " + t.Name + " is already defined on the cluster"}
		}
	}
	out := *objs
	out.Topologies = append(append(make([]api.Topology, 0, len(objs.Topologies)+1), objs.Topologies...), *t)
	return &out, nil
}
