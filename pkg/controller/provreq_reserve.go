package controller

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/gantry-sched/gantry/pkg/admission"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	"github.com/gantry-sched/gantry/pkg/plan"
	"github.com/gantry-sched/gantry/pkg/resources"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
)

// Reasons of a Workload's status while admission checks hold it.
const (
	ReasonChecksPending = "WaitingForAdmissionChecks" // quota reserved, checks running
	ReasonCheckRetry    = "AdmissionCheckRetry"       // a check asked for a retry: quota released, backoff
	ReasonCheckRejected = "AdmissionCheckRejected"    // a check rejected it: deactivated
)

// provRequest is one ProvisioningRequest to make, with its PodTemplates.
type provRequest struct {
	templates []*corev1.PodTemplate
	pr        *unstructured.Unstructured
}

// reserve commits a quota reservation the cycle made for t's admission checks
// (engine.IsQuotaReserved): the reservation and each check's first state in one status
// write, refused on a conflict like every decision; then the ProvisioningRequests are
// made. A request that could not be made is made by a later pass (runChecks).
func (k *committer) reserve(t *tracked, r plan.Rejection) {
	res := reservationOf(*r.Evidence.Quota, k.now)
	refs := applicableChecks(k.cs.checks, res.ClusterQueue, reservedFlavors(res))
	st := *t.obj.Status.DeepCopy()
	st.QuotaReservation = res
	var reqs []provRequest
	for _, ref := range refs {
		cur := findCheck(st, ref.Name)
		if cur != nil && cur.State == v1alpha1.CheckState(api.CheckRejected) {
			cur.RetryCount = nil // rejected before, tried again after a change of its spec: a fresh start
		}
		req, d := k.cs.startCheck(t.obj, res, ref, cur)
		if req != nil {
			reqs = append(reqs, *req)
		}
		setCheckState(&st, ref.Name, requestName(req), d, k.now)
	}
	msg := fmt.Sprintf("quota reserved in ClusterQueue %s; waiting for admission checks %s", res.ClusterQueue, strings.Join(checkNames(refs), ", "))
	setCondition(&st, v1alpha1.WorkloadQuotaReserved, metav1.ConditionTrue, "QuotaReserved", msg, k.now)
	if meta.FindStatusCondition(st.Conditions, ConditionRequeued) != nil {
		setCondition(&st, ConditionRequeued, metav1.ConditionTrue, ReasonChecksPending, msg, k.now)
	}
	st.State, st.Reason, st.Message = v1alpha1.StateQuotaReserved, ReasonChecksPending, msg
	setWhy(&st, string(plan.LayerAdmission), nil, "")
	st.Position, st.ETA, st.ETABasis = nil, nil, ""
	if k.recordUpdates(t.obj, nil) != nil { // those of an earlier reservation
		return
	}
	if err := k.writeStatus(t.obj, st); err != nil {
		return
	}
	k.events.Eventf(t.obj, "Normal", "QuotaReserved", "%s", msg)
	k.ensureRequests(t.obj, reqs)
}

// ensureRequests makes the requests; a failure is an event, and a later pass tries
// again (the check stays Pending while its request is missing).
func (k *committer) ensureRequests(wl *v1alpha1.Workload, reqs []provRequest) {
	p := provReqs{c: k.c}
	for _, r := range reqs {
		if err := p.ensure(k.ctx, r.templates, r.pr); err != nil {
			k.events.Eventf(wl, "Warning", "ProvisioningRequestFailed", "%v", err)
		}
	}
}

// startCheck is the request a check of a reservation needs for its current attempt
// (the one after the retries its state counts) and the check's state: Pending with
// the request, or Ready at once when no pod set requests a managed resource, or
// Pending with no request when its config is gone.
func (cs *cycleState) startCheck(wl *v1alpha1.Workload, res *v1alpha1.QuotaReservation, ref api.ClusterQueueCheck, cur *v1alpha1.AdmissionCheckState) (*provRequest, provCheckDecision) {
	cfg, ok := checkConfig(cs.checks, ref)
	if !ok {
		return nil, provCheckDecision{State: api.CheckPending, Message: fmt.Sprintf("AdmissionCheck %s or its ProvisioningRequestConfig was not read", ref.Name)}
	}
	counts, flavors := reservedPodSets(res, cs.flavors)
	templates, pr, needed := provisioningObjects(wl, ref.Name, attemptOf(cur), cfg, counts, flavors)
	if !needed {
		return nil, provCheckDecision{State: api.CheckReady, Message: "no ProvisioningRequest needed: no pod set requests a managed resource"}
	}
	return &provRequest{templates: templates, pr: pr}, provCheckDecision{State: api.CheckPending, Message: "ProvisioningRequest " + pr.GetName() + " created"}
}

// attemptOf is the attempt the check's current request is: one after its retries.
func attemptOf(cur *v1alpha1.AdmissionCheckState) int {
	if cur == nil || cur.RetryCount == nil {
		return 1
	}
	return int(*cur.RetryCount) + 1
}

func requestName(r *provRequest) string {
	if r == nil {
		return ""
	}
	return r.pr.GetName()
}

// findCheck is the state of the named check in st (nil: none), editable in place.
func findCheck(st v1alpha1.WorkloadStatus, name string) *v1alpha1.AdmissionCheckState {
	for i := range st.AdmissionChecks {
		if st.AdmissionChecks[i].Name == name {
			return &st.AdmissionChecks[i]
		}
	}
	return nil
}

// reservationOf is the status form of a reserved assignment.
func reservationOf(a admission.Assignment, now time.Time) *v1alpha1.QuotaReservation {
	out := &v1alpha1.QuotaReservation{ClusterQueue: a.ClusterQueue, ReservedAt: metav1.NewTime(stamp(now))}
	for _, ps := range a.PodSets {
		psa := v1alpha1.PodSetAssignment{Name: ps.Name, Count: ptr.To(ps.Count), Flavors: map[corev1.ResourceName]string{}}
		usage := resources.Vector{}
		for _, r := range ps.Resources {
			psa.Flavors[corev1.ResourceName(r.Resource)] = r.Flavor
			usage[r.Resource] += r.Amount
		}
		psa.ResourceUsage = resourceList(usage)
		out.PodSetAssignments = append(out.PodSetAssignments, psa)
	}
	return out
}

// reservedPodSets are the counts and the flavor of each pod set of a reservation, for
// its requests' templates. A pod set charged to several flavors (one per resource
// group) takes the first by resource name that has node labels: the one that says
// where its pods go.
func reservedPodSets(res *v1alpha1.QuotaReservation, flavors map[string]api.ResourceFlavor) (map[string]int32, map[string]api.ResourceFlavor) {
	counts := map[string]int32{}
	out := map[string]api.ResourceFlavor{}
	for _, ps := range res.PodSetAssignments {
		if ps.Count != nil {
			counts[ps.Name] = *ps.Count
		}
		names := make([]string, 0, len(ps.Flavors))
		for r := range ps.Flavors {
			names = append(names, string(r))
		}
		sort.Strings(names)
		for _, r := range names {
			f, ok := flavors[ps.Flavors[corev1.ResourceName(r)]]
			if !ok {
				continue
			}
			if _, set := out[ps.Name]; !set || len(out[ps.Name].NodeLabels) == 0 {
				out[ps.Name] = f
			}
		}
	}
	return counts, out
}
