package manifest

import (
	"sort"
	"strings"

	"github.com/gantry-sched/gantry/pkg/api"
)

// resolve runs once every file is read: it converts what needed all inputs (Volcano
// queues, grouped pods, PodGroups), adds implicit cohorts and checks every reference.
func (l *loader) resolve() {
	l.resolveHyperNodes() // before PodGroups are applied: their tiers need the HyperNodes
	// Before grouping: a plain pod's claim errors point at the pod.
	l.resolveClaims()
	l.groupPods()
	l.applyPodGroups()
	// Once the workloads know their queues: Volcano's default queue is stood in on demand.
	l.convertVolcanoQueues()
	l.implicitCohorts()
	l.checkCohortCycles()
	l.checkClusterQueues()
	l.resolveAdmissionChecks()
	l.checkFlavors()
	l.checkLocalQueues()
	l.checkPriorityClasses()
	l.resolveWorkloads()
	l.checkEvents()
	l.checkSlices()
	l.resolveLivePods()
}

// implicitCohorts adds a quota-less Cohort for every cohort name used by a ClusterQueue
// or a Cohort parent without a Cohort object of its own, as Kueue does.
func (l *loader) implicitCohorts() {
	defined := map[string]bool{}
	for _, c := range l.objs.Cohorts {
		defined[c.Name] = true
	}
	add := func(name string, src api.Source) {
		if name == "" || defined[name] {
			return
		}
		defined[name] = true
		l.objs.Cohorts = append(l.objs.Cohorts, api.Cohort{Meta: api.Meta{Name: name, Source: src}, FairSharing: api.FairSharing{WeightMilli: 1000}})
	}
	for _, q := range l.objs.ClusterQueues {
		add(q.Cohort, q.Source)
	}
	for i := 0; i < len(l.objs.Cohorts); i++ {
		add(l.objs.Cohorts[i].Parent, l.objs.Cohorts[i].Source)
	}
}

// checkCohortCycles reports each cycle of Cohort parents once, at its first member by name.
func (l *loader) checkCohortCycles() {
	parent := map[string]string{}
	for _, c := range l.objs.Cohorts {
		parent[c.Name] = c.Parent
	}
	reported := map[string]bool{}
	for _, name := range sortedKeys(parent) {
		path := []string{name}
		onPath := map[string]int{name: 0}
		for p := parent[name]; p != ""; p = parent[p] {
			if i, loop := onPath[p]; loop {
				cycle := append(path[i:], p)
				if !reported[cycle[0]] && cycle[0] == minString(cycle[:len(cycle)-1]) {
					for _, m := range cycle[:len(cycle)-1] {
						reported[m] = true
					}
					c := l.context("Cohort", cycle[0])
					c.add("spec.parentName", "cohort cycle: %s", strings.Join(cycle, " -> "))
				}
				break
			}
			onPath[p] = len(path)
			path = append(path, p)
		}
	}
}

func minString(s []string) string {
	m := s[0]
	for _, x := range s[1:] {
		if x < m {
			m = x
		}
	}
	return m
}

// checkClusterQueues: every flavor a queue or cohort lists must exist.
func (l *loader) checkClusterQueues() {
	flavors := map[string]bool{}
	for _, f := range l.objs.Flavors {
		flavors[f.Name] = true
	}
	check := func(kind, key string, groups []api.ResourceGroup) {
		for gi, g := range groups {
			for fi, f := range g.Flavors {
				if !flavors[f.Name] {
					c := l.context(kind, key)
					c.add(joinIndex(joinIndex("spec.resourceGroups", gi)+".flavors", fi)+".name", "ResourceFlavor %q not found", f.Name)
				}
			}
		}
	}
	for _, q := range l.objs.ClusterQueues {
		check("ClusterQueue", q.Key(), q.ResourceGroups)
	}
	for _, co := range l.objs.Cohorts {
		check("Cohort", co.Key(), co.ResourceGroups)
	}
}

// checkFlavors: a flavor's topologyName must name a Topology.
func (l *loader) checkFlavors() {
	topo := map[string]bool{}
	for _, t := range l.objs.Topologies {
		topo[t.Name] = true
	}
	for _, f := range l.objs.Flavors {
		if f.TopologyName != "" && !topo[f.TopologyName] {
			c := l.context("ResourceFlavor", f.Key())
			c.add("spec.topologyName", "Topology %q not found", f.TopologyName)
		}
	}
}

// checkLocalQueues: the ClusterQueue must exist. A namespace its namespaceSelector does
// not select is allowed, as in Kueue: the scheduler keeps such workloads pending with
// NamespaceNotSelected, and on a cluster the namespace's labels may change later.
func (l *loader) checkLocalQueues() {
	cqs := map[string]bool{}
	for _, q := range l.objs.ClusterQueues {
		cqs[q.Name] = true
	}
	for _, q := range l.objs.LocalQueues {
		if q.ClusterQueue != "" && !cqs[q.ClusterQueue] {
			l.context("LocalQueue", q.Key()).add("spec.clusterQueue", "ClusterQueue %q not found", q.ClusterQueue)
		}
	}
}

// checkPriorityClasses: at most one pod PriorityClass may be the global default.
func (l *loader) checkPriorityClasses() {
	var first string
	for _, pc := range l.objs.PriorityClasses {
		if pc.Kind != api.PodPriority || !pc.GlobalDefault {
			continue
		}
		if first != "" {
			c := l.context("PriorityClass", pc.Key())
			c.add("globalDefault", "PriorityClass %q is already the global default", first)
			continue
		}
		first = pc.Name
	}
}

// checkEvents: pools, nodes and ClusterQueues named by events must exist.
func (l *loader) checkEvents() {
	pools := map[string]bool{}
	nodes := l.nodeNames
	for _, p := range l.objs.NodePools {
		pools[p.Name] = true
	}
	for _, n := range l.objs.Nodes {
		nodes[n.Object.Name] = true
		if p := n.Object.Labels[api.LabelNodePool]; p != "" {
			pools[p] = true
		}
	}
	cqs := map[string]bool{}
	for _, q := range l.objs.ClusterQueues {
		cqs[q.Name] = true
	}
	for _, e := range l.objs.Events {
		c := l.context("ClusterEvent", e.Key())
		if e.AddPool != nil {
			pools[e.AddPool.Name] = true
		}
		if e.Pool != "" && !pools[e.Pool] {
			c.add("spec.pool", "node pool %q not found (no NodePool and no node labelled %s=%s)", e.Pool, api.LabelNodePool, e.Pool)
		}
		for i, n := range e.Nodes {
			if !nodes[n] {
				c.add(joinIndex("spec.nodes", i), "node %q not found", n)
			}
		}
		if e.ClusterQueue != "" && !cqs[e.ClusterQueue] {
			c.add("spec.clusterQueue", "ClusterQueue %q not found", e.ClusterQueue)
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
