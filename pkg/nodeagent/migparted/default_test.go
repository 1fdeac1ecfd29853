package migparted

import (
	"bytes"
	"fmt"
	"os"
	"sort"
	"testing"

	yaml "go.yaml.in/yaml/v3"

	"github.com/gantry-sched/gantry/pkg/devices"
)

// configMapPath is the ConfigMap that ships the default config to the node agent.
const configMapPath = "../../../config/nodeagent/mig-config.yaml"

func gpusOf(m devices.Model, id uint32, n int) []GPU {
	out := make([]GPU, n)
	for i := range out {
		out[i] = GPU{Index: i, PCIID: id, Model: m}
	}
	return out
}

func profilesOf(in []devices.Instance) []string {
	out := make([]string, len(in))
	for i, x := range in {
		out[i] = x.Profile
	}
	sort.Strings(out)
	return out
}

// TestDefaultConfigCoversCatalog: on every catalogued MIG model the default config has
// all-disabled, all-enabled, all-balanced (the model's balanced profiles) and, for each
// profile, all-<profile> with as many instances as the model allows, all valid layouts.
func TestDefaultConfigCoversCatalog(t *testing.T) {
	spec, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range devices.MIGModels() {
		ids := knownPCIIDs()[m.ID]
		if len(ids) == 0 {
			t.Errorf("%s: no PCI device ID known, so the default config cannot filter for it", m.ID)
			continue
		}
		gpus := gpusOf(m, ids[0], 2)
		want := map[string]string{
			"all-disabled": "false []",
			"all-enabled":  "true []",
			"all-balanced": fmt.Sprint("true ", sorted(m.MIG.Balanced)),
		}
		for _, p := range m.MIG.Profiles {
			want["all-"+ConfigSpelling(p.Name)] = fmt.Sprint("true ", repeat(p.Name, p.MaxCount))
		}
		for name, w := range want {
			plans, err := spec.Resolve(name, gpus)
			if err != nil {
				t.Errorf("%s %s: %v", m.ID, name, err)
				continue
			}
			for _, p := range plans {
				if got := fmt.Sprint(p.MIGEnabled, " ", profilesOf(p.Instances)); !p.Selected || got != w {
					t.Errorf("%s %s GPU %d: selected %t, %s; want %s", m.ID, name, p.Index, p.Selected, got, w)
				}
				if err := m.ValidateLayout(p.Instances); err != nil {
					t.Errorf("%s %s GPU %d: %v", m.ID, name, p.Index, err)
				}
			}
		}
	}
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

// TestDefaultConfigMapMatchesEmbedded: the ConfigMap the DaemonSet mounts carries exactly
// the embedded default, so an agent with and without the mount behave alike.
func TestDefaultConfigMapMatchesEmbedded(t *testing.T) {
	raw, err := os.ReadFile(configMapPath)
	if err != nil {
		t.Fatal(err)
	}
	var cm struct {
		Kind string            `yaml:"kind"`
		Data map[string]string `yaml:"data"`
	}
	if err := yaml.Unmarshal(raw, &cm); err != nil {
		t.Fatal(err)
	}
	if cm.Kind != "ConfigMap" || !bytes.Equal([]byte(cm.Data["config.yaml"]), DefaultYAML()) {
		t.Errorf("%s: kind %s, data.config.yaml differs from the embedded %s (regenerate with go test ./pkg/nodeagent/migparted -run GenerateDefault -update)", configMapPath, cm.Kind, DefaultFile)
	}
}
