package devices

import (
	"errors"
	"fmt"
	"slices"

	"github.com/gantry-sched/gantry/pkg/resources"
)

// Commit applies an assignment to the node's accounting. It is all or nothing: if any
// device is unknown, unhealthy, of the wrong kind or already held (also twice within the
// assignment itself), Commit returns an error and changes nothing. Nothing is ever double-booked.
func (n *NodeDevices) Commit(a Assignment) error {
	return n.apply(a, true)
}

// Release returns an assignment's devices. Releasing anything not held is an error and
// changes nothing; a release restores the free state exactly.
func (n *NodeDevices) Release(a Assignment) error {
	return n.apply(a, false)
}

// apply works on copies of the touched GPUs and writes them back only when every device
// succeeded. Assignments of whole GPUs only (nearly every one a reservation walk
// releases and binds again) take applyWhole's way, which copies nothing.
func (n *NodeDevices) apply(a Assignment, take bool) error {
	if done, err := n.applyWhole(a, take); done {
		return err
	}
	return n.applyCopies(a, take)
}

// applyCopies is apply on copies of the touched GPUs, for any assignment.
func (n *NodeDevices) applyCopies(a Assignment, take bool) error {
	var buf [8]touchedGPU // an assignment touches a few GPUs; more spill to the heap
	touched := buf[:0]
	for _, d := range a.Devices {
		pos, ok := n.find(d.GPU)
		if !ok {
			return fmt.Errorf("device %s: no GPU-%d on the node", d.ID(), d.GPU)
		}
		t := slices.IndexFunc(touched, func(t touchedGPU) bool { return t.pos == pos })
		if t < 0 {
			touched = append(touched, touchedGPU{pos: pos, g: n.gpus[pos].clone()})
			t = len(touched) - 1
		}
		g := &touched[t].g
		var err error
		if take {
			err = g.take(d)
		} else {
			err = g.give(d)
		}
		if err != nil {
			return &DeviceError{Device: d, Err: err}
		}
	}
	for _, t := range touched {
		n.gpus[t.pos] = t.g
		n.freeMilli[t.pos] = t.g.freeMilliNow()
	}
	return nil
}

// The ways a commit or release of one device fails. They are values, not formatted
// per call: a placement that probes an overlay meets them often and shows few of them.
var (
	errUnhealthy       = errors.New("GPU is unhealthy")
	errNotWhole        = errors.New("GPU is not offered whole")
	errGPUInUse        = errors.New("GPU is already in use")
	errInstanceInUse   = errors.New("MIG instance or replica is already in use")
	errReplicaInUse    = errors.New("replica is already in use")
	errNotFractional   = errors.New("GPU is not fractional")
	errHeldWhole       = errors.New("GPU is held whole")
	errNotHeldWhole    = errors.New("GPU is not held whole")
	errInstanceNotHeld = errors.New("MIG instance or replica is not held")
	errReplicaNotHeld  = errors.New("replica is not held")
	errNoInstances     = errors.New("GPU has no MIG instances")
	errNotReplicated   = errors.New("GPU is not time-sliced or MPS")
)

// DeviceError is a device that could not be committed or released, and why; the
// device ID is rendered only when the error is.
type DeviceError struct {
	Device Device
	Err    error
}

func (e *DeviceError) Error() string { return "device " + e.Device.ID() + ": " + e.Err.Error() }
func (e *DeviceError) Unwrap() error { return e.Err }

// touchedGPU is the working copy of one GPU an assignment changes.
type touchedGPU struct {
	pos int
	g   gpuState
}

