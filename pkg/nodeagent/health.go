package nodeagent

import (
	"context"
	"fmt"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/gantry-sched/gantry/pkg/devices"
)

// NoInstance is the GPU- and compute-instance ID of an NVML event about a whole GPU.
const NoInstance uint32 = 0xFFFFFFFF

// HealthEvent is one device-health change the agent reports.
type HealthEvent struct {
	GPU int
	// IDs are the Gantry device IDs that turned unhealthy.
	IDs    []string
	Reason string
}

// HealthSink receives health events (the node agent writes them to the Node so the
// controller can drop the devices from the node's allocatable and requeue the gangs
// that held them).
type HealthSink func(HealthEvent)

// watchedEvents are the event types that make a device unhealthy. NVIDIA's plugin
// registers single-bit ECC too but acts on XIDs only; a double-bit ECC error also
// raises XID 48, and Gantry marks it from either.
const watchedEvents = nvml.EventTypeXidCriticalError | nvml.EventTypeDoubleBitEccError

// HealthWatcher turns NVML events into health changes of an Inventory.
type HealthWatcher struct {
	inv    *Inventory
	checks HealthChecks
	set    nvml.EventSet  // nil when checks are off
	gpus   map[string]int // GPU UUID -> index
	order  []int          // the GPU indexes in discovery order
	sink   HealthSink
}

// NewHealthWatcher registers every GPU of d for XID and double-bit ECC events. A GPU
// whose events cannot be registered is marked unhealthy at once (through sink), as
// NVIDIA's device plugin does: nobody would notice it failing. With checks off nothing
// is registered or ever marked.
func NewHealthWatcher(lib nvml.Interface, d *Discovery, inv *Inventory, checks HealthChecks, sink HealthSink) (*HealthWatcher, error) {
	w := &HealthWatcher{inv: inv, checks: checks, gpus: map[string]int{}, sink: sink}
	if checks.Off {
		return w, nil
	}
	set, r := lib.EventSetCreate()
	if r != nvml.SUCCESS {
		return nil, nvmlError(r, "creating an NVML event set")
	}
	w.set = set
	for _, g := range d.GPUs {
		h, r := lib.DeviceGetHandleByIndex(g.Index)
		if r != nvml.SUCCESS {
			set.Free()
			return nil, nvmlError(r, "GPU %d: getting its handle", g.Index)
		}
		w.gpus[g.UUID] = g.Index
		w.order = append(w.order, g.Index)
		if reason := register(h, set); reason != "" {
			w.mark(g.Index, NoInstance, fmt.Sprintf("GPU %d cannot be watched for health events: %s", g.Index, reason))
		}
	}
	return w, nil
}

// register registers a GPU's watched events on set; it returns why it could not, or "".
func register(h nvml.Device, set nvml.EventSet) string {
	supported, r := h.GetSupportedEventTypes()
	if r != nvml.SUCCESS {
		return fmt.Sprintf("reading its event types: %v", r)
	}
	if supported&nvml.EventTypeXidCriticalError == 0 {
		return "it reports no XID events"
	}
	if r := h.RegisterEvents(supported&watchedEvents, set); r != nvml.SUCCESS {
		return fmt.Sprintf("registering XID and ECC events: %v", r)
	}
	return ""
}

// Run waits for events until ctx ends, waking every pollMs to check ctx. When waiting
// fails, every GPU is marked unhealthy (NVIDIA's plugin does the same) and waiting goes
// on after pollMs.
func (w *HealthWatcher) Run(ctx context.Context, pollMs uint32) error {
	if w.set == nil {
		<-ctx.Done()
		return nil
	}
	defer w.set.Free()
	for ctx.Err() == nil {
		ev, r := w.set.Wait(pollMs)
		switch r {
		case nvml.SUCCESS:
			w.Handle(ev)
		case nvml.ERROR_TIMEOUT:
		default:
			w.markAll(fmt.Sprintf("waiting for NVML events failed: %v", r))
			select {
			case <-ctx.Done():
			case <-time.After(time.Duration(pollMs) * time.Millisecond):
			}
		}
	}
	return nil
}

// Handle applies one event: a critical XID the configuration does not ignore, or a
// double-bit ECC error, marks the MIG device the event names (by GPU instance) or else
// the whole GPU unhealthy. An event whose device cannot be told marks every GPU.
func (w *HealthWatcher) Handle(ev nvml.EventData) {
	if w.checks.Off || ev.EventType&watchedEvents == 0 || ev.Device == nil {
		return
	}
	xid := ev.EventType&nvml.EventTypeXidCriticalError != 0
	if xid && w.checks.ignores(ev.EventData) {
		return
	}
	what := "double-bit ECC error"
	if xid {
		what = fmt.Sprintf("XID %d", ev.EventData)
	}
	uuid, r := ev.Device.GetUUID()
	if r != nvml.SUCCESS {
		w.markAll(fmt.Sprintf("%s on a GPU whose UUID cannot be read (%v)", what, r))
		return
	}
	gpu, ok := w.gpus[uuid]
	if !ok {
		return // not one of the node's GPUs as discovered
	}
	w.mark(gpu, ev.GpuInstanceId, fmt.Sprintf("%s on GPU %d", what, gpu))
}

// mark marks the MIG device of GPU instance gi, or (NoInstance, or a GPU instance not
// advertised) the whole GPU, and tells the sink what changed.
func (w *HealthWatcher) mark(gpu int, gi uint32, reason string) {
	var changed []string
	if id, ok := w.migDeviceID(gpu, gi); ok {
		changed = w.inv.SetDeviceHealth(id, false)
		reason += fmt.Sprintf(" (GPU instance %d)", gi)
	} else {
		changed = w.inv.SetHealth(gpu, false)
	}
	if len(changed) > 0 && w.sink != nil {
		w.sink(HealthEvent{GPU: gpu, IDs: changed, Reason: reason})
	}
}

// markAll marks every watched GPU unhealthy.
func (w *HealthWatcher) markAll(reason string) {
	for _, gpu := range w.order {
		w.mark(gpu, NoInstance, reason)
	}
}

// migDeviceID finds the advertised MIG device of a GPU instance, when the event names one.
func (w *HealthWatcher) migDeviceID(gpu int, gi uint32) (string, bool) {
	if gi == NoInstance {
		return "", false
	}
	w.inv.mu.Lock()
	defer w.inv.mu.Unlock()
	for _, id := range w.inv.order {
		p := w.inv.byID[id]
		if p.Device.GPU == gpu && p.giID == int(gi) && p.Device.Kind == devices.MIGDevice {
			return id, true
		}
	}
	return "", false
}
