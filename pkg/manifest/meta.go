package manifest

import (
	"github.com/gantry-sched/gantry/pkg/api"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// metaOf converts ObjectMeta; namespaced objects without a namespace get defaultNS.
func metaOf(m metav1.ObjectMeta, src api.Source, defaultNS string) api.Meta {
	ns := m.Namespace
	if ns == "" {
		ns = defaultNS
	}
	out := api.Meta{Name: m.Name, Namespace: ns, Labels: m.Labels, Annotations: m.Annotations, Source: src}
	if !m.CreationTimestamp.IsZero() {
		out.Created = m.CreationTimestamp.UTC()
	}
	return out
}

// clusterScoped reports a namespace set on a cluster-scoped object.
func clusterScoped(m metav1.ObjectMeta, c errs) {
	if m.Namespace != "" {
		c.add("metadata.namespace", "must be empty: %s is cluster-scoped", c.kind)
	}
}

// DefaultNamespace is given to namespaced objects that name none.
const DefaultNamespace = "default"