// take holds device d on g.
func (g *gpuState) take(d Device) error {
	if !g.healthy {
		return errUnhealthy
	}
	switch d.Kind {
	case WholeGPU:
		if err := g.canTakeWhole(); err != nil {
			return err
		}
		g.wholeUsed = true
		return nil
	case MIGDevice, MIGReplicaDevice:
		if g.kind == unitDynamic {
			return g.carve(d)
		}
		k, err := g.unitIndex(d)
		if err != nil {
			return err
		}
		if g.instUsed[k] {
			return errInstanceInUse
		}
		g.instUsed[k] = true
		return nil
	case ReplicaDevice:
		if err := g.checkReplica(d.Replica); err != nil {
			return err
		}
		if g.replicaUsed[d.Replica] {
			return errReplicaInUse
		}
		g.replicaUsed[d.Replica] = true
		return nil
	case ShareDevice:
		return g.takeShare(d)
	}
	return fmt.Errorf("unknown device kind %d", d.Kind)
}

func (g *gpuState) takeShare(d Device) error {
	if g.kind != unitShare {
		return errNotFractional
	}
	if g.wholeUsed {
		return errHeldWhole
	}
	if d.Milli < 0 || d.Memory < 0 || (d.Milli == 0 && d.Memory == 0) {
		return fmt.Errorf("share of %dm and %d MiB is empty or negative", d.Milli, d.Memory)
	}
	if g.usedMilli+d.Milli > resources.MilliPerGPU || g.usedMemory+d.Memory > g.model.Memory {
		return fmt.Errorf("share does not fit: %dm and %d MiB already held of %dm and %d MiB", g.usedMilli, g.usedMemory, resources.MilliPerGPU, g.model.Memory)
	}
	g.shares = append(g.shares, share{milli: d.Milli, memory: d.Memory})
	g.usedMilli += d.Milli
	g.usedMemory += d.Memory
	return nil
}

// canTakeWhole is why a healthy g cannot be held whole now (nil: it can).
func (g *gpuState) canTakeWhole() error {
	if g.kind != unitWhole && g.kind != unitShare && g.kind != unitDynamic {
		return errNotWhole
	}
	if g.carved != 0 {
		return errCarvedBusy
	}
	if !g.entirelyFree() {
		return errGPUInUse
	}
	return nil
}

// give releases device d on g.
func (g *gpuState) give(d Device) error {
	switch d.Kind {
	case WholeGPU:
		if !g.wholeUsed {
			return errNotHeldWhole
		}
		g.wholeUsed = false
		return nil
	case MIGDevice, MIGReplicaDevice:
		if g.kind == unitDynamic {
			return g.uncarve(d)
		}
		k, err := g.unitIndex(d)
		if err != nil {
			return err
		}
		if !g.instUsed[k] {
			return errInstanceNotHeld
		}
		g.instUsed[k] = false
		return nil
	case ReplicaDevice:
		if err := g.checkReplica(d.Replica); err != nil {
			return err
		}
		if !g.replicaUsed[d.Replica] {
			return errReplicaNotHeld
		}
		g.replicaUsed[d.Replica] = false
		return nil
	case ShareDevice:
		return g.giveShare(d)
	}
	return fmt.Errorf("unknown device kind %d", d.Kind)
}

func (g *gpuState) giveShare(d Device) error {
	want := share{milli: d.Milli, memory: d.Memory}
	for i, s := range g.shares {
		if s == want {
			g.shares = append(g.shares[:i], g.shares[i+1:]...)
			g.usedMilli -= d.Milli
			g.usedMemory -= d.Memory
			return nil
		}
	}
	return fmt.Errorf("no share of %dm and %d MiB is held", d.Milli, d.Memory)
}

func (g *gpuState) instanceIndex(in Instance) (int, error) {
	if g.kind != unitMIG {
		return 0, errNoInstances
	}
	for k, have := range g.spec.Instances {
		if have == in {
			return k, nil
		}
	}
	return 0, fmt.Errorf("GPU has no MIG instance %s (layout %v)", in, g.spec.Instances)
}

func (g *gpuState) checkReplica(k int) error {
	if g.kind != unitReplica {
		return errNotReplicated
	}
	if k < 0 || k >= len(g.replicaUsed) {
		return fmt.Errorf("replica %d out of range 0..%d", k, len(g.replicaUsed)-1)
	}
	return nil
}
