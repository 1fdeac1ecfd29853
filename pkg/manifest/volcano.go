package manifest

import (
	"sort"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	"github.com/gantry-sched/gantry/pkg/resources"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// convertVolcanoQueues turns the Volcano queues into ClusterQueues and Cohorts through
// the same mapping `gantry convert` writes out (mapVolcanoQueues), read the way a
// written-out ClusterQueue or Cohort is read.
func (l *loader) convertVolcanoQueues() {
	if len(l.volcanoQueues) == 0 {
		return
	}
	for _, m := range mapVolcanoQueues(l.volcanoQueues) {
		if m.cohort != nil {
			l.addCohort(m.cohort, m.q.c)
		} else {
			l.addClusterQueue(m.clusterQueue, m.q.c)
		}
	}
	if _, ok := l.seen["ResourceFlavor/"+VolcanoFlavor]; !ok {
		f := api.ResourceFlavor{Meta: api.Meta{Name: VolcanoFlavor, Source: l.volcanoQueues[0].c.src}}
		l.seen["ResourceFlavor/"+VolcanoFlavor] = f.Source
		l.objs.Flavors = append(l.objs.Flavors, f)
	}
}

// volcanoMapped is what one Volcano Queue becomes: a ClusterQueue, or a Cohort when other
// queues name it as their parent.
type volcanoMapped struct {
	q            volcanoQueue
	clusterQueue *v1alpha1.ClusterQueue
	cohort       *v1alpha1.Cohort
}

// mapVolcanoQueues maps every queue, in order; problems go to each queue's context.
func mapVolcanoQueues(qs []volcanoQueue) []volcanoMapped {
	parents := map[string]bool{VolcanoRootCohort: true}
	for _, q := range qs {
		if q.in.Spec.Parent != "" {
			parents[q.in.Spec.Parent] = true
		}
	}
	out := make([]volcanoMapped, 0, len(qs))
	for _, q := range qs {
		out = append(out, mapVolcanoQueue(q, parents))
	}
	return out
}

func mapVolcanoQueue(q volcanoQueue, parents map[string]bool) volcanoMapped {
	m := metaOf(q.in.ObjectMeta, q.c.src, "")
	meta := metav1.ObjectMeta{Name: m.Name, Labels: q.in.Labels, Annotations: q.in.Annotations, CreationTimestamp: q.in.CreationTimestamp}
	parent := q.in.Spec.Parent
	if parent == "" && m.Name != VolcanoRootCohort {
		parent = VolcanoRootCohort
	}
	groups := volcanoQuota(q)
	weight := int64(q.in.Spec.Weight)
	if weight <= 0 {
		weight = 1
	}
	fair := &v1alpha1.FairSharing{Weight: resource.NewQuantity(weight, resource.DecimalSI)}
	if parents[m.Name] {
		return volcanoMapped{q: q, cohort: &v1alpha1.Cohort{TypeMeta: gantryTypeMeta("Cohort"), ObjectMeta: meta,
			Spec: v1alpha1.CohortSpec{ParentName: parent, ResourceGroups: groups, FairSharing: fair}}}
	}
	if len(groups) == 0 {
		q.c.add("spec", "no deserved, guarantee or capability: Gantry cannot derive quota from a weight alone; set spec.deserved")
	}
	return volcanoMapped{q: q, clusterQueue: &v1alpha1.ClusterQueue{TypeMeta: gantryTypeMeta("ClusterQueue"), ObjectMeta: meta,
		Spec: v1alpha1.ClusterQueueSpec{
			Cohort: parent, QueueingStrategy: v1alpha1.QueueingStrategy(api.BestEffortFIFO), ResourceGroups: groups,
			// Volcano's preempt action (within the queue, by priority) and reclaim action
			// (across queues, whatever the priority).
			Preemption: &v1alpha1.ClusterQueuePreemption{WithinClusterQueue: v1alpha1.PreemptionPolicy(api.PreemptLowerPriority),
				ReclaimWithinCohort: v1alpha1.PreemptionPolicy(api.PreemptAny)},
			FairSharing: fair,
		}}}
}

func gantryTypeMeta(kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: kind}
}

// volcanoQuota maps deserved/capability/guarantee onto one resource group. Quantities are
// checked and computed as Amounts, then written back exactly (resources.Format reads
// back to the same Amount), so the written-out quota is the quota Gantry enforces.
func volcanoQuota(q volcanoQueue) []v1alpha1.ResourceGroup {
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
	fq := v1alpha1.FlavorQuotas{Name: VolcanoFlavor}
	rg := v1alpha1.ResourceGroup{}
	for _, n := range sorted {
		rq := volcanoResourceQuota(q, n)
		rg.CoveredResources = append(rg.CoveredResources, corev1.ResourceName(n))
		fq.Resources = append(fq.Resources, v1alpha1.ResourceQuota{Name: corev1.ResourceName(n),
			NominalQuota: exactQuantity(n, rq.Nominal), BorrowingLimit: optExactQuantity(n, rq.BorrowingLimit),
			LendingLimit: optExactQuantity(n, rq.LendingLimit)})
	}
	rg.Flavors = []v1alpha1.FlavorQuotas{fq}
	return []v1alpha1.ResourceGroup{rg}
}

func exactQuantity(n resources.Name, a resources.Amount) resource.Quantity {
	return resource.MustParse(resources.Format(n, a))
}

func optExactQuantity(n resources.Name, a *resources.Amount) *resource.Quantity {
	if a == nil {
		return nil
	}
	q := exactQuantity(n, *a)
	return &q
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
