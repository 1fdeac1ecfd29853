package manifest

import (
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// podSpecOverride is Trainer v2.0's TrainJob spec.podSpecOverrides entry: changes to the
// pod spec of the runtime's replicated jobs it names. Of them, the node selector and the
// tolerations decide placement; the rest are read so that typos are caught.
type podSpecOverride struct {
	TargetJobs         []overrideTarget           `json:"targetJobs"`
	ServiceAccountName *string                    `json:"serviceAccountName,omitempty"`
	NodeSelector       map[string]string          `json:"nodeSelector,omitempty"`
	Tolerations        []corev1.Toleration        `json:"tolerations,omitempty"`
	Volumes            []corev1.Volume            `json:"volumes,omitempty"`
	InitContainers     []containerOverride        `json:"initContainers,omitempty"`
	Containers         []containerOverride        `json:"containers,omitempty"`
	SchedulingGates    []corev1.PodSchedulingGate `json:"schedulingGates,omitempty"`
}

type overrideTarget struct {
	Name string `json:"name"`
}

type containerOverride struct {
	Name         string               `json:"name"`
	Env          []corev1.EnvVar      `json:"env,omitempty"`
	VolumeMounts []corev1.VolumeMount `json:"volumeMounts,omitempty"`
}

// applyPodSpecOverrides applies the overrides that name job to its pod spec as Trainer
// does, a strategic merge patch of the PodSpec: node selector keys are merged (the
// override's win), tolerations are replaced (the list has no merge key).
func applyPodSpecOverrides(job string, spec *corev1.PodSpec, overrides []podSpecOverride) {
	for _, o := range overrides {
		if !slices.Contains(o.TargetJobs, overrideTarget{Name: job}) {
			continue
		}
		if o.NodeSelector != nil {
			merged := maps.Clone(spec.NodeSelector)
			if merged == nil {
				merged = map[string]string{}
			}
			maps.Copy(merged, o.NodeSelector)
			spec.NodeSelector = merged
		}
		if o.Tolerations != nil {
			spec.Tolerations = slices.Clone(o.Tolerations)
		}
	}
}

// checkOverrideTargets reports overrides naming a replicated job the runtime does not
// have (a typo would otherwise silently place the pods without the override), and
// overrides naming none. field is the overrides' list ("spec.podSpecOverrides"),
// targets each override's targetJobs.
func checkOverrideTargets(field string, targets [][]overrideTarget, r *trainRuntime, runtime string, c errs) {
	jobs := map[string]bool{}
	for _, rj := range r.in.Spec.Template.Spec.ReplicatedJobs {
		jobs[rj.Name] = true
	}
	for i, ts := range targets {
		if len(ts) == 0 {
			c.add(joinIndex(field, i)+".targetJobs", "missing: an override names the replicated jobs of %s it changes", runtime)
		}
		for j, t := range ts {
			if !jobs[t.Name] {
				c.add(joinIndex(joinIndex(field, i)+".targetJobs", j)+".name", "%q: %s has no replicated job of this name", t.Name, runtime)
			}
		}
	}
}

// specOverrideTargets are the targetJobs of each podSpecOverrides entry.
func specOverrideTargets(overrides []podSpecOverride) [][]overrideTarget {
	out := make([][]overrideTarget, len(overrides))
	for i, o := range overrides {
		out[i] = o.TargetJobs
	}
	return out
}
