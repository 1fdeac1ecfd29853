package controller

import (
	"slices"

	"github.com/gantry-sched/gantry/pkg/admission"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	"github.com/gantry-sched/gantry/pkg/engine"
)

// The admission checks in a pass, as the simulator runs them (pkg/sim provision*.go):
// a workload of a ClusterQueue with checks is first given a quota reservation
// (engine.IsQuotaReserved; committed as status.quotaReservation, the job stays
// suspended); its checks run (provreq_run.go); once all are Ready it is pending again
// and the cycle places it like any other workload, and the admission replaces the
// reservation. Everything lives in the Workload's status, so a restarted controller
// reads it back.

// checkGate answers the engine's question for the controller (engine.AdmissionChecks).
type checkGate struct{ cs *cycleState }

// gate is the engine's view of the checks; nil when no ClusterQueue has any.
func (cs *cycleState) gate() engine.AdmissionChecks {
	if !cs.checks.Any() {
		return nil
	}
	return checkGate{cs: cs}
}

// Pending: checks apply to w under assignment a, and w does not hold a reservation
// whose checks are all Ready.
func (g checkGate) Pending(w *api.Workload, a admission.Assignment) bool {
	refs := applicableChecks(g.cs.checks, a.ClusterQueue, a.FlavorNames())
	if len(refs) == 0 {
		return false
	}
	t := g.cs.byID[w.ID()]
	if t == nil || t.reservation() == nil {
		return true
	}
	return !checksReady(t.obj.Status, checkNames(refs))
}

// readChecks reads t's reservation: the checks it waits for and whether they are all
// Ready, and charges its quota while they are not (once they are, the cycle assigns
// the quota anew when it places the workload).
func (cs *cycleState) readChecks(t *tracked, quota *admission.Quota) {
	r := t.reservation()
	if r == nil {
		return
	}
	t.checks = applicableChecks(cs.checks, r.ClusterQueue, reservedFlavors(r))
	t.checksDone = checksReady(t.obj.Status, checkNames(t.checks))
	if t.checksDone {
		return
	}
	if err := quota.Admit(t.model, assignmentFrom(t.model.ID(), r.ClusterQueue, r.PodSetAssignments)); err != nil {
		cs.warnings = append(cs.warnings, "quota reservation of "+string(t.model.ID())+": "+err.Error())
	}
}

// applicableChecks are the checks of ClusterQueue cq that run for these flavors.
func applicableChecks(checks api.AdmissionChecks, cq string, flavors []string) []api.ClusterQueueCheck {
	var out []api.ClusterQueueCheck
	for _, r := range checks.ByClusterQueue[cq] {
		if r.AppliesTo(flavors) {
			out = append(out, r)
		}
	}
	return out
}

func checkNames(refs []api.ClusterQueueCheck) []string {
	out := make([]string, len(refs))
	for i, r := range refs {
		out[i] = r.Name
	}
	return out
}

func reservedFlavors(r *v1alpha1.QuotaReservation) []string {
	var out []string
	for _, ps := range r.PodSetAssignments {
		for _, f := range ps.Flavors {
			out = append(out, f)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// flavorsByName indexes the ResourceFlavors (their node labels and tolerations go
// into the ProvisioningRequests' pod templates).
func flavorsByName(objs *api.Objects) map[string]api.ResourceFlavor {
	out := make(map[string]api.ResourceFlavor, len(objs.Flavors))
	for _, f := range objs.Flavors {
		out[f.Name] = f
	}
	return out
}

// checkConfig is the ProvisioningRequestConfig behind a ClusterQueue's check; ok is
// false when the check or its config is gone (the loader refuses such a queue, so
// only a race with a deletion gets here).
func checkConfig(checks api.AdmissionChecks, ref api.ClusterQueueCheck) (api.ProvisioningRequestConfig, bool) {
	ch, ok := checks.Check(ref.Name)
	if !ok {
		return api.ProvisioningRequestConfig{}, false
	}
	return checks.Config(ch.Config)
}
