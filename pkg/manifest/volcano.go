package manifest

import (
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
//     node labels: Volcano has no flavors). A weight-only queue covers the resources of
//     what it shares: the cluster's (its nodes), or its parent queue's.
//   - deserved -> nominalQuota (guarantee when deserved is absent); a resource with
//     neither gets the queue's weight share, as Volcano's proportion plugin derives
//     deserved (volcano_derive.go): the parent's amount (the cluster's capacity for
//     top-level queues) less the siblings' stated quota, shared by weight among the
//     siblings that share it, each capped at its capability (water filling);
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
	// implicitField is set on the stand-in for Volcano's own default queue
	// (volcano_default.go): the field of the first workload routed to it, where its
	// problems are reported.
	implicitField string
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
// written-out ClusterQueue or Cohort is read. Weight shares are taken of the nodes of
// the same inputs. It runs once PodGroups are applied: whether Volcano's default queue
// needs a stand-in depends on the queues the workloads end up in.
func (l *loader) convertVolcanoQueues() {
	l.implicitVolcanoDefault()
	if len(l.volcanoQueues) == 0 {
		return
	}
	for _, m := range mapVolcanoQueues(l.volcanoQueues, func() volcanoCapacity { return clusterCapacity(&l.objs) }) {
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
// capacity is asked for (it expands the node pools) only when a queue takes a share of
// the cluster by weight.
func mapVolcanoQueues(qs []volcanoQueue, capacity func() volcanoCapacity) []volcanoMapped {
	parents := map[string]bool{VolcanoRootCohort: true}
	amounts := make([]volcanoAmounts, len(qs))
	needCapacity := false
	for i, q := range qs {
		if q.in.Spec.Parent != "" {
			parents[q.in.Spec.Parent] = true
		}
		amounts[i] = parseVolcanoAmounts(q)
		needCapacity = needCapacity || amounts[i].needsShare()
	}
	var c volcanoCapacity
	if needCapacity {
		c = capacity()
	}
	shares := volcanoShares(qs, amounts, c)
	out := make([]volcanoMapped, 0, len(qs))
	for i, q := range qs {
		out = append(out, mapVolcanoQueue(q, parents, volcanoQuota(amounts[i], shares[i], q.in.Spec.Reclaimable, q.c)))
	}
	return out
}

func mapVolcanoQueue(q volcanoQueue, parents map[string]bool, groups []v1alpha1.ResourceGroup) volcanoMapped {
	m := metaOf(q.in.ObjectMeta, q.c.src, "")
	meta := metav1.ObjectMeta{Name: m.Name, Labels: q.in.Labels, Annotations: q.in.Annotations, CreationTimestamp: q.in.CreationTimestamp}
	parent := q.in.Spec.Parent
	if parent == "" && m.Name != VolcanoRootCohort {
		parent = VolcanoRootCohort
	}
	fair := &v1alpha1.FairSharing{Weight: resource.NewQuantity(volcanoWeight(q), resource.DecimalSI)}
	if parents[m.Name] {
		return volcanoMapped{q: q, cohort: &v1alpha1.Cohort{TypeMeta: gantryTypeMeta("Cohort"), ObjectMeta: meta,
			Spec: v1alpha1.CohortSpec{ParentName: parent, ResourceGroups: groups, FairSharing: fair}}}
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

// volcanoQuota maps the queue's quota onto one resource group covering share.names.
// Quantities are computed as Amounts, then written back exactly (resources.Format reads
// back to the same Amount), so the written-out quota is the quota Gantry enforces.
func volcanoQuota(a volcanoAmounts, share volcanoShare, reclaimable *bool, c errs) []v1alpha1.ResourceGroup {
	if len(share.names) == 0 {
		return nil
	}
	fq := v1alpha1.FlavorQuotas{Name: VolcanoFlavor}
	rg := v1alpha1.ResourceGroup{}
	for _, n := range share.names {
		rq := volcanoResourceQuota(a, share, n, reclaimable, c)
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

// volcanoResourceQuota: nominal is the queue's own quota (share.own); the limits are
// taken against its whole amount (for a parent, its subtree's): capability caps what it
// may use in all, guarantee is never lent.
func volcanoResourceQuota(a volcanoAmounts, share volcanoShare, n resources.Name, reclaimable *bool, c errs) api.ResourceQuota {
	rq := api.ResourceQuota{Name: n, Nominal: share.own[n]}
	amount := share.amount[n]
	if capability, ok := a.capability[n]; ok {
		if capability < amount {
			c.add("spec.capability["+string(n)+"]", "capability %s is below deserved %s", resources.Format(n, capability), resources.Format(n, amount))
		}
		b := max(capability-amount, 0)
		rq.BorrowingLimit = &b
	}
	if guarantee, ok := a.guarantee[n]; ok {
		if guarantee > amount {
			c.add("spec.guarantee.resource["+string(n)+"]", "guarantee %s exceeds deserved %s", resources.Format(n, guarantee), resources.Format(n, amount))
		}
		// A parent's lending limit stays within its own nominal quota, as every
		// lendingLimit must (its children's quota is theirs to lend).
		lend := max(min(amount-guarantee, rq.Nominal), 0)
		rq.LendingLimit = &lend
	}
	if reclaimable != nil && !*reclaimable {
		zero := resources.Amount(0)
		rq.BorrowingLimit = &zero
	}
	return rq
}
