package migparted

import (
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/gantry-sched/gantry/pkg/devices"
)

var update = flag.Bool("update", false, "rewrite config-default.yaml from the catalog")

// knownPCIIDs are the catalog's PCI device IDs of its MIG models; only the default
// config's device filters use them.
func knownPCIIDs() map[devices.ModelID][]uint32 {
	out := map[devices.ModelID][]uint32{}
	for _, m := range devices.Models() {
		if m.MIG != nil {
			out[m.ID] = m.PCIDeviceIDs
		}
	}
	return out
}

// TestGenerateDefault rewrites config-default.yaml with -update; without it, it only
// checks that the generator runs.
func TestGenerateDefault(t *testing.T) {
	out := generateDefault(devices.MIGModels(), knownPCIIDs())
	if !*update {
		return
	}
	if err := os.WriteFile("config-default.yaml", out, 0o644); err != nil {
		t.Fatal(err)
	}
	cm := "# Gantry's default mig-parted config for the node agent's MIG manager (generated from\n" +
		"# pkg/devices' catalog; the same file is embedded in pkg/nodeagent/migparted).\n" +
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: gantry-mig-parted-config\n  namespace: gantry-system\ndata:\n  config.yaml: |\n" + indent(string(out), "    ")
	if err := os.WriteFile(configMapPath, []byte(cm), 0o644); err != nil {
		t.Fatal(err)
	}
}

func indent(s, pre string) string {
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		if strings.TrimSpace(l) != "" {
			lines[i] = pre + l
		}
	}
	return strings.Join(lines, "")
}

// generateDefault writes the default config for models.
func generateDefault(models []devices.Model, ids map[devices.ModelID][]uint32) []byte {
	var b strings.Builder
	b.WriteString("# Gantry's default mig-parted config (version v1, the format of NVIDIA's mig-parted and\n" +
		"# MIG manager). Select a config with the node label nvidia.com/mig.config=<name>.\n" +
		"version: v1\nmig-configs:\n")
	b.WriteString("  all-disabled:\n    - devices: all\n      mig-enabled: false\n\n")
	b.WriteString("  all-enabled:\n    - devices: all\n      mig-enabled: true\n      mig-devices: {}\n\n")
	for _, name := range profileNames(models) {
		writeAllProfile(&b, name, models, ids)
	}
	b.WriteString("  all-balanced:\n")
	for _, m := range models {
		if len(ids[m.ID]) == 0 || len(m.MIG.Balanced) == 0 {
			continue
		}
		counts := map[string]int{}
		for _, p := range m.MIG.Balanced {
			counts[FileSpelling(p)]++
		}
		writeEntry(&b, string(m.ID), ids[m.ID], counts)
	}
	return []byte(b.String())
}

// profileNames lists every profile of the models, in file spelling, sorted.
func profileNames(models []devices.Model) []string {
	seen := map[string]bool{}
	for _, m := range models {
		for _, p := range m.MIG.Profiles {
			seen[FileSpelling(p.Name)] = true
		}
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// writeAllProfile writes all-<profile>: as many instances as fit, one entry without a
// filter when every model agrees on the count, else one filtered entry per count.
func writeAllProfile(b *strings.Builder, name string, models []devices.Model, ids map[devices.ModelID][]uint32) {
	byCount := map[int][]devices.Model{}
	for _, m := range models {
		if p, ok := modelProfile(m, name); ok {
			byCount[p.MaxCount] = append(byCount[p.MaxCount], m)
		}
	}
	fmt.Fprintf(b, "  all-%s:\n", ConfigSpelling(name))
	if len(byCount) == 1 {
		for count, ms := range byCount {
			writeEntry(b, modelIDs(ms), nil, map[string]int{name: count})
		}
		b.WriteString("\n")
		return
	}
	counts := make([]int, 0, len(byCount))
	for c := range byCount {
		counts = append(counts, c)
	}
	sort.Ints(counts)
	for _, c := range counts {
		var filter []uint32
		for _, m := range byCount[c] {
			filter = append(filter, ids[m.ID]...)
		}
		writeEntry(b, modelIDs(byCount[c]), filter, map[string]int{name: c})
	}
	b.WriteString("\n")
}

func modelIDs(ms []devices.Model) string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = string(m.ID)
	}
	return strings.Join(out, ", ")
}

func writeEntry(b *strings.Builder, comment string, filter []uint32, counts map[string]int) {
	fmt.Fprintf(b, "    # %s\n", comment)
	if len(filter) > 0 {
		quoted := make([]string, len(filter))
		for i, id := range filter {
			quoted[i] = fmt.Sprintf("%q", fmt.Sprintf("0x%08X", id))
		}
		fmt.Fprintf(b, "    - device-filter: [%s]\n      devices: all\n", strings.Join(quoted, ", "))
	} else {
		b.WriteString("    - devices: all\n")
	}
	b.WriteString("      mig-enabled: true\n      mig-devices:\n")
	names := make([]string, 0, len(counts))
	for n := range counts {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(b, "        %q: %d\n", n, counts[n])
	}
}
