package controller

import (
	"fmt"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	"github.com/gantry-sched/gantry/pkg/engine"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The conditions cluster-autoscaler sets on a ProvisioningRequest.
const (
	provAccepted        = "Accepted"
	provProvisioned     = "Provisioned"
	provFailed          = "Failed"
	provBookingExpired  = "BookingExpired"
	provCapacityRevoked = "CapacityRevoked"
)

// provReqConditions are the True conditions of a ProvisioningRequest with their
// messages, and the Provisioned condition's message whatever its status (it carries the
// autoscaler's progress and ETA while the request is open).
type provReqConditions struct {
	true        map[string]string
	provisioned string
}

// readProvReqConditions reads status.conditions of an unstructured ProvisioningRequest.
func readProvReqConditions(pr *unstructured.Unstructured) provReqConditions {
	out := provReqConditions{true: map[string]string{}}
	conds, _, _ := unstructured.NestedSlice(pr.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if !ok {
			continue
		}
		typ, _ := m["type"].(string)
		status, _ := m["status"].(string)
		msg, _ := m["message"].(string)
		if typ == provProvisioned {
			out.provisioned = msg
		}
		if status == string(metav1.ConditionTrue) {
			out.true[typ] = msg
		}
	}
	return out
}

// provCheckDecision is what a request's conditions mean for its check.
type provCheckDecision struct {
	State   api.CheckState
	Message string
	// Wait is the backoff before the next attempt, for Retry.
	Wait time.Duration
}

// decideProvCheck maps a request's conditions to the check's state as Kueue's
// provisioning controller does: Failed (or BookingExpired before the workload was
// admitted) is Retry while attempt ≤ backoffLimitCount, with the backoff
// base·2^(attempt-1) capped at max, and Rejected after; CapacityRevoked is Rejected;
// Provisioned is Ready; anything else is Pending.
func decideProvCheck(c provReqConditions, attempt int, retry api.ProvisioningRetry, admitted bool) provCheckDecision {
	retryOrReject := func(why, msg string) provCheckDecision {
		if attempt <= retry.BackoffLimitCount {
			pol := engine.RequeuePolicy{BackoffBase: retry.BackoffBase, BackoffMax: retry.BackoffMax}
			return provCheckDecision{State: api.CheckRetry, Message: fmt.Sprintf("Retrying after %s: %s", why, msg), Wait: pol.Wait(attempt)}
		}
		return provCheckDecision{State: api.CheckRejected, Message: msg}
	}
	if msg, ok := c.true[provFailed]; ok {
		return retryOrReject("failure", msg)
	}
	if msg, ok := c.true[provCapacityRevoked]; ok {
		return provCheckDecision{State: api.CheckRejected, Message: msg}
	}
	if msg, ok := c.true[provBookingExpired]; ok && !admitted {
		return retryOrReject("booking expired", msg)
	}
	if msg, ok := c.true[provProvisioned]; ok {
		return provCheckDecision{State: api.CheckReady, Message: msg}
	}
	return provCheckDecision{State: api.CheckPending, Message: c.provisioned}
}

// setCheckState records one check's state in a Workload's status: its transition time
// moves only when the state or the request changes; RetryCount counts the requests
// that ended in Retry.
func setCheckState(st *v1alpha1.WorkloadStatus, name, request string, d provCheckDecision, now time.Time) {
	next := v1alpha1.AdmissionCheckState{Name: name, State: v1alpha1.CheckState(d.State), Message: d.Message,
		ProvisioningRequest: request, LastTransitionTime: metav1.NewTime(now)}
	for i := range st.AdmissionChecks {
		cur := &st.AdmissionChecks[i]
		if cur.Name != name {
			continue
		}
		next.RetryCount = cur.RetryCount
		same := cur.State == next.State && cur.ProvisioningRequest == next.ProvisioningRequest
		if same {
			next.LastTransitionTime = cur.LastTransitionTime
		} else if next.State == v1alpha1.CheckState(api.CheckRetry) {
			n := int32(1)
			if cur.RetryCount != nil {
				n = *cur.RetryCount + 1
			}
			next.RetryCount = &n
		}
		*cur = next
		return
	}
	if next.State == v1alpha1.CheckState(api.CheckRetry) {
		one := int32(1)
		next.RetryCount = &one
	}
	st.AdmissionChecks = append(st.AdmissionChecks, next)
}

// checksReady reports whether every named check is Ready in the status.
func checksReady(st v1alpha1.WorkloadStatus, names []string) bool {
	for _, n := range names {
		ok := false
		for _, c := range st.AdmissionChecks {
			if c.Name == n && c.State == v1alpha1.CheckState(api.CheckReady) {
				ok = true
			}
		}
		if !ok {
			return false
		}
	}
	return true
}
