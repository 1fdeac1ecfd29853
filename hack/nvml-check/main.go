// Command nvml-check runs the node agent's discovery against the real NVML on a GPU
// machine, read only: it never changes MIG mode, instances or any other setting. It
// prints what NVML reports per GPU (name, memory, MIG mode, every GPU-instance profile
// with its NVML memory and possible placements while MIG is on), then Gantry's
// discovery and the node labels it would write. It exits non-zero on any error.
//
//	go run ./hack/nvml-check [path/to/libnvidia-ml.so.1]
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/nodeagent"
)

func main() {
	if err := run(os.Stdout, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "nvml-check:", err)
		os.Exit(1)
	}
}

func run(w io.Writer, args []string) error {
	if len(args) > 1 {
		return fmt.Errorf("usage: nvml-check [path/to/libnvidia-ml.so.1]")
	}
	lib := nvml.New()
	if len(args) == 1 {
		lib = nvml.New(nvml.WithLibraryPath(args[0]))
	}
	if r := lib.Init(); r != nvml.SUCCESS {
		return fmt.Errorf("initialising NVML: %w", r)
	}
	defer lib.Shutdown()
	// NVML's own view first, so a discovery error still leaves the facts on screen.
	if err := printRaw(w, lib); err != nil {
		return err
	}
	d, err := nodeagent.Discover(lib, devices.Sharing{})
	if err != nil {
		return fmt.Errorf("discovery: %w", err)
	}
	printDiscovery(w, d)
	return watchHealth(w, lib, d)
}

// watchHealth registers the health watcher's events on the real GPUs (registering
// changes nothing on them) and waits a few seconds: a GPU whose events cannot be
// watched, or any XID in that time, is printed as the agent would report it.
func watchHealth(w io.Writer, lib nvml.Interface, d *nodeagent.Discovery) error {
	inv, err := nodeagent.NewInventory(d, devices.Sharing{})
	if err != nil {
		return fmt.Errorf("inventory: %w", err)
	}
	var events []nodeagent.HealthEvent
	hw, err := nodeagent.NewHealthWatcher(lib, d, inv, nodeagent.HealthChecks{}, func(ev nodeagent.HealthEvent) { events = append(events, ev) })
	if err != nil {
		return fmt.Errorf("health watcher: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := hw.Run(ctx, 500); err != nil && ctx.Err() == nil {
		return fmt.Errorf("health watcher: %w", err)
	}
	fmt.Fprintf(w, "health: events registered, watched 3s, %d health events, unhealthy devices %v\n", len(events), inv.Unhealthy())
	for _, ev := range events {
		fmt.Fprintf(w, "  GPU %d: %v: %s\n", ev.GPU, ev.IDs, ev.Reason)
	}
	return nil
}

// printRaw prints each GPU's NVML facts through read-only calls.
func printRaw(w io.Writer, lib nvml.Interface) error {
	driver, r := lib.SystemGetDriverVersion()
	if r != nvml.SUCCESS {
		return fmt.Errorf("driver version: %w", r)
	}
	cuda, _ := lib.SystemGetCudaDriverVersion()
	n, r := lib.DeviceGetCount()
	if r != nvml.SUCCESS {
		return fmt.Errorf("GPU count: %w", r)
	}
	fmt.Fprintf(w, "NVML: driver %s, CUDA %d.%d, %d GPUs\n", driver, cuda/1000, cuda%1000/10, n)
	for i := 0; i < n; i++ {
		h, r := lib.DeviceGetHandleByIndex(i)
		if r != nvml.SUCCESS {
			return fmt.Errorf("GPU %d: handle: %w", i, r)
		}
		printGPU(w, i, h)
	}
	return nil
}

func printGPU(w io.Writer, i int, h nvml.Device) {
	name, _ := h.GetName()
	mem, _ := h.GetMemoryInfo()
	cur, pend, r := h.GetMigMode()
	mig := fmt.Sprintf("MIG mode %d (pending %d)", cur, pend)
	if r != nvml.SUCCESS {
		mig = "MIG: " + r.Error()
	}
	fmt.Fprintf(w, "GPU %d: %q, %d MiB, %s\n", i, name, mem.Total>>20, mig)
	if r != nvml.SUCCESS {
		return
	}
	if cur != nvml.DEVICE_MIG_ENABLE {
		fmt.Fprintln(w, "  MIG mode is off (this tool never changes it): live instances cannot be listed")
	}
	for id := 0; id < nvml.GPU_INSTANCE_PROFILE_COUNT; id++ {
		info, r := h.GetGpuInstanceProfileInfo(id)
		if r != nvml.SUCCESS {
			fmt.Fprintf(w, "  profile id %2d: %v\n", id, r)
			continue
		}
		places, pr := h.GetGpuInstancePossiblePlacements(&info)
		var gis []nvml.GpuInstance
		gr := nvml.ERROR_NOT_SUPPORTED
		if cur == nvml.DEVICE_MIG_ENABLE {
			gis, gr = h.GetGpuInstances(&info)
		}
		fmt.Fprintf(w, "  profile %2d (driver id %2d) %-16s slices %d, %d MB, max %d, placements %v (%v), live %d (%v)\n",
			id, info.Id, nodeagent.ProfileName(id, info, mem.Total), info.SliceCount, info.MemorySizeMB, info.InstanceCount,
			places, pr, len(gis), gr)
	}
}

// printDiscovery prints Gantry's view: model, GPUs, MIG devices and labels.
func printDiscovery(w io.Writer, d *nodeagent.Discovery) {
	fmt.Fprintf(w, "Gantry: model %s (%s), product %s, MIG capable %t\n", d.Model.ID, d.Model.Family, d.Product, d.MIGCapable)
	for _, g := range d.GPUs {
		fmt.Fprintf(w, "GPU %d %s bus %s memory %d MiB NVLink domain %d PCIe switch %d MIG %t\n",
			g.Index, g.UUID, g.BusID, g.Memory, g.NVLinkDomain, g.PCIeSwitch, g.MIGEnabled)
		for _, p := range g.Profiles {
			fmt.Fprintf(w, "  profile %-16s NVML id %2d, %d MiB, placements %v\n", p.Name, p.NVMLID, p.Memory, p.Placements)
		}
		for _, m := range g.MIG {
			fmt.Fprintf(w, "  MIG device %s %s GI %d CI %d, %d MiB\n", m.Instance, m.UUID, m.GpuInstanceID, m.ComputeInstanceID, m.Memory)
		}
	}
	labels := nodeagent.Labels(d, devices.Sharing{})
	fmt.Fprintln(w, "labels:")
	for _, k := range nodeagent.SortedLabelKeys(labels) {
		fmt.Fprintf(w, "  %s=%s\n", k, labels[k])
	}
}
