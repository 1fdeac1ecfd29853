package manifest

import "sort"

// resolveAdmissionChecks checks every name the admission check objects use once all
// files are read: a ClusterQueue's checks and their onFlavors, and each check's
// ProvisioningRequestConfig. A dangling name is an error at the object that writes it.
func (l *loader) resolveAdmissionChecks() {
	ac := &l.objs.AdmissionChecks
	configs := map[string]bool{}
	for _, c := range ac.Configs {
		configs[c.Name] = true
	}
	for _, ch := range ac.Checks {
		if ch.Config != "" && !configs[ch.Config] {
			l.context("AdmissionCheck", ch.Key()).add("spec.parameters.name", "ProvisioningRequestConfig %q not found", ch.Config)
		}
	}
	flavors := map[string]bool{}
	for _, f := range l.objs.Flavors {
		flavors[f.Name] = true
	}
	queues := make([]string, 0, len(ac.ByClusterQueue))
	for q := range ac.ByClusterQueue {
		queues = append(queues, q)
	}
	sort.Strings(queues) // errors in a stable order
	for _, q := range queues {
		c := l.context("ClusterQueue", q)
		for _, ref := range ac.ByClusterQueue[q] {
			if _, ok := ac.Check(ref.Name); !ok {
				hint := ""
				if len(ac.Checks) == 0 {
					// The controller reads queue objects without AdmissionChecks: say so
					// rather than leave users looking for a typo.
					hint = " (no AdmissionCheck was read at all: create Kueue's AdmissionCheck and ProvisioningRequestConfig objects)"
				}
				c.add(ref.Field, "AdmissionCheck %q not found%s", ref.Name, hint)
			}
			for i, f := range ref.OnFlavors {
				if !flavors[f] {
					c.add(joinIndex(parentOf(ref.Field)+".onFlavors", i), "ResourceFlavor %q not found", f)
				}
			}
		}
	}
}

// parentOf drops the last ".field" of a path ("a[0].name" → "a[0]").
func parentOf(path string) string {
	for i := len(path) - 1; i >= 0; i-- {
		if path[i] == '.' {
			return path[:i]
		}
	}
	return path
}
