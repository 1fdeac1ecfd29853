package manifest

import (
	"sort"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/resources"
	corev1 "k8s.io/api/core/v1"
)

// Volcano queues become Kueue-style quota (see docs/manifests.md):
//
//   - a leaf Queue becomes a ClusterQueue of the same name; a Queue that other queues name
//     as parent becomes a Cohort. Queues without a parent sit in the cohort "root" (the
//     name of Volcano's own root queue), so all Volcano queues can borrow from each other.
//   - every resource named in deserved, capability or guarantee.resource is covered by one
//     resource group with the single flavor "volcano-default" (created if missing, no
//     node labels: Volcano has no flavors).
//   - deserved -> nominalQuota (guarantee when deserved is absent);
//     capability -> borrowingLimit = capability - nominal (no limit when absent);
//     guarantee -> lendingLimit = nominal - guarantee (the guaranteed part is never lent);
//     reclaimable: false -> borrowingLimit 0 (Kueue cannot protect borrowed usage from
//     reclaim, so a queue that must never be reclaimed never borrows);
//     weight -> fairSharing weight (default 1).
//   - preemption: LowerPriority within the queue (Volcano's preempt action) and Any
//     across the cohort for reclaim (Volcano's reclaim action).
//   - a PodGroup's queue names a Volcano Queue; Gantry gives the PodGroup's namespace a
//     LocalQueue of the same name pointing at it.

// VolcanoFlavor is the ResourceFlavor given to the quota of Volcano queues.
const VolcanoFlavor = "volcano-default"

// VolcanoRootCohort is the cohort of top-level Volcano queues.
const VolcanoRootCohort = "root"

// VolcanoDefaultQueue is the queue of PodGroups that name none, as in Volcano.
const VolcanoDefaultQueue = "default"

type volcanoQueue struct {
	in volcanoQueueWire
	c  errs
}

type podGroupInput struct {
	in podGroupWire
	c  errs
}

func (l *loader) volcanoQueue(d document, c errs) {
	var in volcanoQueueWire
	if !decode(d, &in, false, c) {
		return
	}
	clusterScoped(in.ObjectMeta, c)
	if in.Spec.Weight < 0 {
		c.add("spec.weight", "%d is negative", in.Spec.Weight)
	}
	if l.register("Queue", metaOf(in.ObjectMeta, c.src, ""), c) {
		l.volcanoQueues = append(l.volcanoQueues, volcanoQueue{in: in, c: c})
	}
}

func (l *loader) podGroup(d document, c errs) {
	var in podGroupWire
	if !decode(d, &in, false, c) {
		return
	}
	m := metaOf(in.ObjectMeta, c.src, DefaultNamespace)
	c.name = m.Key()
	if in.Spec.MinMember < 0 {
		c.add("spec.minMember", "%d is negative", in.Spec.MinMember)
	}
	if nt := in.Spec.NetworkTopology; nt != nil && nt.Mode != "" && nt.Mode != "hard" && nt.Mode != "soft" {
		c.add("spec.networkTopology.mode", "unknown mode %q: want hard or soft", nt.Mode)
	}
	if l.register("PodGroup", m, c) {
		l.podGroups[m.Key()] = &podGroupInput{in: in, c: c}
	}
}

// convertVolcanoQueues turns the Volcano queues into ClusterQueues and Cohorts.
func (l *loader) convertVolcanoQueues() {
	if len(l.volcanoQueues) == 0 {
		return
	}
	parents := map[string]bool{VolcanoRootCohort: true}
	for _, q := range l.volcanoQueues {
		if q.in.Spec.Parent != "" {
			parents[q.in.Spec.Parent] = true
		}
	}
	for _, q := range l.volcanoQueues {
		m := metaOf(q.in.ObjectMeta, q.c.src, "")
		parent := q.in.Spec.Parent
		if parent == "" && m.Name != VolcanoRootCohort {
			parent = VolcanoRootCohort
		}
		groups := volcanoQuota(q)
		weight := int64(q.in.Spec.Weight)
		if weight == 0 {
			weight = 1
		}
		if parents[m.Name] {
			co := api.Cohort{Meta: m, Parent: parent, ResourceGroups: groups, FairSharing: api.FairSharing{WeightMilli: weight * 1000}}
			if l.register("Cohort", m, q.c) {
				l.objs.Cohorts = append(l.objs.Cohorts, co)
			}
			continue
		}
		cq := api.ClusterQueue{
			Meta: m, Cohort: parent, QueueingStrategy: api.BestEffortFIFO, ResourceGroups: groups,
			Preemption: api.Preemption{WithinClusterQueue: api.PreemptLowerPriority, ReclaimWithinCohort: api.PreemptAny,
				BorrowWithinCohort: api.BorrowWithinCohort{Policy: api.PreemptNever}},
			FlavorFungibility: api.FlavorFungibility{WhenCanBorrow: api.MayStopSearch, WhenCanPreempt: api.TryNextFlavor},
			FairSharing:       api.FairSharing{WeightMilli: weight * 1000},
			StopPolicy:        api.StopNone,
		}
		if len(groups) == 0 {
			q.c.add("spec", "no deserved, guarantee or capability: Gantry cannot derive quota from a weight alone; set spec.deserved")
		}
		if l.register("ClusterQueue", m, q.c) {
			l.objs.ClusterQueues = append(l.objs.ClusterQueues, cq)
		}
	}
	if _, ok := l.seen["ResourceFlavor/"+VolcanoFlavor]; !ok {
		f := api.ResourceFlavor{Meta: api.Meta{Name: VolcanoFlavor, Source: l.volcanoQueues[0].c.src}}
		l.seen["ResourceFlavor/"+VolcanoFlavor] = f.Source
		l.objs.Flavors = append(l.objs.Flavors, f)
	}
}

