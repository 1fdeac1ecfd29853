//go:build cgo

package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/spf13/cobra"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/dynamic-resource-allocation/resourceslice"

	"github.com/gantry-sched/gantry/pkg/dra"
	"github.com/gantry-sched/gantry/pkg/nodeagent"
	"github.com/gantry-sched/gantry/pkg/nodeagent/draplugin"
)

// addDRAFlags adds the DRA kubelet plugin's flags to node-agent.
func addDRAFlags(cmd *cobra.Command, f *nodeAgentFlags) {
	fl := cmd.Flags()
	fl.BoolVar(&f.dra, "dra", false, "also serve the DRA kubelet plugin as driver "+dra.DriverName+
		" (Kubernetes 1.34+, resource.k8s.io/v1): publish the GPUs and MIG devices as a ResourceSlice and prepare claims through CDI; do not run NVIDIA's DRA driver beside it")
	fl.BoolVar(&f.devicePlugin, "device-plugin", true, "serve the kubelet device plugin (nvidia.com/gpu, MIG and shared resources); false with --dra serves DRA only")
	fl.StringVar(&f.draRegistrar, "dra-registrar-dir", draplugin.DefaultRegistrarDir, "the kubelet's plugin registry, where the DRA plugin's registration socket goes")
	fl.StringVar(&f.draPluginDir, "dra-plugin-dir", draplugin.DefaultPluginDir, "the DRA plugin's directory: its socket and the checkpoint of prepared claims")
	fl.StringVar(&f.cdiDir, "cdi-dir", draplugin.DefaultCDIDir, "where prepared claims' CDI specs are written (the container runtime's CDI directory)")
}

// startDRAPlugin registers the DRA plugin with the kubelet and publishes the node's
// slices; the returned sink takes unhealthy devices out of the pool and then tells
// next. A fatal plugin error ends the agent through cancel.
func startDRAPlugin(ctx context.Context, cancel context.CancelCauseFunc, env agentEnv, f nodeAgentFlags, p agentParts,
	next nodeagent.HealthSink) (func(), nodeagent.HealthSink, error) {
	n := draplugin.NodeFromDiscovery(f.nodeName, p.d, draplugin.SysfsPCIeRoot)
	drv, err := draplugin.New(draConfig(f, env.w, cancel, p.lib, n), n)
	if err != nil {
		return nil, nil, err
	}
	helper, err := drv.Start(ctx, env.node.Client)
	if err != nil {
		return nil, nil, err
	}
	res := drv.Resources()
	fmt.Fprintf(env.w, "serving DRA driver %s (%d devices)\n", dra.DriverName, countDevices(res.Pools[f.nodeName].Slices))
	return helper.Stop, drv.HealthSink(ctx, next), nil
}

// draConfig is the plugin's configuration for node n: its host directories from the
// flags, and MIG carving through the agent's own NVML handle, so a claim allocated a
// placement of an all-dynamic GPU gets its instance created when it is prepared (and
// destroyed when it is unprepared).
func draConfig(f nodeAgentFlags, log io.Writer, onFatal func(error), lib nvml.Interface, n draplugin.Node) draplugin.Config {
	return draplugin.Config{RegistrarDir: f.draRegistrar, PluginDir: f.draPluginDir, CDIDir: f.cdiDir, Log: log, OnFatal: onFatal,
		MIG: draplugin.NVMLCarver(lib, n.GPUs)}
}

// dryRunDRADevice is one device the DRA plugin would publish.
type dryRunDRADevice struct {
	Name    string `json:"name"`
	Type    string `json:"type"`
	UUID    string `json:"uuid,omitempty"`
	Profile string `json:"profile,omitempty"`
	Memory  string `json:"memory,omitempty"`
}

// draDryRun lists the devices the DRA plugin would publish for d.
func draDryRun(f nodeAgentFlags, d *nodeagent.Discovery) ([]dryRunDRADevice, error) {
	name := f.nodeName
	if name == "" {
		name = "node"
	}
	n := draplugin.NodeFromDiscovery(name, d, nil)
	inv, err := dra.NewNodeInventory(n.Name, n.GPUs, dra.WithHostFacts(n.Facts))
	if err != nil {
		return nil, err
	}
	var out []dryRunDRADevice
	for _, dev := range inv.Devices() {
		row := dryRunDRADevice{Name: dev.Name, Type: stringAttr(dev, dra.AttrType), UUID: stringAttr(dev, dra.AttrUUID),
			Profile: stringAttr(dev, dra.AttrProfile)}
		if c, ok := dev.Capacity[dra.CapacityMemory]; ok {
			row.Memory = c.Value.String()
		}
		out = append(out, row)
	}
	return out, nil
}

// stringAttr is a device's string attribute, or "".
func stringAttr(d resourcev1.Device, name resourcev1.QualifiedName) string {
	if a, ok := d.Attributes[name]; ok && a.StringValue != nil {
		return *a.StringValue
	}
	return ""
}

// countDevices counts the devices of a pool's slices.
func countDevices(slices []resourceslice.Slice) int {
	n := 0
	for _, s := range slices {
		n += len(s.Devices)
	}
	return n
}

// printDryRun prints what the agent found and would advertise, and with --dra the DRA
// devices too.
func printDryRun(w io.Writer, f nodeAgentFlags, d *nodeagent.Discovery, inv *nodeagent.Inventory, labels map[string]string) error {
	var devs []dryRunDRADevice
	if f.dra {
		var err error
		if devs, err = draDryRun(f, d); err != nil {
			return err
		}
	}
	if f.output.machine() {
		report := dryRunReport(d, inv, labels)
		report.DRADevices = devs
		return writeOutput(w, *f.output, report)
	}
	if err := printDiscovery(w, d, inv, labels); err != nil {
		return err
	}
	if f.dra {
		fmt.Fprintf(w, "DRA devices (%s): %d\n", dra.DriverName, len(devs))
		for _, dv := range devs {
			fmt.Fprintf(w, "  %-26s %-4s %-10s %-8s %s\n", dv.Name, dv.Type, dv.Profile, dv.Memory, dv.UUID)
		}
	}
	return nil
}
