package nodeagent

import (
	"context"
	"fmt"

	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/nodeagent/nvml"
)

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

// applicationXID reports XIDs caused by the application, not the GPU (the NVIDIA device
// plugin skips the same ones): 13 graphics engine exception, 31 GPU memory page fault,
// 43 GPU stopped processing, 45 preemptive cleanup, 68 video processor exception,
// 109 context switch timeout.
func applicationXID(xid uint64) bool {
	switch xid {
	case 13, 31, 43, 45, 68, 109:
		return true
	}
	return false
}

// criticalEvents are the event types that make a device unhealthy.
const criticalEvents = nvml.EventTypeXidCriticalError | nvml.EventTypeDoubleBitEccError

// HealthWatcher turns NVML events into health changes of an Inventory.
type HealthWatcher struct {
	inv  *Inventory
	set  nvml.EventSet
	gpus map[string]int // GPU UUID -> index
	sink HealthSink
}

// NewHealthWatcher registers every GPU of d for XID and double-bit ECC events.
func NewHealthWatcher(lib nvml.Interface, d *Discovery, inv *Inventory, sink HealthSink) (*HealthWatcher, error) {
	set, r := lib.EventSetCreate()
	if r != nvml.SUCCESS {
		return nil, nvml.Wrap(r, "creating an NVML event set")
	}
	w := &HealthWatcher{inv: inv, set: set, gpus: map[string]int{}, sink: sink}
	for _, g := range d.GPUs {
		h, r := lib.DeviceGetHandleByIndex(g.Index)
		if r != nvml.SUCCESS {
			set.Free()
			return nil, nvml.Wrap(r, "GPU %d: getting its handle", g.Index)
		}
		supported, r := h.GetSupportedEventTypes()
		if r != nvml.SUCCESS {
			continue // no events on this GPU: it can only be marked by hand
		}
		if r := h.RegisterEvents(supported&criticalEvents, set); r != nvml.SUCCESS {
			set.Free()
			return nil, nvml.Wrap(r, "GPU %d: registering for health events", g.Index)
		}
		w.gpus[g.UUID] = g.Index
	}
	return w, nil
}

// Run waits for events until ctx ends, waking every pollMs to check ctx.
func (w *HealthWatcher) Run(ctx context.Context, pollMs uint32) error {
	defer w.set.Free()
	for ctx.Err() == nil {
		ev, r := w.set.Wait(pollMs)
		switch r {
		case nvml.SUCCESS:
			w.Handle(ev)
		case nvml.ERROR_TIMEOUT:
		default:
			return nvml.Wrap(r, "waiting for NVML events")
		}
	}
	return nil
}

// Handle applies one event: critical XIDs and double-bit ECC errors mark the GPU's
// devices unhealthy (or, for an event inside one GPU instance, that MIG device only).
func (w *HealthWatcher) Handle(ev nvml.EventData) {
	if ev.EventType&criticalEvents == 0 || ev.Device == nil {
		return
	}
	if ev.EventType&nvml.EventTypeXidCriticalError != 0 && applicationXID(ev.EventData) {
		return
	}
	uuid, r := ev.Device.GetUUID()
	if r != nvml.SUCCESS {
		return
	}
	gpu, ok := w.gpus[uuid]
	if !ok {
		return
	}
	reason := fmt.Sprintf("double-bit ECC error on GPU %d", gpu)
	if ev.EventType&nvml.EventTypeXidCriticalError != 0 {
		reason = fmt.Sprintf("XID %d on GPU %d", ev.EventData, gpu)
	}
	var changed []string
	if id, ok := w.migDeviceID(gpu, ev.GpuInstanceID); ok {
		changed = w.inv.SetDeviceHealth(id, false)
		reason += fmt.Sprintf(" (GPU instance %d)", ev.GpuInstanceID)
	} else {
		changed = w.inv.SetHealth(gpu, false)
	}
	if len(changed) > 0 && w.sink != nil {
		w.sink(HealthEvent{GPU: gpu, IDs: changed, Reason: reason})
	}
}

// migDeviceID finds the advertised MIG device of a GPU instance, when the event names one.
func (w *HealthWatcher) migDeviceID(gpu int, gi uint32) (string, bool) {
	if gi == nvml.NoInstance {
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
