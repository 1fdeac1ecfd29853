package admission

import (
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/resources"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Fluent builders for admission tests, in the style of Kueue's testing wrappers:
// MakeClusterQueue("a").Cohort("c").ResourceGroup(MakeFlavorQuotas("h100").Resource(gpu, "8").Obj()).Obj()

const gpu = resources.NvidiaGPU

// t0 is the tests' epoch; workloads are created at t0 + seconds.
var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func amt(r resources.Name, s string) resources.Amount { return resources.MustParse(r, s) }

type cqBuilder struct{ cq api.ClusterQueue }

func MakeClusterQueue(name string) *cqBuilder {
	return &cqBuilder{api.ClusterQueue{Meta: api.Meta{Name: name}, QueueingStrategy: api.BestEffortFIFO,
		FairSharing:       api.FairSharing{WeightMilli: 1000},
		FlavorFungibility: api.FlavorFungibility{WhenCanBorrow: api.MayStopSearch, WhenCanPreempt: api.TryNextFlavor}}}
}
func (b *cqBuilder) Cohort(c string) *cqBuilder { b.cq.Cohort = c; return b }
func (b *cqBuilder) Strategy(s api.QueueingStrategy) *cqBuilder {
	b.cq.QueueingStrategy = s
	return b
}
func (b *cqBuilder) Stop(p api.StopPolicy) *cqBuilder { b.cq.StopPolicy = p; return b }
func (b *cqBuilder) Weight(milli int64) *cqBuilder {
	b.cq.FairSharing.WeightMilli = milli
	return b
}
func (b *cqBuilder) Preemption(within, reclaim api.PreemptionPolicy) *cqBuilder {
	b.cq.Preemption.WithinClusterQueue, b.cq.Preemption.ReclaimWithinCohort = within, reclaim
	return b
}
func (b *cqBuilder) BorrowWithinCohort(p api.PreemptionPolicy, threshold *int32) *cqBuilder {
	b.cq.Preemption.BorrowWithinCohort = api.BorrowWithinCohort{Policy: p, MaxPriorityThreshold: threshold}
	return b
}
func (b *cqBuilder) Fungibility(whenBorrow, whenPreempt api.FungibilityPolicy) *cqBuilder {
	b.cq.FlavorFungibility = api.FlavorFungibility{WhenCanBorrow: whenBorrow, WhenCanPreempt: whenPreempt}
	return b
}
func (b *cqBuilder) NamespaceSelector(matchLabels map[string]string) *cqBuilder {
	b.cq.NamespaceSelector = &metav1.LabelSelector{MatchLabels: matchLabels}
	return b
}
func (b *cqBuilder) AdmissionFairSharing(halfLife time.Duration) *cqBuilder {
	b.cq.AdmissionFairSharing = api.AdmissionFairSharing{Enabled: true, HalfLife: halfLife}
	return b
}

// ResourceGroup adds a group covering every resource its flavors list.
func (b *cqBuilder) ResourceGroup(flavors ...api.FlavorQuotas) *cqBuilder {
	b.cq.ResourceGroups = append(b.cq.ResourceGroups, group(flavors))
	return b
}
func (b *cqBuilder) Obj() api.ClusterQueue { return b.cq }

func group(flavors []api.FlavorQuotas) api.ResourceGroup {
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

type fqBuilder struct{ fq api.FlavorQuotas }

func MakeFlavorQuotas(flavor string) *fqBuilder {
	return &fqBuilder{api.FlavorQuotas{Name: flavor}}
}

// Resource adds a quota; Borrow and Lend set limits on the last one added.
func (b *fqBuilder) Resource(r resources.Name, nominal string) *fqBuilder {
	b.fq.Resources = append(b.fq.Resources, api.ResourceQuota{Name: r, Nominal: amt(r, nominal)})
	return b
}
func (b *fqBuilder) Borrow(limit string) *fqBuilder {
	last := &b.fq.Resources[len(b.fq.Resources)-1]
	a := amt(last.Name, limit)
	last.BorrowingLimit = &a
	return b
}
func (b *fqBuilder) Lend(limit string) *fqBuilder {
	last := &b.fq.Resources[len(b.fq.Resources)-1]
	a := amt(last.Name, limit)
	last.LendingLimit = &a
	return b
}
func (b *fqBuilder) Obj() api.FlavorQuotas { return b.fq }

type flavorBuilder struct{ f api.ResourceFlavor }

func MakeFlavor(name string) *flavorBuilder {
	return &flavorBuilder{api.ResourceFlavor{Meta: api.Meta{Name: name}, NodeLabels: map[string]string{}}}
}
func (b *flavorBuilder) Label(k, v string) *flavorBuilder { b.f.NodeLabels[k] = v; return b }
func (b *flavorBuilder) Taint(k, v string, e corev1.TaintEffect) *flavorBuilder {
	b.f.NodeTaints = append(b.f.NodeTaints, corev1.Taint{Key: k, Value: v, Effect: e})
	return b
}
func (b *flavorBuilder) Obj() api.ResourceFlavor { return b.f }

type cohortBuilder struct{ c api.Cohort }

func MakeCohort(name string) *cohortBuilder {
	return &cohortBuilder{api.Cohort{Meta: api.Meta{Name: name}, FairSharing: api.FairSharing{WeightMilli: 1000}}}
}
func (b *cohortBuilder) Parent(p string) *cohortBuilder { b.c.Parent = p; return b }
func (b *cohortBuilder) ResourceGroup(flavors ...api.FlavorQuotas) *cohortBuilder {
	b.c.ResourceGroups = append(b.c.ResourceGroups, group(flavors))
	return b
}
func (b *cohortBuilder) Obj() api.Cohort { return b.c }

type lqBuilder struct{ lq api.LocalQueue }

func MakeLocalQueue(ns, name, cq string) *lqBuilder {
	return &lqBuilder{api.LocalQueue{Meta: api.Meta{Name: name, Namespace: ns}, ClusterQueue: cq}}
}
func (b *lqBuilder) Stop(p api.StopPolicy) *lqBuilder { b.lq.StopPolicy = p; return b }
func (b *lqBuilder) Weight(milli int64) *lqBuilder {
	b.lq.FairSharing.WeightMilli = milli
	return b
}
func (b *lqBuilder) Obj() api.LocalQueue { return b.lq }

type wlBuilder struct{ w api.Workload }

// MakeWorkload makes a workload in namespace ns queued in LocalQueue "lq".
func MakeWorkload(ns, name string) *wlBuilder {
	return &wlBuilder{api.Workload{Meta: api.Meta{Name: name, Namespace: ns, Created: t0}, Queue: "lq"}}
}
func (b *wlBuilder) Queue(q string) *wlBuilder   { b.w.Queue = q; return b }
func (b *wlBuilder) Priority(p int32) *wlBuilder { b.w.Priority = p; return b }
func (b *wlBuilder) CreatedAt(sec int) *wlBuilder {
	b.w.Created = t0.Add(time.Duration(sec) * time.Second)
	return b
}

// PodSet adds a pod set of count pods; Request, NodeSelector and Toleration apply to
// the last one added.
func (b *wlBuilder) PodSet(name string, count int32) *wlBuilder {
	b.w.PodSets = append(b.w.PodSets, api.PodSet{Name: name, Count: count, Requests: resources.Vector{}})
	return b
}
func (b *wlBuilder) last() *api.PodSet {
	if len(b.w.PodSets) == 0 {
		b.PodSet("main", 1)
	}
	return &b.w.PodSets[len(b.w.PodSets)-1]
}
func (b *wlBuilder) Request(r resources.Name, perPod string) *wlBuilder {
	b.last().Requests[r] = amt(r, perPod)
	return b
}
func (b *wlBuilder) NodeSelector(k, v string) *wlBuilder {
	ps := b.last()
	if ps.NodeSelector == nil {
		ps.NodeSelector = map[string]string{}
	}
	ps.NodeSelector[k] = v
	return b
}
func (b *wlBuilder) Toleration(k, v string, e corev1.TaintEffect) *wlBuilder {
	ps := b.last()
	ps.Tolerations = append(ps.Tolerations, corev1.Toleration{Key: k, Operator: corev1.TolerationOpEqual, Value: v, Effect: e})
	return b
}
func (b *wlBuilder) Obj() *api.Workload { w := b.w; return &w }

// objs assembles api.Objects, adding a LocalQueue "lq" in namespace "ns-<cq>" for every
// ClusterQueue so workloads can be queued with MakeWorkload("ns-<cq>", ...).
type objsBuilder struct{ o api.Objects }

func MakeObjects() *objsBuilder { return &objsBuilder{} }
func (b *objsBuilder) Flavors(fs ...api.ResourceFlavor) *objsBuilder {
	b.o.Flavors = append(b.o.Flavors, fs...)
	return b
}
func (b *objsBuilder) ClusterQueues(cqs ...api.ClusterQueue) *objsBuilder {
	b.o.ClusterQueues = append(b.o.ClusterQueues, cqs...)
	for _, cq := range cqs {
		b.o.LocalQueues = append(b.o.LocalQueues, MakeLocalQueue("ns-"+cq.Name, "lq", cq.Name).Obj())
	}
	return b
}
func (b *objsBuilder) Cohorts(cs ...api.Cohort) *objsBuilder {
	b.o.Cohorts = append(b.o.Cohorts, cs...)
	return b
}
func (b *objsBuilder) LocalQueues(lqs ...api.LocalQueue) *objsBuilder {
	b.o.LocalQueues = append(b.o.LocalQueues, lqs...)
	return b
}
func (b *objsBuilder) Namespace(name string, labels map[string]string) *objsBuilder {
	b.o.Namespaces = append(b.o.Namespaces, api.Namespace{Meta: api.Meta{Name: name, Labels: labels}})
	return b
}
func (b *objsBuilder) Obj() *api.Objects { o := b.o; return &o }
