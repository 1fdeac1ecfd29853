package controller

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// AssignmentFromIDs rebuilds the device assignment behind the IDs of a bound pod's
// gantry.dev/devices annotation, valued against the node's GPUs, so a restarted
// controller charges exactly what was bound. The inverse of devices.Assignment.IDs.
func AssignmentFromIDs(nd *devices.NodeDevices, ids []string) (devices.Assignment, error) {
	var a devices.Assignment
	if len(ids) == 0 {
		return a, nil
	}
	if nd == nil {
		return a, fmt.Errorf("devices %v: the node has no GPUs", ids)
	}
	gpus := map[int]devices.GPU{}
	for _, g := range nd.GPUs() {
		gpus[g.Index] = g
	}
	for _, id := range ids {
		d, err := parseDeviceID(id, gpus)
		if err != nil {
			return devices.Assignment{}, fmt.Errorf("device %q: %w", id, err)
		}
		a.Devices = append(a.Devices, d)
	}
	return a, nil
}

// parseDeviceID reads "GPU-<i>", "GPU-<i>/mig-<profile>@<start>", "GPU-<i>/replica-<r>"
// or "GPU-<i>/share-<m>m[-<mem>Mi]".
func parseDeviceID(id string, gpus map[int]devices.GPU) (devices.Device, error) {
	head, tail, _ := strings.Cut(id, "/")
	idx, err := strconv.Atoi(strings.TrimPrefix(head, "GPU-"))
	if !strings.HasPrefix(head, "GPU-") || err != nil {
		return devices.Device{}, fmt.Errorf("want GPU-<index>[/...]")
	}
	g, ok := gpus[idx]
	if !ok {
		return devices.Device{}, fmt.Errorf("no GPU-%d on the node", idx)
	}
	model, err := devices.LookupModel(string(g.Model))
	if err != nil {
		return devices.Device{}, err
	}
	d := devices.Device{GPU: idx}
	switch {
	case tail == "":
		d.Kind, d.Milli, d.Memory = devices.WholeGPU, resources.MilliPerGPU, model.Memory
	case strings.HasPrefix(tail, "mig-"):
		prof, start, ok := strings.Cut(strings.TrimPrefix(tail, "mig-"), "@")
		s, err := strconv.Atoi(start)
		p, known := model.Profile(prof)
		if !ok || err != nil || !known {
			return devices.Device{}, fmt.Errorf("want mig-<profile of %s>@<start>", model.ID)
		}
		d.Kind, d.Instance = devices.MIGDevice, devices.Instance{Profile: prof, Start: s}
		d.Milli, d.Memory = p.Milli(model.MIG), p.Memory
	case strings.HasPrefix(tail, "replica-"):
		r, err := strconv.Atoi(strings.TrimPrefix(tail, "replica-"))
		if err != nil || g.Sharing.Replicas < 1 {
			return devices.Device{}, fmt.Errorf("want replica-<slot> on a shared GPU")
		}
		d.Kind, d.Replica = devices.ReplicaDevice, r
		d.Milli = resources.MilliPerGPU / resources.MilliGPU(g.Sharing.Replicas)
		d.Memory = g.Sharing.ReplicaMemory(model)
	case strings.HasPrefix(tail, "share-"):
		milli, mem, err := parseShare(strings.TrimPrefix(tail, "share-"))
		if err != nil {
			return devices.Device{}, err
		}
		d.Kind, d.Milli, d.Memory = devices.ShareDevice, milli, mem
	default:
		return devices.Device{}, fmt.Errorf("unknown device kind %q", tail)
	}
	return d, nil
}

// parseShare reads "<m>m" or "<m>m-<mem>Mi".
func parseShare(s string) (resources.MilliGPU, resources.MiB, error) {
	m, mem, hasMem := strings.Cut(s, "-")
	milli, err := strconv.ParseInt(strings.TrimSuffix(m, "m"), 10, 64)
	if err != nil || !strings.HasSuffix(m, "m") {
		return 0, 0, fmt.Errorf("want share-<milli>m[-<MiB>Mi]")
	}
	var mib int64
	if hasMem {
		if mib, err = strconv.ParseInt(strings.TrimSuffix(mem, "Mi"), 10, 64); err != nil || !strings.HasSuffix(mem, "Mi") {
			return 0, 0, fmt.Errorf("want share-<milli>m[-<MiB>Mi]")
		}
	}
	return resources.MilliGPU(milli), resources.MiB(mib), nil
}
