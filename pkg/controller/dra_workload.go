package controller

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	"github.com/gantry-sched/gantry/pkg/manifest"
	resourcev1 "k8s.io/api/resource/v1"
)

// AnnotationPodClaims carries a Workload's DRA claim references, as the shared reader
// found them in its job's pod templates (JSON, podSetClaims): a Workload's pod sets
// have no field for them. The claims' specs are resolved from the cluster at each
// conversion (resolveWorkloadClaims), not stored.
const AnnotationPodClaims = "gantry.dev/pod-claims"

// podSetClaims are one pod set's claims in AnnotationPodClaims.
type podSetClaims struct {
	PodSet string        `json:"podSet"`
	Claims []podClaimRef `json:"claims"`
}

// podClaimRef is one pod claim as the pod template wrote it.
type podClaimRef struct {
	Name                      string   `json:"name"`
	ResourceClaimTemplateName string   `json:"resourceClaimTemplateName,omitempty"`
	ResourceClaimName         string   `json:"resourceClaimName,omitempty"`
	Containers                []string `json:"containers,omitempty"`
	Field                     string   `json:"field,omitempty"`
}

// encodePodClaims is the AnnotationPodClaims value of the pod sets ("" when none has
// claims).
func encodePodClaims(sets []api.PodSet) (string, error) {
	var out []podSetClaims
	for _, ps := range sets {
		if !ps.HasClaims() {
			continue
		}
		e := podSetClaims{PodSet: ps.Name}
		for _, c := range ps.Claims {
			e.Claims = append(e.Claims, podClaimRef{Name: c.Name, ResourceClaimTemplateName: c.ResourceClaimTemplateName,
				ResourceClaimName: c.ResourceClaimName, Containers: c.Containers, Field: c.Field})
		}
		out = append(out, e)
	}
	if len(out) == 0 {
		return "", nil
	}
	b, err := json.Marshal(out)
	if err != nil {
		return "", fmt.Errorf("metadata.annotations[%s]: %w", AnnotationPodClaims, err)
	}
	return string(b), nil
}

// withPodClaims records the pod sets' claims on wl (nothing when there are none).
func withPodClaims(wl *v1alpha1.Workload, sets []api.PodSet) error {
	v, err := encodePodClaims(sets)
	if err != nil || v == "" {
		return err
	}
	if wl.Annotations == nil {
		wl.Annotations = map[string]string{}
	}
	wl.Annotations[AnnotationPodClaims] = v
	return nil
}

// podClaimsOf sets the claims of the model's pod sets from the Workload's
// AnnotationPodClaims (their specs unresolved); an error names the Workload and the
// annotation.
func podClaimsOf(wl *v1alpha1.Workload, out *api.Workload) error {
	v, ok := wl.Annotations[AnnotationPodClaims]
	if !ok {
		return nil
	}
	field := fmt.Sprintf("workload %s/%s: metadata.annotations[%s]", wl.Namespace, wl.Name, AnnotationPodClaims)
	var sets []podSetClaims
	dec := json.NewDecoder(strings.NewReader(v))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&sets); err != nil {
		return fmt.Errorf("%s: %w", field, err)
	}
	for _, s := range sets {
		i := slices.IndexFunc(out.PodSets, func(ps api.PodSet) bool { return ps.Name == s.PodSet })
		if i < 0 {
			return fmt.Errorf("%s: pod set %q: no such pod set", field, s.PodSet)
		}
		for _, c := range s.Claims {
			out.PodSets[i].Claims = append(out.PodSets[i].Claims, api.PodClaim{Name: c.Name,
				ResourceClaimTemplateName: c.ResourceClaimTemplateName, ResourceClaimName: c.ResourceClaimName,
				Containers: c.Containers, Field: c.Field})
		}
	}
	return nil
}

// resolveWorkloadClaims resolves the model's claims from the cluster, as the file
// loader resolves them from the files (manifest.ResolveClaims): each claim's spec from
// its ResourceClaimTemplate or ResourceClaim, compiled against the DeviceClasses, its
// quota amounts added to the pod set's requests. A model resolved already (the
// feeder's, kept between passes) is returned as is; otherwise a copy is resolved. A
// claim naming a missing template, claim or DeviceClass, or a selector that does not
// compile, is the workload's error: it stays pending with the reason on its status.
func resolveWorkloadClaims(w *world, m *api.Workload) (*api.Workload, error) {
	if !needsResolving(m) {
		return m, nil
	}
	if w.dra == nil {
		return nil, fmt.Errorf("workload %s: pod claims: the resource.k8s.io/v1 API is not served", m.ID())
	}
	classes, err := w.dra.compiledClasses()
	if err != nil {
		return nil, fmt.Errorf("workload %s: %w", m.ID(), err)
	}
	cp := *m
	cp.PodSets = slices.Clone(m.PodSets)
	for i := range cp.PodSets {
		cp.PodSets[i].Claims = slices.Clone(cp.PodSets[i].Claims)
		cp.PodSets[i].Requests = cp.PodSets[i].Requests.Clone()
	}
	if errs := manifest.ResolveClaims(&cp, w.dra, classes); len(errs) > 0 {
		msgs := make([]string, len(errs))
		for i, e := range errs {
			msgs[i] = e.Error()
		}
		return nil, fmt.Errorf("workload %s: %s", m.ID(), strings.Join(msgs, "; "))
	}
	return &cp, nil
}

// needsResolving reports whether some claim of m has no spec yet.
func needsResolving(m *api.Workload) bool {
	for _, ps := range m.PodSets {
		for _, c := range ps.Claims {
			if c.Spec == nil {
				return true
			}
		}
	}
	return false
}

// ClaimTemplate and Claim make the view the controller's manifest.ClaimSource.
func (v *draView) ClaimTemplate(namespace, name string) (*resourcev1.ResourceClaimTemplate, bool) {
	t, ok := v.templates[namespace+"/"+name]
	return t, ok
}

func (v *draView) Claim(namespace, name string) (*resourcev1.ResourceClaim, bool) {
	c, ok := v.claims[namespace+"/"+name]
	return c, ok
}
