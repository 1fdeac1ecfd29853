package sim

import (
	"fmt"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/plan"
)

// ReasonAdmissionCheck is explain's reason for a workload whose quota is reserved while
// its admission checks run, or whose check was Rejected.
const ReasonAdmissionCheck = "AdmissionCheck"

// explainChecks says which admission check holds a pending workload: one waiting for a
// ProvisioningRequest, with the time left until its nodes join, or one deactivated by a
// Rejected check.
func (s *Simulator) explainChecks(st *wlState, e *Explanation) {
	if s.prov == nil || st.phase != plan.Pending {
		return
	}
	pw := s.prov.wls[st.id]
	if pw == nil {
		return
	}
	if !pw.reserved && !pw.rejected {
		// Backing off after a Retry: the engine's reason says until when; say why.
		for _, cr := range pw.checks {
			if cr.state == api.CheckRetry {
				e.Details = append(e.Details, fmt.Sprintf("admission check %s asked for a retry (ProvisioningRequest %s: %s)", cr.check.Name, cr.request, cr.message))
			}
		}
		return
	}
	e.Layer, e.Reason, e.Remedy, e.Position = string(plan.LayerAdmission), ReasonAdmissionCheck, "", 0
	e.ETA, e.ETABasis = nil, ""
	e.Details = nil
	for _, cr := range pw.checks {
		if line := s.checkLine(pw, cr); line != "" {
			e.Details = append(e.Details, line)
		}
	}
}

// checkLine is one check's state in explain's words.
func (s *Simulator) checkLine(pw *provWorkload, cr *checkRun) string {
	req := ""
	if cr.request != "" {
		req = "ProvisioningRequest " + cr.request + ": "
	}
	switch {
	case cr.state == api.CheckRejected:
		return fmt.Sprintf("admission check %s rejected the workload (%s%s); it is deactivated", cr.check.Name, req, cr.message)
	case !pw.reserved || cr.state == api.CheckReady:
		return ""
	case cr.pool != nil:
		left := cr.dueAt - s.now
		return fmt.Sprintf("waiting for admission check %s (%sprovisioning, ~%s left)", cr.check.Name, req, roundUpMinutes(left))
	}
	return fmt.Sprintf("waiting for admission check %s (%s%s)", cr.check.Name, req, cr.message)
}

// roundUpMinutes writes a wait in whole minutes, rounded up ("1m" for 20s).
func roundUpMinutes(d time.Duration) string {
	m := (d + time.Minute - 1) / time.Minute
	return fmt.Sprintf("%dm", int64(m))
}
