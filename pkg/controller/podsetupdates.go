package controller

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	corev1 "k8s.io/api/core/v1"
)

// A ProvisioningRequestConfig's podSetUpdates, as Kueue applies them: once a request is
// Provisioned, each spec.podSetUpdates.nodeSelector entry takes the value of
// status.provisioningClassDetails[valueFromProvisioningClassDetail] and adds key: value
// to the node selector of the request's pod sets, and the pods are annotated with the
// request they consume and its class (cluster-autoscaler's annotations), so that they
// land on the nodes provisioned for them. Kueue skips an entry whose detail is missing
// (it only logs it); Gantry does the same and says so in the check's message.
//
// Kueue keeps the updates in status.admissionChecks[].podSetUpdates; Gantry keeps them
// in the Workload's AnnotationPodSetUpdates, written before the checks' Ready state (so
// a workload placed after its checks passed always has them), and replaced when a new
// reservation starts. The Job is started with them (the resume patch, partial.go) and
// its template is restored from the Workload's pod set at the next start.

// AnnotationPodSetUpdates holds the pod set updates of a workload's Ready checks, as
// JSON ([]PodSetUpdate).
const AnnotationPodSetUpdates = "gantry.dev/pod-set-updates"

// cluster-autoscaler's annotations on pods that consume a ProvisioningRequest.
const (
	AnnotationConsumeProvisioningRequest = "autoscaling.x-k8s.io/consume-provisioning-request"
	AnnotationProvisioningClassName      = "autoscaling.x-k8s.io/provisioning-class-name"
)

// PodSetUpdate is what a Ready check adds to one pod set's pods.
type PodSetUpdate struct {
	Name         string            `json:"name"`
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`
	Annotations  map[string]string `json:"annotations,omitempty"`
}

// podSetUpdatesFor are the updates request prName (cached as e) makes to wl's pod sets
// under cfg: one per pod set the request covers (its pod templates), and the detail
// names the config refers to that the request's status lacks.
func podSetUpdatesFor(wl *v1alpha1.Workload, prName string, e provReqEntry, cfg api.ProvisioningRequestConfig) ([]PodSetUpdate, []string) {
	selector := map[string]string{}
	var missing []string
	for _, u := range cfg.PodSetUpdates {
		v, ok := e.details[u.ValueFromProvisioningClassDetail]
		if !ok {
			missing = append(missing, u.ValueFromProvisioningClassDetail)
			continue
		}
		selector[u.Key] = v
	}
	var out []PodSetUpdate
	for _, ps := range wl.Spec.PodSets {
		if !slices.Contains(e.templates, api.ProvisioningPodTemplateName(prName, ps.Name)) {
			continue
		}
		u := PodSetUpdate{Name: ps.Name, Annotations: map[string]string{
			AnnotationConsumeProvisioningRequest: prName, AnnotationProvisioningClassName: e.class}}
		if len(selector) > 0 {
			u.NodeSelector = maps.Clone(selector)
		}
		out = append(out, u)
	}
	return out, missing
}

// missingDetailsNote is the check message's note on skipped podSetUpdates entries.
func missingDetailsNote(missing []string) string {
	if len(missing) == 0 {
		return ""
	}
	return fmt.Sprintf("; podSetUpdates skipped: provisioningClassDetails has no %v", missing)
}

// mergeUpdates merges the updates of several checks by pod set name (a later check's
// keys win), in pod set name order.
func mergeUpdates(lists ...[]PodSetUpdate) []PodSetUpdate {
	byName := map[string]*PodSetUpdate{}
	for _, l := range lists {
		for _, u := range l {
			cur := byName[u.Name]
			if cur == nil {
				cur = &PodSetUpdate{Name: u.Name}
				byName[u.Name] = cur
			}
			cur.NodeSelector = mergeMaps(cur.NodeSelector, u.NodeSelector)
			cur.Annotations = mergeMaps(cur.Annotations, u.Annotations)
		}
	}
	out := make([]PodSetUpdate, 0, len(byName))
	for _, u := range byName {
		out = append(out, *u)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func mergeMaps(a, b map[string]string) map[string]string {
	if len(b) == 0 {
		return a
	}
	out := maps.Clone(a)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, b)
	return out
}

// encodeUpdates is the annotation's value ("" for none).
func encodeUpdates(us []PodSetUpdate) string {
	if len(us) == 0 {
		return ""
	}
	b, err := json.Marshal(us)
	if err != nil {
		return "" // maps of strings always marshal
	}
	return string(b)
}

// PodSetUpdatesOf reads a Workload's AnnotationPodSetUpdates (none when absent); an
// unreadable value is an error naming the Workload and the annotation.
func PodSetUpdatesOf(wl *v1alpha1.Workload) ([]PodSetUpdate, error) {
	s, ok := wl.Annotations[AnnotationPodSetUpdates]
	if !ok || s == "" {
		return nil, nil
	}
	var out []PodSetUpdate
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		return nil, fmt.Errorf("Workload %s/%s: metadata.annotations[%s]: %w", wl.Namespace, wl.Name, AnnotationPodSetUpdates, err)
	}
	return out, nil
}

// ApplyPodSetUpdates adds the node selectors of wl's pod set updates to the pod sets of
// its model (a copy: the model may be shared), so placement picks only nodes the pods
// may run on. The node selector is the only part that bears on placement.
func ApplyPodSetUpdates(wl *v1alpha1.Workload, model *api.Workload) (*api.Workload, error) {
	us, err := PodSetUpdatesOf(wl)
	if err != nil || len(us) == 0 {
		return model, err
	}
	out := *model
	out.PodSets = slices.Clone(model.PodSets)
	for _, u := range us {
		for i := range out.PodSets {
			if out.PodSets[i].Name == u.Name && len(u.NodeSelector) > 0 {
				out.PodSets[i].NodeSelector = mergeMaps(maps.Clone(out.PodSets[i].NodeSelector), u.NodeSelector)
			}
		}
	}
	return &out, nil
}

// startTemplate sets a pod template to what a pod set starts with: the node selector
// the Workload's pod set was made from (which restores a template started before under
// other updates) plus the update's, and the provisioning annotations of the update only.
// It reports whether the template changed.
func startTemplate(tmpl *corev1.PodTemplateSpec, base map[string]string, u *PodSetUpdate) bool {
	before := tmpl.DeepCopy()
	sel := maps.Clone(base)
	ann := maps.Clone(tmpl.Annotations)
	delete(ann, AnnotationConsumeProvisioningRequest)
	delete(ann, AnnotationProvisioningClassName)
	if u != nil {
		sel = mergeMaps(sel, u.NodeSelector)
		ann = mergeMaps(ann, u.Annotations)
	}
	if len(sel) == 0 {
		sel = nil
	}
	if len(ann) == 0 {
		ann = nil
	}
	tmpl.Spec.NodeSelector, tmpl.Annotations = sel, ann
	return !maps.Equal(before.Spec.NodeSelector, tmpl.Spec.NodeSelector) || !maps.Equal(before.Annotations, tmpl.Annotations)
}

// updateFor is the update of the named pod set (nil: none).
func updateFor(us []PodSetUpdate, podSet string) *PodSetUpdate {
	for i := range us {
		if us[i].Name == podSet {
			return &us[i]
		}
	}
	return nil
}
