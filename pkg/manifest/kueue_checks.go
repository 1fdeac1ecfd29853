package manifest

import (
	"maps"
	"reflect"
	"strings"

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

// refuseAdmissionChecks: Kueue admits a workload only after every admission check of its
// ClusterQueue passed (e.g. a ProvisioningRequest got capacity). Gantry runs no checks
// yet, so a queue with any is an error rather than a queue that admits too early. Empty
// lists are fine.
func refuseAdmissionChecks(s v1alpha1.ClusterQueueSpec, x kueueDoc, c errs) {
	if len(s.AdmissionChecks) > 0 {
		c.add(x.path(fieldAdmissionChecks), "admission checks are not supported yet: Gantry would admit without waiting for %s", strings.Join(s.AdmissionChecks, ", "))
	}
	if st := s.AdmissionChecksStrategy; st != nil && len(st.AdmissionChecks) > 0 {
		names := make([]string, 0, len(st.AdmissionChecks))
		for _, r := range st.AdmissionChecks {
			names = append(names, r.Name)
		}
		c.add("spec.admissionChecksStrategy.admissionChecks", "admission checks are not supported yet: Gantry would admit without waiting for %s", strings.Join(names, ", "))
	}
}

// refuseConcurrentAdmission: Kueue v1beta2's concurrentAdmissionPolicy lets a workload
// pursue admission on several flavors at once and move to a preferred one later; Gantry
// admits once, on the first flavor that works.
func refuseConcurrentAdmission(x kueueDoc, c errs) {
	if a, ok := x.aside[fieldConcurrent]; ok && a.v.kind != kindNull {
		c.addAt(a.v.line, a.path, "concurrent admission is not supported yet: Gantry admits a workload once, on the first flavor that works, and does not migrate it")
	}
}
