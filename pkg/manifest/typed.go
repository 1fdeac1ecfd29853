package manifest

import (
	"encoding/json"
	"errors"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Typed holds queue objects already decoded into their Go types, as a Kubernetes
// client reads them. Namespaces are optional: with them, each LocalQueue is checked
// against its ClusterQueue's namespaceSelector.
type Typed struct {
	Flavors                 []*v1alpha1.ResourceFlavor
	Cohorts                 []*v1alpha1.Cohort
	ClusterQueues           []*v1alpha1.ClusterQueue
	LocalQueues             []*v1alpha1.LocalQueue
	WorkloadPriorityClasses []*v1alpha1.WorkloadPriorityClass
	Topologies              []*v1alpha1.Topology
	Namespaces              []*corev1.Namespace
	// CheckObjects are Kueue's AdmissionChecks and ProvisioningRequestConfigs
	// (kueue.x-k8s.io v1beta1 or v1beta2) as the API server serves them, unstructured:
	// they have no gantry.dev form, so each is read as a document of a file would be.
	CheckObjects []map[string]any
}

// LoadTyped converts typed objects the way Load converts the same objects read from
// YAML (same defaults, checks and reference resolution; the decoding step is skipped,
// as the types are already checked). Every object's Source is source. Problems come
// back as an ErrorList naming each object and field; as with Load, the objects
// returned alongside errors are for diagnostics only.
func LoadTyped(source string, in Typed) (*api.Objects, error) {
	l := newLoader()
	l.addTyped(source, in)
	objs, err := l.finish()
	var list ErrorList
	if errors.As(err, &list) {
		for _, e := range list {
			e.Source.Line = 0 // objects from a cluster: references resolved late name no line either
		}
	}
	return objs, err
}

// CheckTyped runs the checks each object passes on its own: fields, cross-field rules
// and quantities, everything but references to other objects (flavors, cohorts,
// queues), which may be created later. It is what a validating admission webhook can
// ask of one object at a time; LoadTyped makes the same checks and resolves references.
func CheckTyped(source string, in Typed) error {
	l := newLoader()
	l.addTyped(source, in)
	if len(l.errs) > 0 {
		return l.errs.sorted()
	}
	return nil
}

func (l *loader) addTyped(source string, in Typed) {
	addEach(l, source, "ResourceFlavor", in.Flavors, (*loader).addResourceFlavor)
	addEach(l, source, "Cohort", in.Cohorts, (*loader).addCohort)
	addEach(l, source, "ClusterQueue", in.ClusterQueues, (*loader).addClusterQueue)
	addEach(l, source, "LocalQueue", in.LocalQueues, (*loader).addLocalQueue)
	addEach(l, source, "WorkloadPriorityClass", in.WorkloadPriorityClasses, (*loader).addWorkloadPriorityClass)
	addEach(l, source, "Topology", in.Topologies, (*loader).addTopology)
	addEach(l, source, "Namespace", in.Namespaces, (*loader).addNamespace)
	for _, o := range in.CheckObjects {
		l.checkObject(source, o)
	}
}

// checkObject reads one AdmissionCheck or ProvisioningRequestConfig from the cluster
// through the loader's document path (status and server-kept metadata dropped, as
// KueueObjectFromCluster drops them). Its errors carry no line: there is no file.
func (l *loader) checkObject(source string, obj map[string]any) {
	m := manifestOf(obj)
	kind, _ := m["kind"].(string)
	name := ""
	if meta, ok := m["metadata"].(map[string]any); ok {
		name, _ = meta["name"].(string)
	}
	from := len(l.errs)
	defer func() {
		for _, e := range l.errs[from:] {
			e.Source.Line = 0
		}
	}()
	if kind != "AdmissionCheck" && kind != "ProvisioningRequestConfig" {
		l.errs = append(l.errs, &Error{Source: srcOf(source, 0), Kind: kind, Name: name,
			Msg: "not an admission check object: want AdmissionCheck or ProvisioningRequestConfig"})
		return
	}
	data, err := json.Marshal(m)
	if err != nil {
		l.errs = append(l.errs, &Error{Source: srcOf(source, 0), Kind: kind, Name: name, Msg: "encode: " + err.Error()})
		return
	}
	l.file(source, data) // JSON is YAML
}

// addEach converts objs of one kind, each with its own error context.
func addEach[T metav1.Object](l *loader, source, kind string, objs []T, add func(*loader, T, errs)) {
	for _, o := range objs {
		add(l, o, errs{list: &l.errs, src: srcOf(source, 0), kind: kind, name: joinName(o.GetNamespace(), o.GetName())})
	}
}
