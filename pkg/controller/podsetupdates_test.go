package controller

import (
	"maps"
	"strings"
	"testing"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestPodSetUpdatesFor: only the pod sets the request covers get updates; a detail the
// request lacks is skipped and reported.
func TestPodSetUpdatesFor(t *testing.T) {
	wl := &v1alpha1.Workload{ObjectMeta: metav1.ObjectMeta{Name: "w"}, Spec: v1alpha1.WorkloadSpec{PodSets: []v1alpha1.PodSet{
		{Name: "launcher", Count: 1}, {Name: "workers", Count: 2}}}}
	cfg := api.ProvisioningRequestConfig{PodSetUpdates: []api.PodSetNodeSelectorUpdate{
		{Key: "pool", ValueFromProvisioningClassDetail: "nodePool"}, {Key: "zone", ValueFromProvisioningClassDetail: "zone"}}}
	entry := func(details map[string]string) provReqEntry {
		return provReqEntry{class: "c", details: details, templates: []string{api.ProvisioningPodTemplateName("pr", "workers")}}
	}
	for _, tc := range []struct {
		name        string
		cfg         api.ProvisioningRequestConfig
		details     map[string]string
		wantSel     map[string]string
		wantMissing int
	}{
		{"both details", cfg, map[string]string{"nodePool": "a", "zone": "z"}, map[string]string{"pool": "a", "zone": "z"}, 0},
		{"zone missing", cfg, map[string]string{"nodePool": "a"}, map[string]string{"pool": "a"}, 1},
		{"no podSetUpdates: annotations only", api.ProvisioningRequestConfig{}, map[string]string{"nodePool": "a"}, nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			us, missing := podSetUpdatesFor(wl, "pr", entry(tc.details), tc.cfg)
			if len(us) != 1 || us[0].Name != "workers" {
				t.Fatalf("updates %+v, want one for workers only", us)
			}
			if !maps.Equal(us[0].NodeSelector, tc.wantSel) || len(missing) != tc.wantMissing {
				t.Errorf("selector %v missing %v, want %v and %d missing", us[0].NodeSelector, missing, tc.wantSel, tc.wantMissing)
			}
			if us[0].Annotations[AnnotationConsumeProvisioningRequest] != "pr" || us[0].Annotations[AnnotationProvisioningClassName] != "c" {
				t.Errorf("annotations %v", us[0].Annotations)
			}
		})
	}
}

// TestStartTemplate: a start sets the base selector plus the update's, and drops a
// previous start's provisioning annotations and keys; no update restores the base.
func TestStartTemplate(t *testing.T) {
	base := map[string]string{"family": "hopper"}
	prev := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{
		"keep": "1", AnnotationConsumeProvisioningRequest: "old", AnnotationProvisioningClassName: "c"}},
		Spec: corev1.PodSpec{NodeSelector: map[string]string{"family": "hopper", "pool": "old"}}}
	for _, tc := range []struct {
		name    string
		u       *PodSetUpdate
		wantSel map[string]string
		wantAnn map[string]string
	}{
		{"new update", &PodSetUpdate{Name: "main", NodeSelector: map[string]string{"zone": "z"},
			Annotations: map[string]string{AnnotationConsumeProvisioningRequest: "new"}},
			map[string]string{"family": "hopper", "zone": "z"}, map[string]string{"keep": "1", AnnotationConsumeProvisioningRequest: "new"}},
		{"restore", nil, base, map[string]string{"keep": "1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmpl := prev.DeepCopy()
			if !startTemplate(tmpl, base, tc.u) {
				t.Error("reported unchanged")
			}
			if !maps.Equal(tmpl.Spec.NodeSelector, tc.wantSel) || !maps.Equal(tmpl.Annotations, tc.wantAnn) {
				t.Errorf("selector %v annotations %v, want %v %v", tmpl.Spec.NodeSelector, tmpl.Annotations, tc.wantSel, tc.wantAnn)
			}
			if prev.Spec.NodeSelector["pool"] != "old" {
				t.Error("the base template was edited in place")
			}
		})
	}
}

// TestApplyPodSetUpdates: the model gets the added selector on a copy; a bad
// annotation is an error naming the Workload and the annotation.
func TestApplyPodSetUpdates(t *testing.T) {
	model := &api.Workload{PodSets: []api.PodSet{{Name: "main", NodeSelector: map[string]string{"family": "hopper"}}}}
	wl := &v1alpha1.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "w",
		Annotations: map[string]string{AnnotationPodSetUpdates: encodeUpdates([]PodSetUpdate{{Name: "main", NodeSelector: map[string]string{"pool": "a"}}})}}}
	got, err := ApplyPodSetUpdates(wl, model)
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(got.PodSets[0].NodeSelector, map[string]string{"family": "hopper", "pool": "a"}) {
		t.Errorf("selector %v", got.PodSets[0].NodeSelector)
	}
	if len(model.PodSets[0].NodeSelector) != 1 {
		t.Errorf("the shared model was edited: %v", model.PodSets[0].NodeSelector)
	}
	wl.Annotations[AnnotationPodSetUpdates] = "{"
	if _, err := ApplyPodSetUpdates(wl, model); err == nil || !strings.Contains(err.Error(), "ns/w") || !strings.Contains(err.Error(), AnnotationPodSetUpdates) {
		t.Errorf("error %v, want one naming the Workload and the annotation", err)
	}
}
