package devices_test

import (
	"strings"
	"testing"

	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
	"k8s.io/apimachinery/pkg/util/validation"
)

func TestMIGNames(t *testing.T) {
	tests := []struct {
		profile, resource, label string
	}{
		{"1g.5gb", "nvidia.com/mig-1g.5gb", "nvidia.com/mig-1g.5gb.count"},
		{"1g.5gb+me", "nvidia.com/mig-1g.5gb.me", "nvidia.com/mig-1g.5gb.me.count"},
		{"1g.24gb+me.all", "nvidia.com/mig-1g.24gb.me.all", "nvidia.com/mig-1g.24gb.me.all.count"},
		{"2g.48gb+gfx", "nvidia.com/mig-2g.48gb.gfx", "nvidia.com/mig-2g.48gb.gfx.count"},
		{"1g.24gb-me", "nvidia.com/mig-1g.24gb-me", "nvidia.com/mig-1g.24gb-me.count"},
		// Already in the Kubernetes spelling: unchanged.
		{"1g.10gb.me", "nvidia.com/mig-1g.10gb.me", "nvidia.com/mig-1g.10gb.me.count"},
	}
	for _, tc := range tests {
		t.Run(tc.profile, func(t *testing.T) {
			if got := resources.MIGResource(tc.profile); string(got) != tc.resource {
				t.Errorf("MIGResource = %s, want %s", got, tc.resource)
			}
			if got := devices.MIGLabelKey(tc.profile, "count"); got != tc.label {
				t.Errorf("MIGLabelKey = %s, want %s", got, tc.label)
			}
		})
	}
}

// Reading accepts both spellings and gives NVIDIA's.
func TestMIGProfileFromResource(t *testing.T) {
	tests := []struct {
		name resources.Name
		want string // "" means not a MIG resource
	}{
		{"nvidia.com/mig-1g.10gb.me", "1g.10gb+me"},
		{"nvidia.com/mig-1g.10gb+me", "1g.10gb+me"},
		{"nvidia.com/mig-1g.24gb.me.all", "1g.24gb+me.all"},
		{"nvidia.com/mig-1g.24gb-me", "1g.24gb-me"},
		{"nvidia.com/mig-4g.96gb.gfx", "4g.96gb+gfx"},
		{"nvidia.com/mig-3g.40gb", "3g.40gb"},
		{"nvidia.com/gpu", ""},
	}
	for _, tc := range tests {
		got, ok := tc.name.MIGProfile()
		if ok != (tc.want != "") || got != tc.want {
			t.Errorf("MIGProfile(%s) = %q, %v; want %q", tc.name, got, ok, tc.want)
		}
	}
}

// For every model and profile of the catalog: the resource name, every per-profile label
// key GPU Feature Discovery writes and the MIG-single product value are valid Kubernetes
// names, the resource reads back into the same profile, and the model finds the profile
// by either spelling.
func TestEveryCatalogNameIsValidForKubernetes(t *testing.T) {
	attributes := []string{"count", "product", "replicas", "sharing-strategy", "memory", "multiprocessors",
		"slices.gi", "slices.ci", "engines.copy", "engines.decoder", "engines.encoder", "engines.jpeg", "engines.ofa"}
	checked := 0
	for _, m := range devices.Models() {
		for _, product := range append(m.Products, string(m.ID)) {
			if errs := validation.IsValidLabelValue(product); len(errs) > 0 {
				t.Errorf("%s: product %q is not a label value: %v", m.ID, product, errs)
			}
		}
		for _, name := range m.ProfileNames() {
			checked++
			res := resources.MIGResource(name)
			if errs := validation.IsQualifiedName(string(res)); len(errs) > 0 {
				t.Errorf("%s %s: resource %s: %v", m.ID, name, res, errs)
			}
			if back, _ := res.MIGProfile(); back != name {
				t.Errorf("%s: %s reads back as %q, want %q", m.ID, res, back, name)
			}
			if p, ok := m.Profile(strings.ReplaceAll(name, "+", ".")); !ok || p.Name != name {
				t.Errorf("%s: Profile(%q) = %q, %v", m.ID, strings.ReplaceAll(name, "+", "."), p.Name, ok)
			}
			for _, a := range attributes {
				if key := devices.MIGLabelKey(name, a); len(validation.IsQualifiedName(key)) > 0 {
					t.Errorf("%s %s: label key %s: %v", m.ID, name, key, validation.IsQualifiedName(key))
				}
			}
			for _, product := range m.Products {
				v := devices.MIGProductLabel(product, name)
				if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
					t.Errorf("%s %s: product label %q: %v", m.ID, name, v, errs)
				}
				if !strings.HasSuffix(v, "-MIG-"+strings.TrimPrefix(string(res), resources.MIGPrefix)) {
					t.Errorf("%s: product label %q lost the profile %s", m.ID, v, name)
				}
			}
		}
	}
	if checked < 100 {
		t.Fatalf("checked only %d profiles", checked)
	}
}

func TestMIGProductLabel(t *testing.T) {
	if got := devices.MIGProductLabel("NVIDIA-A100-SXM4-40GB", "1g.5gb+me"); got != "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb.me" {
		t.Errorf("got %q", got)
	}
	// 56 + 19 characters: the product is cut to fit 63.
	got := devices.MIGProductLabel("NVIDIA-RTX-PRO-6000-Blackwell-Max-Q-Workstation-Edition", "2g.48gb+me.all")
	if len(got) > 63 || got != "NVIDIA-RTX-PRO-6000-Blackwell-Max-Q-Workstat-MIG-2g.48gb.me.all" {
		t.Errorf("got %q (%d characters)", got, len(got))
	}
}
