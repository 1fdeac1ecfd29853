package devices

// maxWholeFast is the most devices applyWhole takes: an assignment holds a node's
// GPUs at most, and a larger one goes the general way.
const maxWholeFast = 16

// applyWhole commits or releases an assignment of distinct whole GPUs in place: every
// device is checked first, in order, and the GPUs change only when all pass, so the
// result is apply's (all or nothing, the first failing device's error) without
// copying each touched GPU's state. done is false, with nothing checked or changed,
// for any other assignment (another kind, a GPU named twice, an unknown GPU, more
// than maxWholeFast devices): apply then works on copies.
func (n *NodeDevices) applyWhole(a Assignment, take bool) (done bool, err error) {
	if len(a.Devices) == 0 || len(a.Devices) > maxWholeFast {
		return false, nil
	}
	var buf [maxWholeFast]int
	pos := buf[:0]
	for _, d := range a.Devices {
		if d.Kind != WholeGPU {
			return false, nil
		}
		p, ok := n.find(d.GPU)
		if !ok {
			return false, nil
		}
		for _, q := range pos {
			if q == p {
				return false, nil
			}
		}
		pos = append(pos, p)
	}
	for k, p := range pos {
		if err := n.gpus[p].checkWhole(take); err != nil {
			return true, &DeviceError{Device: a.Devices[k], Err: err}
		}
	}
	for _, p := range pos {
		g := &n.gpus[p]
		g.wholeUsed = take
		n.freeMilli[p] = g.freeMilliNow()
	}
	return true, nil
}

// checkWhole is why g cannot be taken (take) or given back whole, as take and give
// answer for a WholeGPU device.
func (g *gpuState) checkWhole(take bool) error {
	if !take {
		if !g.wholeUsed {
			return errNotHeldWhole
		}
		return nil
	}
	if !g.healthy {
		return errUnhealthy
	}
	return g.canTakeWhole()
}
