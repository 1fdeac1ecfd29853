package manifest

import (
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// podTemplateOverride is Trainer v2.1's TrainJob spec.podTemplateOverrides entry, which
// replaced v2.0's podSpecOverrides: changes to the pod template (metadata and spec) of
// the runtime's replicated jobs it names. Trainer v2.1's API module is not served by the
// module proxy (v2.0.0 is the newest), so the shape is the one its API documents:
// targetJobs, metadata {labels, annotations}, spec {serviceAccountName, nodeSelector,
// affinity, tolerations, volumes, initContainers, containers, schedulingGates,
// imagePullSecrets}. Of these, the node selector, the affinity, the tolerations and the
// annotations (Kueue's topology requests) bear on placement and are applied; the rest
// are read strictly, so that typos are caught, and leave the pod sets as they are.
type podTemplateOverride struct {
	TargetJobs []overrideTarget         `json:"targetJobs"`
	Metadata   *overrideMetadata        `json:"metadata,omitempty"`
	Spec       *podTemplateSpecOverride `json:"spec,omitempty"`
}

type overrideMetadata struct {
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

type podTemplateSpecOverride struct {
	ServiceAccountName *string                       `json:"serviceAccountName,omitempty"`
	NodeSelector       map[string]string             `json:"nodeSelector,omitempty"`
	Affinity           *corev1.Affinity              `json:"affinity,omitempty"`
	Tolerations        []corev1.Toleration           `json:"tolerations,omitempty"`
	Volumes            []corev1.Volume               `json:"volumes,omitempty"`
	InitContainers     []containerOverride           `json:"initContainers,omitempty"`
	Containers         []containerOverride           `json:"containers,omitempty"`
	SchedulingGates    []corev1.PodSchedulingGate    `json:"schedulingGates,omitempty"`
	ImagePullSecrets   []corev1.LocalObjectReference `json:"imagePullSecrets,omitempty"`
}

// templateOverrideTargets are the targetJobs of each podTemplateOverrides entry.
func templateOverrideTargets(overrides []podTemplateOverride) [][]overrideTarget {
	out := make([][]overrideTarget, len(overrides))
	for i, o := range overrides {
		out[i] = o.TargetJobs
	}
	return out
}

// withTemplateOverrides is the runtime as a TrainJob with these overrides runs it: a
// copy whose targeted replicated jobs have the overrides in their pod templates (the
// runtime itself is shared by every TrainJob naming it, so it is not changed).
func (r *trainRuntime) withTemplateOverrides(overrides []podTemplateOverride) *trainRuntime {
	if len(overrides) == 0 {
		return r
	}
	out := *r
	jobs := slices.Clone(r.in.Spec.Template.Spec.ReplicatedJobs)
	for i := range jobs {
		tmpl := jobs[i].Template.Spec.Template.DeepCopy()
		applyPodTemplateOverrides(jobs[i].Name, tmpl, overrides)
		jobs[i].Template.Spec.Template = *tmpl
	}
	out.in.Spec.Template.Spec.ReplicatedJobs = jobs
	return &out
}

// applyPodTemplateOverrides applies the overrides naming job to its pod template, in
// order, merged as Trainer merges them (a strategic merge patch): labels, annotations
// and node selector keys merged (the override's win), tolerations replaced (an atomic
// list), the affinity merged field by field (each term list replaced).
func applyPodTemplateOverrides(job string, tmpl *corev1.PodTemplateSpec, overrides []podTemplateOverride) {
	for _, o := range overrides {
		if !slices.Contains(o.TargetJobs, overrideTarget{Name: job}) {
			continue
		}
		if m := o.Metadata; m != nil {
			tmpl.Labels = mergedStrings(tmpl.Labels, m.Labels)
			tmpl.Annotations = mergedStrings(tmpl.Annotations, m.Annotations)
		}
		s := o.Spec
		if s == nil {
			continue
		}
		tmpl.Spec.NodeSelector = mergedStrings(tmpl.Spec.NodeSelector, s.NodeSelector)
		if s.Tolerations != nil {
			tmpl.Spec.Tolerations = slices.Clone(s.Tolerations)
		}
		if s.Affinity != nil {
			tmpl.Spec.Affinity = mergedAffinity(tmpl.Spec.Affinity, s.Affinity)
		}
	}
}

// mergedStrings is base with over's keys set (base itself when over is empty).
func mergedStrings(base, over map[string]string) map[string]string {
	if len(over) == 0 {
		return base
	}
	out := maps.Clone(base)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, over)
	return out
}

// mergedAffinity is base with each field over sets replaced by over's, as a strategic
// merge patch of two Affinities does (their term lists have no merge key).
func mergedAffinity(base, over *corev1.Affinity) *corev1.Affinity {
	out := &corev1.Affinity{}
	if base != nil {
		out = base.DeepCopy()
	}
	if n := over.NodeAffinity; n != nil {
		if out.NodeAffinity == nil {
			out.NodeAffinity = &corev1.NodeAffinity{}
		}
		if n.RequiredDuringSchedulingIgnoredDuringExecution != nil {
			out.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = n.RequiredDuringSchedulingIgnoredDuringExecution.DeepCopy()
		}
		if n.PreferredDuringSchedulingIgnoredDuringExecution != nil {
			out.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution = slices.Clone(n.PreferredDuringSchedulingIgnoredDuringExecution)
		}
	}
	if p := over.PodAffinity; p != nil {
		if out.PodAffinity == nil {
			out.PodAffinity = &corev1.PodAffinity{}
		}
		mergePodTerms(&out.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution, &out.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution,
			p.RequiredDuringSchedulingIgnoredDuringExecution, p.PreferredDuringSchedulingIgnoredDuringExecution)
	}
	if p := over.PodAntiAffinity; p != nil {
		if out.PodAntiAffinity == nil {
			out.PodAntiAffinity = &corev1.PodAntiAffinity{}
		}
		mergePodTerms(&out.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution, &out.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution,
			p.RequiredDuringSchedulingIgnoredDuringExecution, p.PreferredDuringSchedulingIgnoredDuringExecution)
	}
	return out
}

// mergePodTerms replaces the required and preferred term lists that the override sets.
func mergePodTerms(req *[]corev1.PodAffinityTerm, pref *[]corev1.WeightedPodAffinityTerm, overReq []corev1.PodAffinityTerm, overPref []corev1.WeightedPodAffinityTerm) {
	if overReq != nil {
		*req = slices.Clone(overReq)
	}
	if overPref != nil {
		*pref = slices.Clone(overPref)
	}
}
