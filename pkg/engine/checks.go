package engine

import (
	"github.com/gantry-sched/gantry/pkg/admission"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/placement"
	"github.com/gantry-sched/gantry/pkg/plan"
)

// Kueue's admission checks in the cycle. A workload whose ClusterQueue requires checks
// (e.g. a ProvisioningRequest: nodes are added for it) is admitted in two steps, as in
// Kueue: first its quota is reserved without a placement, since the nodes it waits for
// may not exist yet; once every check is Ready the driver hands the quota back and
// queues it again at its place, and this time it is placed like any other workload.
// The driver runs the checks and answers for them (AdmissionChecks).

// AdmissionChecks is the driver's side of admission checks.
type AdmissionChecks interface {
	// Pending reports whether w, assigned a, needs its quota reserved and its checks
	// run before a placement: its ClusterQueue has checks for a's flavors and they are
	// not all Ready for it.
	Pending(w *api.Workload, a admission.Assignment) bool
}

// ReasonQuotaReserved is the plan's word for a workload whose quota the cycle reserved
// while its admission checks run: the driver commits the reservation (the quota is
// taken, nothing is bound) and starts the checks. It comes as a rejection, since the
// workload is not admitted yet, with its assignment as evidence (Evidence.Quota).
const ReasonQuotaReserved plan.Reason = "QuotaReserved"

// IsQuotaReserved reports whether a plan rejection is a quota reservation for checks.
func IsQuotaReserved(r plan.Rejection) bool {
	return r.Reason == ReasonQuotaReserved && r.Evidence != nil && r.Evidence.Quota != nil
}

// checksPending asks the driver whether p's admission waits for checks.
func (c *cycle) checksPending(p Pending, a admission.Assignment) bool {
	return c.in.Checks != nil && c.in.Checks.Pending(p.Workload, a)
}

// reserveForChecks reserves p's quota in the cycle's copy, so later heads see it
// taken, and tells the driver to commit it. It reports the workload as handled: a
// StrictFIFO queue is not blocked behind a reservation.
func (c *cycle) reserveForChecks(p Pending, a admission.Assignment) bool {
	c.personal = true // the answer depends on this workload's checks
	c.quotaVersion++
	if err := c.in.Quota.Admit(p.Workload, a); err != nil {
		c.reject(p, plan.LayerAdmission, plan.ReasonAdmitFailed, &plan.Evidence{Message: err.Error()})
		return false
	}
	c.admitted(a) // holds.go
	c.reject(p, plan.LayerAdmission, ReasonQuotaReserved, quotaEvidence(a))
	return true
}

// GangFits reports whether w's whole gang, under the flavors of assignment a, fits on
// snap as it is (its free capacity): a driver's answer to a capacity check, or to how
// many new nodes would hold the gang (snap holding only those).
func GangFits(snap *cluster.Snapshot, w *api.Workload, a admission.Assignment, flavors map[string]api.ResourceFlavor, claims *placement.DeviceClaims) bool {
	_, diag := placement.PlaceWorkload(snap.Overlay(), w, constraintsOf(a, flavors), placement.Options{Claims: claims, Quiet: true})
	return diag == nil
}

// PlaceGang places w's gang under the flavors of a on ov (its pods stay assumed there)
// and returns the bindings: a driver starting a workload whose checks passed, on the
// quota it reserved. Placement's default scoring decides among the nodes.
func PlaceGang(ov *cluster.Overlay, w *api.Workload, a admission.Assignment, flavors map[string]api.ResourceFlavor, claims *placement.DeviceClaims) ([]plan.Binding, bool) {
	pl, diag := placement.PlaceWorkload(ov, w, constraintsOf(a, flavors), placement.Options{Claims: claims, Quiet: true})
	if diag != nil {
		return nil, false
	}
	return bindingsOf(ov, w, &pl), true
}

// constraintsOf is placementLayer.constraints without a placer.
func constraintsOf(a admission.Assignment, flavors map[string]api.ResourceFlavor) placement.FlavorConstraints {
	fc := make(placement.FlavorConstraints, len(a.PodSets))
	for _, ps := range a.PodSets {
		if r, ok := decidingResource(ps.Resources, flavors); ok {
			fc[ps.Name] = placement.FlavorConstraintOf(flavors[r.Flavor])
		}
	}
	return fc
}
