package manifest

import (
	"reflect"
	"strings"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
)

// The ClusterQueue settings of Kueue that Gantry reads but cannot yet act on in full.
// Each is checked and either honoured or refused with a message saying so: a setting
// silently dropped would admit workloads Kueue would hold back or place differently.

// Kueue's spec.flavorFungibility.preference values.
const (
	borrowingOverPreemption = "BorrowingOverPreemption"
	preemptionOverBorrowing = "PreemptionOverBorrowing"
)

// fungibilityPreference checks flavorFungibility.preference (read beside the wire type).
// BorrowingOverPreemption, Kueue's default, is the order Gantry's flavor search always
// uses (a flavor that fits by borrowing beats one that needs preemption), so it is
// honoured; PreemptionOverBorrowing needs a second order in the engine and is refused.
func fungibilityPreference(x kueueDoc, f api.FlavorFungibility, c errs) {
	a, ok := x.aside[fieldPreference]
	if !ok || a.v.kind == kindNull {
		return
	}
	if !checkStrict(a.v, reflect.TypeFor[string](), a.path, c) {
		return
	}
	switch p, _ := a.v.scalar.(string); p {
	case borrowingOverPreemption:
	case preemptionOverBorrowing:
		c.addAt(a.v.line, a.path, "%s is not supported yet: Gantry's flavor search always prefers a flavor that fits by borrowing over one that needs preemption (%s)", p, borrowingOverPreemption)
	default:
		c.addAt(a.v.line, a.path, "unknown value %q: want %s or %s", p, borrowingOverPreemption, preemptionOverBorrowing)
	}
	// Kueue's own validation: the preference only orders flavors the search went past.
	if f.WhenCanBorrow != api.TryNextFlavor || f.WhenCanPreempt != api.TryNextFlavor {
		c.addAt(a.v.line, a.path, "may only be set when whenCanBorrow and whenCanPreempt are both TryNextFlavor (now %s and %s)", f.WhenCanBorrow, f.WhenCanPreempt)
	}
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
