package controller

import (
	"fmt"
	"reflect"
	"sync"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/dra"
	resourcev1 "k8s.io/api/resource/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// draStore keeps the Dynamic Resource Allocation objects (resource.k8s.io/v1) as the
// informers deliver them: DeviceClasses and ResourceClaimTemplates (what a pod's
// claims resolve to), ResourceClaims (the claims to allocate, and those allocated
// already, whose devices are taken) and the ResourceSlices of Gantry's GPU driver (a
// node's GPUs, when the node publishes them). A snapshot shares a view built once
// per change (draView), as nodes share their nodeView.
type draStore struct {
	classes   keyed[*resourcev1.DeviceClass]
	templates keyed[*resourcev1.ResourceClaimTemplate]
	claims    keyed[*resourcev1.ResourceClaim]
	slices    keyed[*resourcev1.ResourceSlice]
	view      *draView // nil when something changed since it was built
	// specGen counts changes of what a pod's claims resolve from (classes, templates,
	// claim specs): a workload model resolved under another generation is stale.
	specGen uint64
	// merged is the last queue objects given the DeviceClasses (withClasses): the
	// same pointer while neither changed, so the engine is not rebuilt for nothing.
	merged struct {
		base, out *api.Objects
		classGen  uint64
	}
	classGen uint64 // counts DeviceClass changes
	// nodes are the GPUs of the nodes last observed (observeNodes) by node name, what
	// allocationMode All is charged by; nil until the first observation.
	nodes nodeGPUs
	// compile is the DeviceClasses compiled against nodes, shared by every view until
	// a DeviceClass or a node's GPUs change (nil then).
	compile *classCompile
}

// nodeGPUs are the cluster's nodes' GPUs as DRA charges them, with the node view
// generation they were read at.
type nodeGPUs struct {
	gpus     map[string][]devices.GPU
	gen      uint64
	observed bool
}

// observeNodes records the nodes of node view generation gen. When a node's GPUs
// changed (a node came or went, its MIG layout or a GPU's health changed) the classes
// are compiled again, since an All claim's quota charge is the most it matches on one
// node, and the spec generation moves on: pod claims resolved before are charged by
// the old nodes. A generation seen before is not read again.
func (d *draStore) observeNodes(nodes []cluster.Node, gen uint64) {
	if d.nodes.observed && d.nodes.gen == gen {
		return
	}
	gpus := cluster.GPUsByNode(nodes)
	changed := !d.nodes.observed || !reflect.DeepEqual(d.nodes.gpus, gpus)
	d.nodes = nodeGPUs{gpus: gpus, gen: gen, observed: true}
	if changed {
		d.specGen++
		d.compile, d.view = nil, nil
	}
}

// draUpdate is what one event changed: whether o was a DRA object at all, and the
// node whose GPUs must be read again because its slices changed ("" for none).
type draUpdate struct {
	ok   bool
	node string
}

// update stores o, or forgets it when del is set, if o is a DRA object.
func (d *draStore) update(o client.Object, del bool) draUpdate {
	switch o := o.(type) {
	case *resourcev1.DeviceClass:
		d.specGen++
		d.classGen++
		d.compile = nil
		putOrDel(&d.classes, o, del)
	case *resourcev1.ResourceClaimTemplate:
		d.specGen++
		putOrDel(&d.templates, o, del)
	case *resourcev1.ResourceClaim:
		if old, had := d.claims.get(objKey(o)); !had || del || old.Generation != o.Generation {
			d.specGen++ // a status write (ours, mostly) changes no spec
		}
		putOrDel(&d.claims, o, del)
	case *resourcev1.ResourceSlice:
		if o.Spec.Driver != dra.DriverName || o.Spec.NodeName == nil {
			return draUpdate{ok: true}
		}
		putOrDel(&d.slices, o, del)
		d.view = nil
		return draUpdate{ok: true, node: *o.Spec.NodeName}
	default:
		return draUpdate{}
	}
	d.view = nil
	return draUpdate{ok: true}
}

func putOrDel[T client.Object](k *keyed[T], o T, del bool) {
	if del {
		k.del(objKey(o))
		return
	}
	k.put(objKey(o), o)
}

// nodeSlices are the slices Gantry's driver published for node, in key order
// (shared: read-only).
func (d *draStore) nodeSlices(node string) []resourcev1.ResourceSlice {
	var out []resourcev1.ResourceSlice
	for _, s := range d.slices.sorted() {
		if s.Spec.NodeName != nil && *s.Spec.NodeName == node {
			out = append(out, *s)
		}
	}
	return out
}

// withClasses returns the queue objects with the cluster's DeviceClasses, which the
// engine builder (engine.Build) compiles the pods' claims against.
func (d *draStore) withClasses(objs *api.Objects, v *draView) *api.Objects {
	if d.merged.base == objs && d.merged.classGen == d.classGen && d.merged.out != nil {
		return d.merged.out
	}
	out := *objs
	out.DeviceClasses = nil
	for _, c := range v.classes {
		out.DeviceClasses = append(out.DeviceClasses, api.DeviceClass{Object: *c, Source: api.Source{File: queueSource}})
	}
	d.merged.base, d.merged.out, d.merged.classGen = objs, &out, d.classGen
	return &out
}

// current returns the view, building it when something changed.
func (d *draStore) current() *draView {
	if d.view == nil {
		if d.compile == nil { // reset by every DeviceClass change: its classes are current
			d.compile = &classCompile{classes: d.classes.sorted(), nodes: d.nodes.gpus}
		}
		d.view = &draView{classes: d.compile.classes, templates: cloneItems(&d.templates),
			claims: cloneItems(&d.claims), specGen: d.specGen, compile: d.compile}
	}
	return d.view
}

func cloneItems[T any](k *keyed[T]) map[string]T {
	out := make(map[string]T, k.len())
	for key, v := range k.items {
		out[key] = v
	}
	return out
}

// draView is the DRA objects as one pass reads them; shared read-only by the
// snapshots taken until the next change.
type draView struct {
	classes   []*resourcev1.DeviceClass                    // by name
	templates map[string]*resourcev1.ResourceClaimTemplate // by "namespace/name"
	claims    map[string]*resourcev1.ResourceClaim         // by "namespace/name"
	specGen   uint64
	compile   *classCompile
}

// compiledClasses are the view's DeviceClasses ready to compile pod claims against,
// charging allocationMode All by the nodes observed. The same *dra.Classes serves
// every view until a DeviceClass or a node's GPUs change, so a caller can tell by the
// pointer whether the classes it compiled with still hold.
func (v *draView) compiledClasses() (*dra.Classes, error) {
	return v.compile.get()
}

// classCompile compiles the DeviceClasses (CEL selectors) against the nodes' GPUs
// once, when first asked for; classes and nodes are shared read-only.
type classCompile struct {
	classes []*resourcev1.DeviceClass // by name
	nodes   map[string][]devices.GPU  // nil: no node observed yet (All does not compile)

	once     sync.Once
	compiled *dra.Classes
	err      error
}

func (c *classCompile) get() (*dra.Classes, error) {
	c.once.Do(func() {
		var opts []dra.ClassOption
		if c.nodes != nil {
			opts = append(opts, dra.WithNodes(c.nodes))
		}
		c.compiled, c.err = dra.NewClasses(deviceClasses(c.classes), nil, opts...)
		if c.err != nil {
			c.err = fmt.Errorf("DeviceClasses: %w", c.err)
		}
	})
	return c.compiled, c.err
}

// deviceClasses lists the classes as API objects, by name.
func deviceClasses(classes []*resourcev1.DeviceClass) []resourcev1.DeviceClass {
	out := make([]resourcev1.DeviceClass, len(classes))
	for i, c := range classes {
		out[i] = *c
	}
	return out
}
