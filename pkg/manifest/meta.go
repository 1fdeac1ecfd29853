package manifest

import (
	"hash/fnv"

	"github.com/gantry-sched/gantry/pkg/api"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// metaOf converts ObjectMeta; namespaced objects without a namespace get defaultNS. An
// object with only metadata.generateName gets a name as the API server would make it:
// the prefix and five characters, here derived from where the object was read, so the
// same inputs give the same names.
func metaOf(m metav1.ObjectMeta, src api.Source, defaultNS string) api.Meta {
	ns := m.Namespace
	if ns == "" {
		ns = defaultNS
	}
	name := m.Name
	if name == "" && m.GenerateName != "" {
		name = m.GenerateName + generatedSuffix(src)
	}
	out := api.Meta{Name: name, Namespace: ns, Labels: m.Labels, Annotations: m.Annotations, Source: src}
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

// generatedSuffix is five characters of the API server's alphabet (no vowels, no
// look-alikes) from an FNV-1a hash of the source.
func generatedSuffix(src api.Source) string {
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	h := fnv.New32a()
	_, _ = h.Write([]byte(src.String()))
	v := h.Sum32()
	out := make([]byte, 5)
	for i := range out {
		out[i] = alphabet[v%uint32(len(alphabet))]
		v /= uint32(len(alphabet))
	}
	return string(out)
}

// DefaultNamespace is given to namespaced objects that name none.
const DefaultNamespace = "default"
