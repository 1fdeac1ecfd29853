package devices

import (
	"strings"

	"github.com/gantry-sched/gantry/pkg/resources"
)

// NVIDIA spells a MIG profile with its attributes after a "+" ("1g.10gb+me",
// "1g.24gb+me.all", "1g.24gb+gfx") or a "-" ("1g.24gb-me"). A "+" is not allowed in a
// Kubernetes resource name or label key, so NVIDIA's device plugin and GPU Feature
// Discovery write it as "." (nvidia.com/mig-1g.10gb.me). The catalog, layouts and device
// IDs keep NVIDIA's own spelling; resources.MIGResource and Name.MIGProfile convert
// between the two, and this file builds the label names and values from them.

// MIGLabelKey is the node label GPU Feature Discovery writes for one attribute of a MIG
// profile: ("1g.10gb+me", "count") -> nvidia.com/mig-1g.10gb.me.count.
func MIGLabelKey(profile, attribute string) string {
	return string(resources.MIGResource(profile)) + "." + attribute
}

// maxLabelValue is Kubernetes' limit on a label value's length.
const maxLabelValue = 63

// MIGProductLabel is the nvidia.com/gpu.product value under the MIG single strategy:
// "<product>-MIG-<profile>" with the profile in the Kubernetes spelling
// ("NVIDIA-A100-SXM4-40GB-MIG-1g.5gb.me"). A product too long for the 63 characters a
// label value may hold is cut, never the profile, so the value stays valid and still
// names the profile.
func MIGProductLabel(product, profile string) string {
	suffix := "-MIG-" + strings.TrimPrefix(string(resources.MIGResource(profile)), resources.MIGPrefix)
	if over := len(product) + len(suffix) - maxLabelValue; over > 0 && over < len(product) {
		product = strings.TrimRight(product[:len(product)-over], "-_.")
	}
	return product + suffix
}
