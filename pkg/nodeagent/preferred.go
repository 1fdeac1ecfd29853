package nodeagent

import (
	"fmt"
	"sort"

	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// Preferred answers the kubelet's GetPreferredAllocation: size device IDs out of
// available, including mustInclude, chosen by pkg/devices' own picks (whole GPUs inside
// one NVLink domain and PCIe switch when possible; MIG instances and replicas best-fit),
// so the node prefers what the scheduler would have picked. Devices of resource that are
// not available (held, or unhealthy on a healthy GPU) count as held; an unhealthy GPU
// offers nothing in the model already.
func (inv *Inventory) Preferred(resource resources.Name, available, mustInclude []string, size int) ([]string, error) {
	if size < len(mustInclude) || size > len(available) {
		return nil, fmt.Errorf("preferred allocation of %d %s: %d available, %d required", size, resource, len(available), len(mustInclude))
	}
	if inv.migReplicas(resource) {
		return inv.preferMIGReplicas(resource, available, mustInclude, size)
	}
	inv.mu.Lock()
	nd := inv.model.Clone()
	free := map[string]bool{}
	for _, id := range available {
		free[id] = true
	}
	for _, id := range mustInclude {
		free[id] = false
	}
	var held devices.Assignment
	for _, id := range inv.order {
		p := inv.byID[id]
		if p.Resource == resource && !free[id] && !inv.gpuDown[p.Device.GPU] {
			held.Devices = append(held.Devices, p.Device)
		}
	}
	inv.mu.Unlock()
	if err := nd.Commit(held); err != nil {
		return nil, fmt.Errorf("preferred allocation of %s: %w", resource, err)
	}
	want := size - len(mustInclude)
	out := append([]string(nil), mustInclude...)
	if want == 0 {
		return out, nil
	}
	a, refusal := nd.Fit(requestFor(resource, int64(want)))
	if refusal != nil {
		return nil, fmt.Errorf("preferred allocation of %d %s: %s", want, resource, refusal)
	}
	return append(out, a.IDs()...), nil
}

// migReplicas reports whether resource advertises replicas of time-sliced MIG devices,
// which the device model does not know.
func (inv *Inventory) migReplicas(resource resources.Name) bool {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	for _, id := range inv.order {
		if p := inv.byID[id]; p.Resource == resource {
			return p.Device.Kind == devices.MIGDevice && p.Replicas > 0
		}
	}
	return false
}

// preferMIGReplicas picks the mustInclude replicas and then best fit: replicas of the MIG
// device with the fewest available (the fullest), as the device model picks GPU
// replicas, so lightly used devices stay whole. Ties go in advertising order.
func (inv *Inventory) preferMIGReplicas(resource resources.Name, available, mustInclude []string, size int) ([]string, error) {
	out := append([]string(nil), mustInclude...)
	taken := map[string]bool{}
	for _, id := range mustInclude {
		taken[id] = true
	}
	inv.mu.Lock()
	free := map[string][]string{} // base -> available replica IDs
	var bases []string
	for _, id := range available {
		p, ok := inv.byID[id]
		if !ok || taken[id] || p.Resource != resource {
			continue
		}
		if free[p.base] == nil {
			bases = append(bases, p.base)
		}
		free[p.base] = append(free[p.base], id)
	}
	inv.mu.Unlock()
	sort.SliceStable(bases, func(i, j int) bool { return len(free[bases[i]]) < len(free[bases[j]]) })
	for _, b := range bases {
		for _, id := range free[b] {
			if len(out) == size {
				return out, nil
			}
			out = append(out, id)
		}
	}
	if len(out) < size {
		return nil, fmt.Errorf("preferred allocation of %d %s: only %d of the available devices are on this node", size, resource, len(out))
	}
	return out, nil
}

// requestFor is the device-model request for n devices of one advertised resource.
func requestFor(resource resources.Name, n int64) devices.Request {
	if p, ok := resource.MIGProfile(); ok {
		return devices.Request{MIG: []devices.MIGCount{{Profile: p, Count: n}}}
	}
	if resource == resources.NvidiaGPUShared {
		return devices.Request{Shared: n}
	}
	return devices.Request{Units: n}
}
