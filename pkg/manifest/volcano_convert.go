package manifest

import (
	"bytes"

	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// VolcanoQueueDoc is one scheduling.volcano.sh/v1beta1 Queue document and where it
// starts (file and 1-based line), as `gantry convert` splits its inputs.
type VolcanoQueueDoc struct {
	File string
	Line int
	Data []byte
}

// VolcanoQueueObject is what one Volcano Queue becomes: a ClusterQueue, or a Cohort when
// another queue names it as parent. Exactly one is set.
type VolcanoQueueObject struct {
	ClusterQueue *v1alpha1.ClusterQueue
	Cohort       *v1alpha1.Cohort
}

// VolcanoConversion is every Volcano Queue of a set of inputs as gantry.dev/v1alpha1
// objects, one per queue in input order, and the ResourceFlavor their quota names.
type VolcanoConversion struct {
	Queues []VolcanoQueueObject
	Flavor *v1alpha1.ResourceFlavor
}

// ConvertVolcanoQueues maps Volcano Queues with the mapping Load uses, so that loading
// the objects returned gives the ClusterQueues, Cohorts and flavor that Load derives from
// the queues themselves. The queues are mapped together: whether a queue is a
// ClusterQueue or a Cohort depends on the others. Each document is decoded strictly, as
// Load decodes it; every problem of every document comes back as one ErrorList. A queue
// whose quota is a share of the cluster by weight needs the cluster's nodes: see
// ConvertVolcanoQueuesWithNodes; here it is an error naming the queue and field.
func ConvertVolcanoQueues(docs []VolcanoQueueDoc) (VolcanoConversion, error) {
	return ConvertVolcanoQueuesWithNodes(docs, nil)
}

// ConvertVolcanoQueuesWithNodes is ConvertVolcanoQueues with the cluster's nodes: v1
// Node and gantry.dev NodePool documents (read as Load reads them), whose capacity the
// weight-only and capability-only queues share as Load shares the nodes of its inputs.
// The nodes are only read, not converted.
func ConvertVolcanoQueuesWithNodes(docs, nodes []VolcanoQueueDoc) (VolcanoConversion, error) {
	l := newLoader()
	for _, d := range nodes {
		l.convertDocs(d, func(pd document, c errs) {
			if !nodeDocument(pd) {
				c.add("", "not a v1 Node or gantry.dev/v1alpha1 NodePool")
				return
			}
			l.document(pd)
		})
	}
	for _, d := range docs {
		l.convertDocs(d, func(pd document, c errs) {
			if pd.v.str("apiVersion") != "scheduling.volcano.sh/v1beta1" || pd.v.str("kind") != "Queue" {
				c.add("", "not a scheduling.volcano.sh/v1beta1 Queue")
				return
			}
			l.volcanoQueue(pd, c)
		})
	}
	var out VolcanoConversion
	for _, m := range mapVolcanoQueues(l.volcanoQueues, func() volcanoCapacity { return clusterCapacity(&l.objs) }) {
		out.Queues = append(out.Queues, VolcanoQueueObject{ClusterQueue: m.clusterQueue, Cohort: m.cohort})
	}
	if len(l.errs) > 0 {
		return VolcanoConversion{}, l.errs.sorted()
	}
	if len(out.Queues) > 0 {
		out.Flavor = &v1alpha1.ResourceFlavor{TypeMeta: gantryTypeMeta("ResourceFlavor"), ObjectMeta: metav1.ObjectMeta{Name: VolcanoFlavor}}
	}
	return out, nil
}

// convertDocs parses one document of a conversion at its own lines and hands each
// object to read.
func (l *loader) convertDocs(d VolcanoQueueDoc, read func(document, errs)) {
	// Blank lines in front keep the lines of the document's fields those of the file.
	data := append(bytes.Repeat([]byte("\n"), max(d.Line-1, 0)), d.Data...)
	parsed, perr := parseDocuments(d.File, data)
	if perr != nil {
		l.errs = append(l.errs, perr)
	}
	for _, pd := range parsed {
		read(pd, l.newCtx(pd, pd.v.str("kind"), pd.v.field("metadata").str("name")))
	}
}

// nodeDocument: a v1 Node or a Gantry NodePool.
func nodeDocument(d document) bool {
	switch v, k := d.v.str("apiVersion"), d.v.str("kind"); {
	case v == "v1" && k == "Node":
		return true
	case v == v1alpha1.SchemeGroupVersion.String() && k == "NodePool":
		return true
	}
	return false
}
