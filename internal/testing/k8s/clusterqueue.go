package k8s

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ClusterQueueWrapper builds a ClusterQueue. Quotas are kept as written, so YAML can
// carry values that do not parse.
type ClusterQueueWrapper struct {
	name, cohort string
	annotations  map[string]string
	namespaces   map[string]string // namespaceSelector.matchLabels; nil: none
	preemption   *v1alpha1.ClusterQueuePreemption
	groups       []quotaGroup
}

// quotaGroup is a resource group: the resources it covers and each flavor's nominal
// quotas, in order.
type quotaGroup struct {
	covered []string
	flavors []flavorQuota
}

type flavorQuota struct {
	name      string
	resources [][2]string // name, nominal quota
}

// MakeClusterQueue starts a ClusterQueue with no quota.
func MakeClusterQueue(name string) *ClusterQueueWrapper { return &ClusterQueueWrapper{name: name} }

// Cohort puts the queue in a cohort.
func (c *ClusterQueueWrapper) Cohort(name string) *ClusterQueueWrapper { c.cohort = name; return c }

// Quota adds a resource group covering the named resources with one flavor's nominal
// quotas, given as name/quantity pairs: Quota("h100", "cpu", "8", "nvidia.com/gpu", "4").
func (c *ClusterQueueWrapper) Quota(flavor string, pairs ...string) *ClusterQueueWrapper {
	g := quotaGroup{flavors: []flavorQuota{{name: flavor}}}
	for i := 0; i+1 < len(pairs); i += 2 {
		g.covered = append(g.covered, pairs[i])
		g.flavors[0].resources = append(g.flavors[0].resources, [2]string{pairs[i], pairs[i+1]})
	}
	c.groups = append(c.groups, g)
	return c
}

// Flavors adds one resource group covering resource with the flavors in order, each
// with the same nominal quota: admission tries them in this order.
func (c *ClusterQueueWrapper) Flavors(resource, quota string, flavors ...string) *ClusterQueueWrapper {
	g := quotaGroup{covered: []string{resource}}
	for _, f := range flavors {
		g.flavors = append(g.flavors, flavorQuota{name: f, resources: [][2]string{{resource, quota}}})
	}
	c.groups = append(c.groups, g)
	return c
}

// Annotate sets one of Gantry's queue extensions (placement scorers, disruption budget).
func (c *ClusterQueueWrapper) Annotate(k, v string) *ClusterQueueWrapper {
	set(&c.annotations, k, v)
	return c
}

// NamespaceSelector selects the namespaces carrying every label of matchLabels.
func (c *ClusterQueueWrapper) NamespaceSelector(matchLabels map[string]string) *ClusterQueueWrapper {
	c.namespaces = copyMap(matchLabels)
	return c
}

// Preemption sets withinClusterQueue and reclaimWithinCohort.
func (c *ClusterQueueWrapper) Preemption(within, reclaim v1alpha1.PreemptionPolicy) *ClusterQueueWrapper {
	c.preemption = &v1alpha1.ClusterQueuePreemption{WithinClusterQueue: within, ReclaimWithinCohort: reclaim}
	return c
}

// Obj builds the ClusterQueue; it panics on a quota that does not parse.
func (c *ClusterQueueWrapper) Obj() *v1alpha1.ClusterQueue {
	cq := &v1alpha1.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: c.name, Annotations: copyMap(c.annotations)}}
	cq.Spec.Cohort = c.cohort
	if c.namespaces != nil {
		cq.Spec.NamespaceSelector = &metav1.LabelSelector{MatchLabels: copyMap(c.namespaces)}
	}
	if c.preemption != nil {
		p := *c.preemption
		cq.Spec.Preemption = &p
	}
	for _, g := range c.groups {
		rg := v1alpha1.ResourceGroup{}
		for _, r := range g.covered {
			rg.CoveredResources = append(rg.CoveredResources, corev1.ResourceName(r))
		}
		for _, f := range g.flavors {
			fq := v1alpha1.FlavorQuotas{Name: f.name}
			for _, r := range f.resources {
				fq.Resources = append(fq.Resources, v1alpha1.ResourceQuota{Name: corev1.ResourceName(r[0]), NominalQuota: resource.MustParse(r[1])})
			}
			rg.Flavors = append(rg.Flavors, fq)
		}
		cq.Spec.ResourceGroups = append(cq.Spec.ResourceGroups, rg)
	}
	return cq
}

// YAML renders the ClusterQueue as a Kueue manifest: metadata, then spec's cohort,
// namespaceSelector, preemption and resource groups, each only when set.
func (c *ClusterQueueWrapper) YAML() string {
	var s strings.Builder
	fmt.Fprintf(&s, "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata:\n  name: %s\n", c.name)
	writeMap(&s, "  annotations", c.annotations, "    ")
	s.WriteString("spec:\n")
	if c.cohort != "" {
		fmt.Fprintf(&s, "  cohort: %s\n", c.cohort)
	}
	if c.namespaces != nil {
		var labels []string
		for _, k := range slices.Sorted(maps.Keys(c.namespaces)) {
			labels = append(labels, fmt.Sprintf("%s: %s", k, c.namespaces[k]))
		}
		fmt.Fprintf(&s, "  namespaceSelector: {matchLabels: {%s}}\n", strings.Join(labels, ", "))
	}
	if c.preemption != nil {
		fmt.Fprintf(&s, "  preemption:\n    withinClusterQueue: %s\n    reclaimWithinCohort: %s\n",
			c.preemption.WithinClusterQueue, c.preemption.ReclaimWithinCohort)
	}
	if len(c.groups) > 0 {
		s.WriteString("  resourceGroups:\n")
	}
	for _, g := range c.groups {
		quoted := make([]string, len(g.covered))
		for i, r := range g.covered {
			quoted[i] = fmt.Sprintf("%q", r)
		}
		fmt.Fprintf(&s, "  - coveredResources: [%s]\n    flavors:\n", strings.Join(quoted, ", "))
		for _, f := range g.flavors {
			fmt.Fprintf(&s, "    - name: %s\n      resources:\n", f.name)
			for _, r := range f.resources {
				fmt.Fprintf(&s, "      - name: %q\n        nominalQuota: %q\n", r[0], r[1])
			}
		}
	}
	return s.String()
}
