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
// Load decodes it; every problem of every document comes back as one ErrorList.
func ConvertVolcanoQueues(docs []VolcanoQueueDoc) (VolcanoConversion, error) {
	l := newLoader()
	for _, d := range docs {
		// Blank lines in front keep the lines of the document's fields those of the file.
		data := append(bytes.Repeat([]byte("\n"), max(d.Line-1, 0)), d.Data...)
		parsed, perr := parseDocuments(d.File, data)
		if perr != nil {
			l.errs = append(l.errs, perr)
		}
		for _, pd := range parsed {
			c := l.newCtx(pd, pd.v.str("kind"), pd.v.field("metadata").str("name"))
			if pd.v.str("apiVersion") != "scheduling.volcano.sh/v1beta1" || pd.v.str("kind") != "Queue" {
				c.add("", "not a scheduling.volcano.sh/v1beta1 Queue")
				continue
			}
			l.volcanoQueue(pd, c)
		}
	}
	var out VolcanoConversion
	for _, m := range mapVolcanoQueues(l.volcanoQueues) {
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
