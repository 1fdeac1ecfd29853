package manifest

import (
	"maps"
	"reflect"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
)

// The ClusterQueue settings of Kueue that Gantry reads but cannot yet act on in full.
// Each is checked and either honoured or refused with a message saying so: a setting
// silently dropped would admit workloads Kueue would hold back or place differently.

// AnnotationFlavorPreference is gantry.dev/v1alpha1's spelling of Kueue's
// spec.flavorFungibility.preference, which Gantry's own CRD has no field for: `gantry
// convert` writes a Kueue PreemptionOverBorrowing here so the converted queue decides
// as the original did.
const AnnotationFlavorPreference = "gantry.dev/flavor-fungibility-preference"

// fungibilityPreference reads flavorFungibility.preference (read beside the wire type
// under Kueue's apiVersions, from AnnotationFlavorPreference under gantry.dev) and checks
// it as Kueue's API validation does: a known value, and only with whenCanBorrow and
// whenCanPreempt both TryNextFlavor. A Kueue PreemptionOverBorrowing is copied into the
// annotation of the decoded object, which is what `gantry convert` writes.
func fungibilityPreference(in *v1alpha1.ClusterQueue, x kueueDoc, f api.FlavorFungibility, c errs) api.FungibilityPreference {
	var value, path string
	line := 0
	if a, ok := x.aside[fieldPreference]; ok && a.v.kind != kindNull {
		if !checkStrict(a.v, reflect.TypeFor[string](), a.path, c) {
			return ""
		}
		value, _ = a.v.scalar.(string)
		path, line = a.path, a.v.line
	} else if v, ok := in.Annotations[AnnotationFlavorPreference]; ok {
		value, path = v, "metadata.annotations["+AnnotationFlavorPreference+"]"
	} else {
		return ""
	}
	add := func(format string, args ...any) {
		if line > 0 {
			c.addAt(line, path, format, args...)
			return
		}
		c.add(path, format, args...)
	}
	p := api.FungibilityPreference(value)
	switch p {
	case api.BorrowingOverPreemption, api.PreemptionOverBorrowing:
	default:
		add("unknown value %q: want %s or %s", value, api.BorrowingOverPreemption, api.PreemptionOverBorrowing)
		return ""
	}
	if f.WhenCanBorrow != api.TryNextFlavor || f.WhenCanPreempt != api.TryNextFlavor {
		add("may only be set when whenCanBorrow and whenCanPreempt are both TryNextFlavor (now %s and %s)", f.WhenCanBorrow, f.WhenCanPreempt)
		return ""
	}
	if p == api.BorrowingOverPreemption {
		return "" // the default order: a queue reads the same with or without it
	}
	if line > 0 {
		ann := maps.Clone(in.Annotations)
		if ann == nil {
			ann = map[string]string{}
		}
		ann[AnnotationFlavorPreference] = string(p)
		in.Annotations = ann
	}
	return p
}

// queueAdmissionChecks records the admission checks a ClusterQueue requires: Kueue
// reserves quota for its workloads and admits them only once every check is Ready
// (admissioncheck*.go). The names are resolved once every file is read. v1beta1's plain
// list and admissionChecksStrategy may not both be set, as in Kueue.
func (l *loader) queueAdmissionChecks(queue string, s v1alpha1.ClusterQueueSpec, x kueueDoc, c errs) {
	var out []api.ClusterQueueCheck
	seen := map[string]bool{}
	add := func(name, path string, onFlavors []string) {
		switch {
		case name == "":
			c.add(path, "missing: an AdmissionCheck's name")
			return
		case seen[name]:
			c.add(path, "AdmissionCheck %q listed twice", name)
			return
		}
		seen[name] = true
		out = append(out, api.ClusterQueueCheck{Name: name, OnFlavors: onFlavors, Field: path})
	}
	for i, name := range s.AdmissionChecks {
		add(name, joinIndex(x.path(fieldAdmissionChecks), i), nil)
	}
	if st := s.AdmissionChecksStrategy; st != nil {
		if len(s.AdmissionChecks) > 0 {
			c.add("spec.admissionChecksStrategy", "may not be set together with %s: use one of them", x.path(fieldAdmissionChecks))
		}
		for i, r := range st.AdmissionChecks {
			add(r.Name, joinIndex("spec.admissionChecksStrategy.admissionChecks", i)+".name", r.OnFlavors)
		}
	}
	if len(out) == 0 {
		return
	}
	if l.objs.AdmissionChecks.ByClusterQueue == nil {
		l.objs.AdmissionChecks.ByClusterQueue = map[string][]api.ClusterQueueCheck{}
	}
	l.objs.AdmissionChecks.ByClusterQueue[queue] = out
}

// refuseConcurrentAdmission: Kueue v1beta2's concurrentAdmissionPolicy lets a workload
// pursue admission on several flavors at once and move to a preferred one later; Gantry
// admits once, on the first flavor that works.
func refuseConcurrentAdmission(x kueueDoc, c errs) {
	if a, ok := x.aside[fieldConcurrent]; ok && a.v.kind != kindNull {
		c.addAt(a.v.line, a.path, "concurrent admission is not supported yet: Gantry admits a workload once, on the first flavor that works, and does not migrate it")
	}
}
