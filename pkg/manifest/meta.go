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

// Volcano's queue selectors on pods and on the objects that own pods (Volcano's
// PodGroup controller reads the annotation from a pod and its owner; the vcjob controller
// writes the label onto every pod it makes, so `kubectl get pods -o yaml` carries it).
const (
	LabelVolcanoQueueName      = "volcano.sh/queue-name"
	AnnotationVolcanoQueueName = "scheduling.volcano.sh/queue-name"
)

// queueRef is the queue an object names, where it names it, and which kind of queue.
type queueRef struct {
	name, field string
	// volcano: name is a Volcano Queue (cluster-scoped), not a LocalQueue.
	volcano bool
}

// workloadQueue reads the queue of a job object or pod: Kueue's or Gantry's label (a
// LocalQueue of the namespace), or Volcano's label or annotation (a Volcano Queue, as a
// PodGroup's spec.queue). Any two of them naming different queues is an error.
func workloadQueue(m metav1.ObjectMeta, c errs) queueRef {
	name, field := queueName(m.Labels, "metadata.labels", c)
	ref := queueRef{name: name, field: field}
	for _, v := range []struct {
		set  map[string]string
		key  string
		path string
	}{
		{m.Labels, LabelVolcanoQueueName, "metadata.labels"},
		{m.Annotations, AnnotationVolcanoQueueName, "metadata.annotations"},
	} {
		q, ok := v.set[v.key]
		if !ok {
			continue
		}
		path := v.path + "[" + v.key + "]"
		switch {
		case ref.name == "":
			ref = queueRef{name: q, field: path, volcano: true}
		case q != ref.name:
			c.add(path, "%q disagrees with %s %q", q, ref.field, ref.name)
		default:
			// The same name under Kueue's and Volcano's key: a LocalQueue of that name
			// wins (as for a PodGroup), else the Volcano Queue.
			ref.volcano = true
		}
	}
	return ref
}
