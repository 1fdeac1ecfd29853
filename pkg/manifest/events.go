package manifest

import (
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	"github.com/gantry-sched/gantry/pkg/cluster"
)

func (l *loader) clusterEvent(d document, c errs) {
	var in v1alpha1.ClusterEvent
	if !decode(d, &in, false, c) {
		return
	}
	clusterScoped(in.ObjectMeta, c)
	s := in.Spec
	e := api.ClusterEvent{
		Meta: metaOf(in.ObjectMeta, c.src, ""), Type: api.ClusterEventType(s.Type),
		Nodes: s.Nodes, Pool: s.Pool, ClusterQueue: s.ClusterQueue,
	}
	if !knownEventType(e.Type) {
		c.add("spec.type", "unknown event type %q: want NodeAdd, NodeRemove, NodeFail, NodeRecover, SpotInterruption, SpotReturn, MIGRelayout or QuotaChange", s.Type)
	}
	if s.At == "" {
		c.add("spec.at", "missing: when the event happens, e.g. \"40m\"")
	}
	e.At = duration(s.At, "spec.at", c)
	e.Notice = duration(s.Notice, "spec.notice", c)
	e.ReturnAfter = duration(s.ReturnAfter, "spec.returnAfter", c)
	e.ReconfigureTime = duration(s.ReconfigureTime, "spec.reconfigureTime", c)
	if s.AddPool != nil {
		p, ok := convertPool(s.AddPool.Name, s.AddPool.NodePoolSpec, "spec.addPool", c)
		if ok {
			if _, err := cluster.ExpandPool(p); err != nil {
				addClusterError(c, "spec.addPool", err)
			}
		}
		p.Source = c.src
		e.AddPool = &p
	}
	if s.Sharing != nil {
		sh := sharing(s.Sharing, "spec.sharing", c)
		e.Sharing = &sh
	}
	e.ResourceGroups = resourceGroups(s.ResourceGroups, "spec.resourceGroups", c)
	checkEventShape(e, c)
	if l.register("ClusterEvent", e.Meta, c) {
		l.objs.Events = append(l.objs.Events, e)
	}
}

func knownEventType(t api.ClusterEventType) bool {
	switch t {
	case api.EventNodeAdd, api.EventNodeRemove, api.EventNodeFail, api.EventNodeRecover,
		api.EventSpotInterruption, api.EventSpotReturn, api.EventMIGRelayout, api.EventQuotaChange:
		return true
	}
	return false
}

// checkEventShape requires the fields each event type needs.
func checkEventShape(e api.ClusterEvent, c errs) {
	switch e.Type {
	case api.EventNodeAdd:
		if e.AddPool == nil {
			c.add("spec.addPool", "missing: NodeAdd needs the pool of nodes that appear")
		}
	case api.EventNodeRemove, api.EventNodeFail, api.EventNodeRecover, api.EventSpotInterruption, api.EventSpotReturn:
		if len(e.Nodes) == 0 && e.Pool == "" {
			c.add("spec", "%s needs spec.nodes or spec.pool", e.Type)
		}
	case api.EventMIGRelayout:
		if e.Sharing == nil {
			c.add("spec.sharing", "missing: MIGRelayout needs the new sharing config")
		}
		if len(e.Nodes) == 0 && e.Pool == "" {
			c.add("spec", "%s needs spec.nodes or spec.pool", e.Type)
		}
	case api.EventQuotaChange:
		if e.ClusterQueue == "" {
			c.add("spec.clusterQueue", "missing: QuotaChange names the ClusterQueue whose quota changes")
		}
	}
}

// duration parses an optional duration field.
func duration(s, path string, c errs) time.Duration {
	if s == "" {
		return 0
	}
	d, err := api.ParseDuration(s)
	if err != nil {
		c.add(path, "%v", err)
	}
	return d
}
