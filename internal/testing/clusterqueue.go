package testing

import (
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/resources"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ClusterQueueWrapper builds an api.ClusterQueue with the defaults the loader fills:
// BestEffortFIFO, weight 1, flavor fungibility MayStopSearch / TryNextFlavor.
type ClusterQueueWrapper struct{ cq api.ClusterQueue }

// MakeClusterQueue starts a ClusterQueue builder:
// MakeClusterQueue("a").Cohort("c").ResourceGroup(MakeFlavorQuotas("h100").Resource(gpu, "8").Obj()).Obj().
func MakeClusterQueue(name string) *ClusterQueueWrapper {
	return &ClusterQueueWrapper{api.ClusterQueue{Meta: api.Meta{Name: name}, QueueingStrategy: api.BestEffortFIFO,
		FairSharing:       api.FairSharing{WeightMilli: 1000},
		FlavorFungibility: api.FlavorFungibility{WhenCanBorrow: api.MayStopSearch, WhenCanPreempt: api.TryNextFlavor}}}
}

// Cohort puts the queue in a cohort.
func (b *ClusterQueueWrapper) Cohort(c string) *ClusterQueueWrapper { b.cq.Cohort = c; return b }

// Strategy sets the queueing strategy.
func (b *ClusterQueueWrapper) Strategy(s api.QueueingStrategy) *ClusterQueueWrapper {
	b.cq.QueueingStrategy = s
	return b
}

// Stop sets the stop policy.
func (b *ClusterQueueWrapper) Stop(p api.StopPolicy) *ClusterQueueWrapper {
	b.cq.StopPolicy = p
	return b
}

// Weight sets the fair-sharing weight in thousandths.
func (b *ClusterQueueWrapper) Weight(milli int64) *ClusterQueueWrapper {
	b.cq.FairSharing.WeightMilli = milli
	return b
}

// Preemption sets withinClusterQueue and reclaimWithinCohort.
func (b *ClusterQueueWrapper) Preemption(within, reclaim api.PreemptionPolicy) *ClusterQueueWrapper {
	b.cq.Preemption.WithinClusterQueue, b.cq.Preemption.ReclaimWithinCohort = within, reclaim
	return b
}

// BorrowWithinCohort sets borrowWithinCohort (threshold nil: no maximum priority).
func (b *ClusterQueueWrapper) BorrowWithinCohort(p api.PreemptionPolicy, threshold *int32) *ClusterQueueWrapper {
	b.cq.Preemption.BorrowWithinCohort = api.BorrowWithinCohort{Policy: p, MaxPriorityThreshold: threshold}
	return b
}

// Fungibility sets whenCanBorrow and whenCanPreempt.
func (b *ClusterQueueWrapper) Fungibility(whenBorrow, whenPreempt api.FungibilityPolicy) *ClusterQueueWrapper {
	b.cq.FlavorFungibility = api.FlavorFungibility{WhenCanBorrow: whenBorrow, WhenCanPreempt: whenPreempt}
	return b
}

// NamespaceSelector selects the namespaces carrying every label of matchLabels.
func (b *ClusterQueueWrapper) NamespaceSelector(matchLabels map[string]string) *ClusterQueueWrapper {
	b.cq.NamespaceSelector = &metav1.LabelSelector{MatchLabels: matchLabels}
	return b
}

// AdmissionFairSharing turns on fair sharing across the queue's LocalQueues.
func (b *ClusterQueueWrapper) AdmissionFairSharing(halfLife time.Duration) *ClusterQueueWrapper {
	b.cq.AdmissionFairSharing = api.AdmissionFairSharing{Enabled: true, HalfLife: halfLife}
	return b
}

// ResourceGroup adds a group of the flavors, in the order admission tries them.
func (b *ClusterQueueWrapper) ResourceGroup(flavors ...api.FlavorQuotas) *ClusterQueueWrapper {
	b.cq.ResourceGroups = append(b.cq.ResourceGroups, ResourceGroup(flavors...))
	return b
}

// Obj returns the ClusterQueue.
func (b *ClusterQueueWrapper) Obj() api.ClusterQueue { return b.cq }

// ResourceGroup is a group of the flavors covering every resource they list, in order.
func ResourceGroup(flavors ...api.FlavorQuotas) api.ResourceGroup {
	g := api.ResourceGroup{Flavors: flavors}
	seen := map[resources.Name]bool{}
	for _, f := range flavors {
		for _, r := range f.Resources {
			if !seen[r.Name] {
				seen[r.Name] = true
				g.CoveredResources = append(g.CoveredResources, r.Name)
			}
		}
	}
	return g
}

// FlavorQuotasWrapper builds one flavor's quotas in a resource group.
type FlavorQuotasWrapper struct{ fq api.FlavorQuotas }

// MakeFlavorQuotas starts the quotas of flavor.
func MakeFlavorQuotas(flavor string) *FlavorQuotasWrapper {
	return &FlavorQuotasWrapper{api.FlavorQuotas{Name: flavor}}
}

// Resource adds a nominal quota; Borrow and Lend set the limits of the last one added.
func (b *FlavorQuotasWrapper) Resource(r resources.Name, nominal string) *FlavorQuotasWrapper {
	b.fq.Resources = append(b.fq.Resources, api.ResourceQuota{Name: r, Nominal: resources.MustParse(r, nominal)})
	return b
}
func (b *FlavorQuotasWrapper) Borrow(limit string) *FlavorQuotasWrapper {
	last := &b.fq.Resources[len(b.fq.Resources)-1]
	a := resources.MustParse(last.Name, limit)
	last.BorrowingLimit = &a
	return b
}
func (b *FlavorQuotasWrapper) Lend(limit string) *FlavorQuotasWrapper {
	last := &b.fq.Resources[len(b.fq.Resources)-1]
	a := resources.MustParse(last.Name, limit)
	last.LendingLimit = &a
	return b
}

// Obj returns the flavor's quotas.
func (b *FlavorQuotasWrapper) Obj() api.FlavorQuotas { return b.fq }

// CohortWrapper builds an api.Cohort of weight 1.
type CohortWrapper struct{ c api.Cohort }

// MakeCohort starts a cohort builder.
func MakeCohort(name string) *CohortWrapper {
	return &CohortWrapper{api.Cohort{Meta: api.Meta{Name: name}, FairSharing: api.FairSharing{WeightMilli: 1000}}}
}

// Parent sets the parent cohort.
func (b *CohortWrapper) Parent(p string) *CohortWrapper { b.c.Parent = p; return b }

// ResourceGroup adds quota the cohort itself contributes to its subtree.
func (b *CohortWrapper) ResourceGroup(flavors ...api.FlavorQuotas) *CohortWrapper {
	b.c.ResourceGroups = append(b.c.ResourceGroups, ResourceGroup(flavors...))
	return b
}

// Obj returns the cohort.
func (b *CohortWrapper) Obj() api.Cohort { return b.c }
