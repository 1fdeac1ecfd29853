package devices

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/gantry-sched/gantry/pkg/resources"
)

// migUnit is one device a MIG GPU hands out: a whole instance, or one replica of a
// time-sliced instance (NVIDIA's time-sliced MIG). A GPU's units are fixed when the node
// is built and shared, read-only, by its clones; gpuState.instUsed says which are held.
// The replicas of one instance are consecutive units.
type migUnit struct {
	profile  string // its instance's profile, as the layout spells it
	inst     int    // position in GPU.Instances
	replica  int    // replica number; -1 for the whole instance
	replicas int    // replicas of its instance; 0 when not time-sliced
	// shared: advertised under the ".shared" rename (nvidia.com/mig-<profile>.shared or
	// nvidia.com/gpu.shared), so only requests for that name get it.
	shared bool
	name   resources.Name
	milli  resources.MilliGPU
	memory resources.MiB
}

// migPositions counts the MIG devices of each advertised resource over the node, in GPU
// and instance order, for NVIDIA's "devices: <count>" selections, as the node agent
// counts them.
type migPositions []migPosition

type migPosition struct {
	name resources.Name
	seen int
}

// next is the position of the next device of name.
func (p *migPositions) next(name resources.Name) int {
	for i := range *p {
		if (*p)[i].name == name {
			(*p)[i].seen++
			return (*p)[i].seen - 1
		}
	}
	*p = append(*p, migPosition{name: name, seen: 1})
	return 0
}

// newMIGUnits lists what MIG GPU g (model m, sharing s) hands out. An instance s
// time-slices (MIGReplication, selected as the node agent selects it: "<gpu>:<k>" or
// its position among the node's devices of the resource) becomes Replicas units of
// its memory ÷ Replicas and milli ÷ Replicas, both rounded down, so the replicas never
// add up to more than the instance (a 1g.5gb of 142m in 3 replicas is 47m each).
func newMIGUnits(g *GPU, m *Model, s *Sharing, pos *migPositions) []migUnit {
	units := make([]migUnit, 0, len(g.Instances))
	for k, in := range g.Instances {
		p, _ := m.Profile(in.Profile)
		u := migUnit{profile: in.Profile, inst: k, replica: -1, name: migResource(*s, p.Name), milli: p.Milli(m.MIG), memory: p.Memory}
		if len(s.Resources) == 0 {
			units = append(units, u)
			continue
		}
		ref := DeviceRef{Position: pos.next(u.name), Index: strconv.Itoa(g.Index) + ":" + strconv.Itoa(k)}
		r, ok := s.MIGReplication(u.name, ref)
		if !ok {
			units = append(units, u)
			continue
		}
		adv := s.AdvertisedName(r)
		for i := range r.Replicas {
			units = append(units, migUnit{profile: in.Profile, inst: k, replica: i, replicas: r.Replicas, shared: adv != u.name, name: adv,
				milli: u.milli / resources.MilliGPU(r.Replicas), memory: u.memory / resources.MiB(r.Replicas)})
		}
	}
	return units
}

// unitDevice is the device of unit u.
func (g *gpuState) unitDevice(u int) Device {
	mu := &g.units[u]
	d := Device{GPU: g.spec.Index, Kind: MIGDevice, Instance: g.spec.Instances[mu.inst], Milli: mu.milli, Memory: mu.memory}
	if mu.replica >= 0 {
		d.Kind, d.Replica = MIGReplicaDevice, mu.replica
	}
	return d
}

// unitMatches reports whether free unit u serves one device of a request for profile
// ("" = any) under its plain (shared false) or ".shared" name: a replica only when the
// GPU's sharing lets the request's largest container hold that many replicas.
func (g *gpuState) unitMatches(u int, r Request, profile string, shared bool) bool {
	mu := &g.units[u]
	if g.instUsed[u] || mu.shared != shared || (profile != "" && mu.profile != profile) {
		return false
	}
	return mu.replica < 0 || g.replicaAllowed(mu, r)
}

// replicaAllowed reports whether the request's largest container may hold replica mu.
func (g *gpuState) replicaAllowed(mu *migUnit, r Request) bool {
	return g.sharing.CheckContainerReplicas(mu.name, r.containerReplicas()) == nil
}

var (
	errTimeSliced    = errors.New("MIG instance is time-sliced: hold one of its replicas")
	errNotTimeSliced = errors.New("MIG instance is not time-sliced")
)

// unitIndex is the unit a MIG device or MIG replica names on g.
func (g *gpuState) unitIndex(d Device) (int, error) {
	k, err := g.instanceIndex(d.Instance)
	if err != nil {
		return 0, err
	}
	first := 0
	for first < len(g.units) && g.units[first].inst != k {
		first++
	}
	mu := &g.units[first]
	switch {
	case d.Kind == MIGDevice && mu.replica >= 0:
		return 0, errTimeSliced
	case d.Kind == MIGDevice:
		return first, nil
	case mu.replica < 0:
		return 0, errNotTimeSliced
	case d.Replica < 0 || d.Replica >= mu.replicas:
		return 0, fmt.Errorf("replica %d out of range 0..%d of MIG instance %s", d.Replica, mu.replicas-1, d.Instance)
	}
	return first + d.Replica, nil
}

// freeUnitCount is how many of g's MIG units are free (the best-fit key).
func (g *gpuState) freeUnitCount() int {
	c := 0
	for _, u := range g.instUsed {
		if !u {
			c++
		}
	}
	return c
}
