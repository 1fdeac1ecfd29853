package devices

import (
	"github.com/gantry-sched/gantry/pkg/resources"
)

// nodeBuilder builds test nodes fluently:
// makeNode("H100", 8).NVLink(4).MIG(MIGMixed, "all-balanced").Obj(t).
type nodeBuilder struct {
	model     string
	count     int
	sharing   Sharing
	perDomain int
	unhealthy []int
}

// tb is what the helpers need from *testing.T and *rapid.T alike.
type tb interface {
	Helper()
	Fatal(args ...any)
}

func makeNode(model string, count int) *nodeBuilder {
	return &nodeBuilder{model: model, count: count, sharing: Sharing{Mode: Exclusive}}
}

func (b *nodeBuilder) NVLink(perDomain int) *nodeBuilder { b.perDomain = perDomain; return b }

func (b *nodeBuilder) MIG(strategy MIGStrategy, layout string, custom ...[]string) *nodeBuilder {
	b.sharing = Sharing{Mode: MIG, MIGStrategy: strategy, Layout: layout, CustomProfiles: custom}
	return b
}

func (b *nodeBuilder) TimeSlicing(replicas int, rename bool) *nodeBuilder {
	b.sharing = Sharing{Mode: TimeSlicing, Replicas: replicas, RenameByDefault: rename}
	return b
}

func (b *nodeBuilder) MPS(replicas int, limit resources.MiB) *nodeBuilder {
	b.sharing = Sharing{Mode: MPS, Replicas: replicas, MPSMemoryLimit: limit}
	return b
}

func (b *nodeBuilder) Fractional() *nodeBuilder { b.sharing = Sharing{Mode: Fractional}; return b }

func (b *nodeBuilder) Unhealthy(idx ...int) *nodeBuilder { b.unhealthy = idx; return b }

func (b *nodeBuilder) Obj(t tb) *NodeDevices {
	t.Helper()
	m, err := LookupModel(b.model)
	if err != nil {
		t.Fatal(err)
	}
	gpus, err := NewGPUs(m, b.count, b.sharing, b.perDomain)
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range b.unhealthy {
		gpus[i].Healthy = false
	}
	n, err := NewNodeDevices(gpus)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// req builds a Request from resource name/amount pairs through ParseRequest.
func req(t tb, kv ...any) Request {
	t.Helper()
	v := resources.Vector{}
	for i := 0; i+1 < len(kv); i += 2 {
		v[resources.Name(kv[i].(string))] = resources.Amount(kv[i+1].(int))
	}
	r, err := ParseRequest(v)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func mustModel(t tb, name string) Model {
	t.Helper()
	m, err := LookupModel(name)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// sameVector compares vectors, treating missing and zero entries alike.
func sameVector(a, b resources.Vector) bool {
	for _, k := range append(a.Names(), b.Names()...) {
		if a[k] != b[k] {
			return false
		}
	}
	return true
}
