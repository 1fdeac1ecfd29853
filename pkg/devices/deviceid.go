package devices

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gantry-sched/gantry/pkg/resources"
)

// The parts of a device ID. Device.ID writes them and this file alone reads them back,
// so the syntax has one owner.
const (
	idGPU     = "GPU-"
	idMIG     = "mig-"
	idReplica = "replica-"
	idShare   = "share-"
)

// idSyntax says how an ID must look, for error messages.
const idSyntax = "want GPU-<i>, GPU-<i>/mig-<profile>@<start>[/replica-<r>], GPU-<i>/replica-<r> or GPU-<i>/share-<m>m[-<MiB>Mi]"

// GPUOfID is the GPU index a device ID names: "GPU-3/mig-1g.10gb@4" -> 3. A MIG
// instance, replica or share belongs to its GPU (its health is the GPU's). The whole ID
// must be well formed; no node is needed.
func GPUOfID(id string) (int, error) {
	d, err := parseIDForm(id)
	return d.GPU, err
}

// KindOfID is the kind of device an ID names ("GPU-0/share-320m" -> ShareDevice),
// without a node.
func KindOfID(id string) (DeviceKind, error) {
	d, err := parseIDForm(id)
	return d.Kind, err
}

// ParseDeviceID reads an ID that Device.ID wrote back into that Device, valued against
// the node's GPU it names (the milli-GPU and memory of a whole GPU, MIG instance or
// replica come from the GPU's model and sharing; a share carries its own). It checks that
// the GPU exists, a MIG profile belongs to its model and a replica's GPU is shared (a MIG
// replica's instance in the layout and time-sliced, as its share depends on it); that
// the device is free, or the instance in the layout, is Commit's job.
func ParseDeviceID(id string, nd *NodeDevices) (Device, error) {
	d, err := parseIDForm(id)
	if err != nil {
		return Device{}, fmt.Errorf("device %q: %w", id, err)
	}
	if nd == nil {
		return Device{}, fmt.Errorf("device %q: the node has no GPUs", id)
	}
	pos, ok := nd.find(d.GPU)
	if !ok {
		return Device{}, fmt.Errorf("device %q: no GPU-%d on the node", id, d.GPU)
	}
	if err := nd.gpus[pos].value(&d); err != nil {
		return Device{}, fmt.Errorf("device %q: %w", id, err)
	}
	return d, nil
}

// AssignmentFromIDs rebuilds the assignment behind a bound pod's device IDs (its
// gantry.dev/devices annotation), so a restarted controller charges exactly what was
// bound. The inverse of Assignment.IDs; no IDs is the zero assignment.
func AssignmentFromIDs(nd *NodeDevices, ids []string) (Assignment, error) {
	var a Assignment
	for _, id := range ids {
		d, err := ParseDeviceID(id, nd)
		if err != nil {
			return Assignment{}, err
		}
		a.Devices = append(a.Devices, d)
	}
	return a, nil
}

// value fills in what the ID leaves to the GPU: milli-GPU and memory.
func (g *gpuState) value(d *Device) error {
	switch d.Kind {
	case WholeGPU:
		d.Milli, d.Memory = resources.MilliPerGPU, g.model.Memory
	case MIGDevice:
		p, ok := g.model.Profile(d.Instance.Profile)
		if !ok {
			return fmt.Errorf("%s has no MIG profile %q", g.model.ID, d.Instance.Profile)
		}
		d.Instance.Profile = p.Name // the catalog's spelling, as the layout holds it
		d.Milli, d.Memory = p.Milli(g.model.MIG), p.Memory
	case MIGReplicaDevice:
		if p, ok := g.model.Profile(d.Instance.Profile); ok {
			d.Instance.Profile = p.Name
		}
		u, err := g.unitIndex(*d)
		if err != nil {
			return err
		}
		d.Milli, d.Memory = g.units[u].milli, g.units[u].memory
	case ReplicaDevice:
		s := g.sharing
		if s.Replicas < 1 {
			return fmt.Errorf("GPU-%d is not time-sliced or MPS", g.spec.Index)
		}
		d.Milli, d.Memory = replicaMilli(s.Replicas), s.ReplicaMemory(*g.model)
	}
	return nil
}

// parseIDForm reads what an ID says on its own: the GPU, the kind, and the instance,
// replica or share. Numbers must be written as Device.ID writes them (no sign, no
// leading zeros), so a parsed ID formats back to itself.
func parseIDForm(id string) (Device, error) {
	head, tail, sub := strings.Cut(id, "/")
	gpu, ok := parseIndex(strings.TrimPrefix(head, idGPU))
	if !ok || !strings.HasPrefix(head, idGPU) {
		return Device{}, fmt.Errorf("%q: %s", id, idSyntax)
	}
	d := Device{GPU: gpu, Kind: WholeGPU}
	if !sub {
		return d, nil
	}
	if !parseTail(tail, &d) {
		return Device{}, fmt.Errorf("%q: %s", id, idSyntax)
	}
	return d, nil
}

// parseTail reads the part after "GPU-<i>/" into d.
func parseTail(tail string, d *Device) bool {
	if rest, ok := strings.CutPrefix(tail, idMIG); ok {
		prof, start, ok := strings.Cut(rest, "@")
		start, replica, isReplica := strings.Cut(start, "/")
		s, okStart := parseIndex(start)
		d.Kind, d.Instance = MIGDevice, Instance{Profile: prof, Start: s}
		if isReplica {
			r, okReplica := strings.CutPrefix(replica, idReplica)
			d.Kind, d.Replica = MIGReplicaDevice, -1
			if n, okN := parseIndex(r); okReplica && okN {
				d.Replica = n
			}
			ok = ok && d.Replica >= 0
		}
		return ok && okStart && prof != ""
	}
	if rest, ok := strings.CutPrefix(tail, idReplica); ok {
		r, ok := parseIndex(rest)
		d.Kind, d.Replica = ReplicaDevice, r
		return ok
	}
	if rest, ok := strings.CutPrefix(tail, idShare); ok {
		milli, mem, ok := parseShare(rest)
		d.Kind, d.Milli, d.Memory = ShareDevice, milli, mem
		return ok
	}
	return false
}

// parseShare reads "<m>m" or "<m>m-<mem>Mi".
func parseShare(s string) (resources.MilliGPU, resources.MiB, bool) {
	m, mem, hasMem := strings.Cut(s, "-")
	milli, ok := parseIndex(strings.TrimSuffix(m, "m"))
	if !ok || !strings.HasSuffix(m, "m") {
		return 0, 0, false
	}
	if !hasMem {
		return resources.MilliGPU(milli), 0, true
	}
	mib, ok := parseIndex(strings.TrimSuffix(mem, "Mi"))
	if !ok || mib == 0 || !strings.HasSuffix(mem, "Mi") { // Device.ID leaves out no memory
		return 0, 0, false
	}
	return resources.MilliGPU(milli), resources.MiB(mib), true
}

// parseIndex reads a non-negative decimal written without sign or leading zeros.
func parseIndex(s string) (int, bool) {
	n, err := strconv.Atoi(s)
	return n, err == nil && n >= 0 && strconv.Itoa(n) == s
}
