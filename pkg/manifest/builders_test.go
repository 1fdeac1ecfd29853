package manifest

import (
	"fmt"
	"strings"
)

// Fluent builders for test manifests. They write YAML text, as users do, so tests also
// exercise parsing and line tracking.

// cqBuilder builds a ClusterQueue manifest.
type cqBuilder struct {
	name, cohort string
	groups       []string
	extra        []string
}

func makeCQ(name string) *cqBuilder { return &cqBuilder{name: name} }

func (b *cqBuilder) Cohort(c string) *cqBuilder { b.cohort = c; return b }

// Quota adds a resource group covering one resource with one flavor.
func (b *cqBuilder) Quota(flavor, resource, nominal string) *cqBuilder {
	b.groups = append(b.groups, fmt.Sprintf(`  - coveredResources: [%q]
    flavors:
    - name: %s
      resources:
      - name: %q
        nominalQuota: %q`, resource, flavor, resource, nominal))
	return b
}

// Spec adds raw spec lines (indented by two spaces).
func (b *cqBuilder) Spec(line string) *cqBuilder { b.extra = append(b.extra, "  "+line); return b }

func (b *cqBuilder) YAML() string {
	var s strings.Builder
	fmt.Fprintf(&s, "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata:\n  name: %s\nspec:\n", b.name)
	if b.cohort != "" {
		fmt.Fprintf(&s, "  cohort: %s\n", b.cohort)
	}
	for _, e := range b.extra {
		s.WriteString(e + "\n")
	}
	if len(b.groups) > 0 {
		s.WriteString("  resourceGroups:\n" + strings.Join(b.groups, "\n") + "\n")
	}
	return s.String()
}

func makeFlavor(name string) string {
	return fmt.Sprintf("apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata:\n  name: %s\n", name)
}

func makeLQ(ns, name, cq string) string {
	return fmt.Sprintf("apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata:\n  namespace: %s\n  name: %s\nspec:\n  clusterQueue: %s\n", ns, name, cq)
}

func makeWPC(name string, value int) string {
	return fmt.Sprintf("apiVersion: kueue.x-k8s.io/v1beta1\nkind: WorkloadPriorityClass\nmetadata:\n  name: %s\nvalue: %d\n", name, value)
}

// jobBuilder builds a batch/v1 Job with one container.
type jobBuilder struct {
	ns, name    string
	labels      map[string]string
	annotations map[string]string
	parallelism int
	limits      map[string]string
	requests    map[string]string
}

func makeJob(ns, name string) *jobBuilder {
	return &jobBuilder{ns: ns, name: name, labels: map[string]string{}, annotations: map[string]string{},
		parallelism: 1, limits: map[string]string{}, requests: map[string]string{}}
}

func (b *jobBuilder) Queue(q string) *jobBuilder {
	b.labels["kueue.x-k8s.io/queue-name"] = q
	return b
}
func (b *jobBuilder) Priority(p string) *jobBuilder {
	b.labels["kueue.x-k8s.io/priority-class"] = p
	return b
}
func (b *jobBuilder) Annotation(k, v string) *jobBuilder { b.annotations[k] = v; return b }
func (b *jobBuilder) Parallelism(n int) *jobBuilder      { b.parallelism = n; return b }
func (b *jobBuilder) Request(res, q string) *jobBuilder  { b.requests[res] = q; return b }
func (b *jobBuilder) Limit(res, q string) *jobBuilder    { b.limits[res] = q; return b }
func (b *jobBuilder) Label(k, v string) *jobBuilder      { b.labels[k] = v; return b }

func (b *jobBuilder) YAML() string {
	var s strings.Builder
	fmt.Fprintf(&s, "apiVersion: batch/v1\nkind: Job\nmetadata:\n  namespace: %s\n  name: %s\n", b.ns, b.name)
	writeMap(&s, "  labels", b.labels, "    ")
	writeMap(&s, "  annotations", b.annotations, "    ")
	fmt.Fprintf(&s, "spec:\n  parallelism: %d\n  template:\n    spec:\n      containers:\n      - name: main\n        image: busybox\n        resources:\n", b.parallelism)
	writeMap(&s, "          requests", b.requests, "            ")
	writeMap(&s, "          limits", b.limits, "            ")
	return s.String()
}

func writeMap(s *strings.Builder, key string, m map[string]string, indent string) {
	if len(m) == 0 {
		return
	}
	s.WriteString(key + ":\n")
	for _, k := range sortedKeys(m) {
		fmt.Fprintf(s, "%s%s: %q\n", indent, k, m[k])
	}
}

// docs joins manifests into one multi-document file.
func docs(parts ...string) string { return strings.Join(parts, "---\n") }

// queueSetup is a minimal valid queue configuration for workload tests: flavor "f",
// ClusterQueue "cq", LocalQueue "q" in namespace "ns", priority classes high and low.
func queueSetup() string {
	return docs(makeFlavor("f"),
		makeCQ("cq").Quota("f", "nvidia.com/gpu", "64").YAML(),
		makeLQ("ns", "q", "cq"),
		makeWPC("high", 500), makeWPC("low", 10))
}
