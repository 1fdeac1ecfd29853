//go:build cgo

package cli

import (
	"fmt"
	"io"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/nodeagent"
	"github.com/gantry-sched/gantry/pkg/nodeagent/migparted"
	"github.com/gantry-sched/gantry/pkg/nodeagent/migprotocol"
)

// A node whose nvidia.com/mig.config label is all-dynamic (migparted.Dynamic) has its MIG
// layout chosen at allocation time: the DRA kubelet plugin carves each claim's instance,
// discovery lists none, and the MIG manager only keeps MIG mode on. The label is read
// once, at start; a switch to or from it restarts the agent (watchMIGConfig).

// errDynamicNeedsDRA is why all-dynamic is refused without --dra: only the DRA kubelet
// plugin carves instances, so the GPUs would hold none and serve nothing.
func errDynamicNeedsDRA(config string) error {
	return fmt.Errorf("MIG config %s leaves MIG instances to DRA claims, and this agent does not serve the DRA kubelet plugin: run it with --dra", config)
}

// wantsDynamic reports whether MIG config config makes this agent carve per claim: it
// names all-dynamic and the agent serves DRA (without --dra the config is refused and
// the GPUs stay as they are).
func wantsDynamic(config string, dra bool) bool {
	return dra && migparted.IsDynamic(config)
}

// configuredSharing is the sharing discovery and the inventory use under MIG config
// config: s unchanged, or for all-dynamic MIG with s's strategy and the layout chosen at
// allocation time (time-slicing and MPS need a fixed layout, so they do not apply). It
// refuses all-dynamic without --dra.
func configuredSharing(s devices.Sharing, config string, dra bool) (devices.Sharing, error) {
	if !migparted.IsDynamic(config) {
		return s, nil
	}
	if !dra {
		return s, errDynamicNeedsDRA(config)
	}
	return devices.Sharing{Mode: devices.MIG, MIGStrategy: s.MIGStrategy, Layout: devices.LayoutDynamic}, nil
}

// startSharing is the serving agent's sharing for its node's labels. all-dynamic without
// --dra does not stop the agent (its device plugin still serves the GPUs as they are):
// it says so on w, and the MIG manager reports the config failed with the same reason.
func startSharing(w io.Writer, s devices.Sharing, labels map[string]string, dra bool) devices.Sharing {
	out, err := configuredSharing(s, labels[migprotocol.LabelConfig], dra)
	if err != nil {
		fmt.Fprintf(w, "warning: node label %s: %v; serving the GPUs as they are\n", migprotocol.LabelConfig, err)
		return s
	}
	return out
}

// discoverNode discovers the node under s. A node without MIG GPUs has nothing to carve,
// so all-dynamic falls back to base there (with a warning on w).
func discoverNode(w io.Writer, lib nvml.Interface, s, base devices.Sharing) (*nodeagent.Discovery, devices.Sharing, error) {
	d, err := nodeagent.Discover(lib, s)
	if err != nil || !s.DynamicMIG() || d.MIGCapable {
		return d, s, err
	}
	fmt.Fprintf(w, "warning: MIG config %s: no GPU of the node has MIG; serving them whole\n", devices.LayoutDynamic)
	d, err = nodeagent.Discover(lib, base)
	return d, base, err
}

// layoutChanged reports whether the GPUs' MIG modes or instances differ from d (what the
// agent discovered at start under sharing and advertises); a failed read counts as a
// change. On a GPU with the dynamic layout both change with every claim carved or
// released, which is no change of what the agent publishes, so they are not compared.
func layoutChanged(lib nvml.Interface, d *nodeagent.Discovery, sharing devices.Sharing) bool {
	now, err := nodeagent.Discover(lib, sharing)
	if err != nil || len(now.GPUs) != len(d.GPUs) {
		return true
	}
	for i, g := range now.GPUs {
		was := d.GPUs[i]
		if was.Sharing.DynamicMIG() && g.Sharing.DynamicMIG() {
			continue
		}
		if g.MIGEnabled != was.MIGEnabled || fmt.Sprint(g.Instances) != fmt.Sprint(was.Instances) {
			return true
		}
	}
	return false
}

// restartNeeded reports whether the agent must restart after MIG config config reached
// success: it switched to or from all-dynamic (discovery and the published devices
// change kind), or the GPUs no longer hold what the agent advertises.
func restartNeeded(lib nvml.Interface, d *nodeagent.Discovery, sharing devices.Sharing, config string, dra bool) bool {
	return wantsDynamic(config, dra) != sharing.DynamicMIG() || layoutChanged(lib, d, sharing)
}