// volcanoQuota maps deserved/capability/guarantee onto one resource group.
func volcanoQuota(q volcanoQueue) []api.ResourceGroup {
	s := q.in.Spec
	names := map[resources.Name]bool{}
	for _, l := range []corev1.ResourceList{s.Deserved, s.Capability, s.Guarantee.Resource} {
		for n := range l {
			names[resources.Name(n)] = true
		}
	}
	if len(names) == 0 {
		return nil
	}
	sorted := make([]resources.Name, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	fq := api.FlavorQuotas{Name: VolcanoFlavor}
	for _, n := range sorted {
		fq.Resources = append(fq.Resources, volcanoResourceQuota(q, n))
	}
	return []api.ResourceGroup{{CoveredResources: sorted, Flavors: []api.FlavorQuotas{fq}}}
}

func volcanoResourceQuota(q volcanoQueue, n resources.Name) api.ResourceQuota {
	s := q.in.Spec
	get := func(l corev1.ResourceList, path string) (resources.Amount, bool) {
		v, ok := l[corev1.ResourceName(n)]
		if !ok {
			return 0, false
		}
		a, ok := quantity(n, v, path+"["+string(n)+"]", q.c)
		return a, ok
	}
	rq := api.ResourceQuota{Name: n}
	deserved, hasD := get(s.Deserved, "spec.deserved")
	guarantee, hasG := get(s.Guarantee.Resource, "spec.guarantee.resource")
	capability, hasC := get(s.Capability, "spec.capability")
	switch {
	case hasD:
		rq.Nominal = deserved
	case hasG:
		rq.Nominal = guarantee
	}
	if hasC {
		if capability < rq.Nominal {
			q.c.add("spec.capability["+string(n)+"]", "capability %s is below deserved %s", resources.Format(n, capability), resources.Format(n, rq.Nominal))
		}
		b := max(capability-rq.Nominal, 0)
		rq.BorrowingLimit = &b
	}
	if hasG {
		if guarantee > rq.Nominal {
			q.c.add("spec.guarantee.resource["+string(n)+"]", "guarantee %s exceeds deserved %s", resources.Format(n, guarantee), resources.Format(n, rq.Nominal))
		}
		lend := max(rq.Nominal-guarantee, 0)
		rq.LendingLimit = &lend
	}
	if s.Reclaimable != nil && !*s.Reclaimable {
		zero := resources.Amount(0)
		rq.BorrowingLimit = &zero
	}
	return rq
}

// applyPodGroup gives a workload its Volcano PodGroup's gang size, queue, priority and
// network topology.
func applyPodGroup(w *workloadInput, pg *podGroupInput) {
	s := pg.in.Spec
	if s.MinMember > 0 {
		w.MinMember = s.MinMember
	}
	if w.Queue == "" {
		w.Queue, w.ext.volcanoQueue = s.Queue, true
		if w.Queue == "" {
			w.Queue = VolcanoDefaultQueue
		}
		w.ext.queueField = "PodGroup " + pg.c.name + " spec.queue"
	}
	if w.PriorityClass == "" && s.PriorityClassName != "" {
		w.PriorityClass, w.PrioritySource = s.PriorityClassName, api.PodPriority
		w.ext.priorityField = "PodGroup " + pg.c.name + " spec.priorityClassName"
	}
	if nt := s.NetworkTopology; nt != nil {
		for i := range w.PodSets {
			if w.PodSets[i].Topology != nil {
				continue
			}
			t := &api.TopologyRequest{Mode: api.TopologyPreferred}
			if nt.Mode == "hard" {
				t.Mode = api.TopologyRequired
			}
			if nt.HighestTierAllowed != nil {
				t.HighestTierAllowed = *nt.HighestTierAllowed
			}
			w.PodSets[i].Topology = t
		}
	}
}
