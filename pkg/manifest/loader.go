package manifest

import (
	"encoding/json"
	"reflect"
	"strings"

	"github.com/gantry-sched/gantry/pkg/api"
)

// loader accumulates the objects and errors of one Load call. It is created per call;
// nothing is shared between calls.
type loader struct {
	errs ErrorList
	// unknownOK ignores fields the wire types do not list (objects read from a cluster,
	// see WorkloadOfObject); files are read strictly.
	unknownOK bool
	objs      api.Objects
	// seen maps "kind/namespace/name" to the first object's source, for duplicates.
	seen map[string]api.Source
	// ctx keeps each converted object's error context (with field lines) so that
	// reference errors found after all files are read point at the right line.
	ctx map[string]errs
	// Inputs that need every file read before they can be resolved.
	workloads     []*workloadInput
	pods          []podInput
	podGroups     map[string]*podGroupInput // "namespace/name"
	volcanoQueues []volcanoQueue
	volcano       volcanoInputs // HyperNodes and networkTopology tiers (hypernode.go)
	trainer       trainerInputs // Kubeflow Trainer runtimes and TrainJobs (trainruntime.go)
	// nodeNames holds the names of the nodes the NodePools expand to.
	nodeNames map[string]bool
}

func newLoader() *loader {
	return &loader{seen: map[string]api.Source{}, ctx: map[string]errs{}, podGroups: map[string]*podGroupInput{}, nodeNames: map[string]bool{}}
}

// document decodes one document (or each item of a v1 List) and converts it.
func (l *loader) document(d document) {
	name := d.v.field("metadata").str("name")
	if ns := d.v.field("metadata").str("namespace"); ns != "" {
		name = ns + "/" + name
	}
	kind, apiVersion := d.v.str("kind"), d.v.str("apiVersion")
	c := l.newCtx(d, kind, name)
	if d.v.kind != kindObject {
		c.add("", "expected an object with apiVersion and kind, got %s", d.v.describe())
		return
	}
	if apiVersion == "" {
		c.add("apiVersion", "missing: every object needs apiVersion and kind")
		return
	}
	if kind == "" {
		c.add("kind", "missing: every object needs apiVersion and kind")
		return
	}
	if apiVersion == "v1" && kind == "List" {
		l.list(d, c)
		return
	}
	if l.skipNonScheduling(d, apiVersion, kind, name) {
		return
	}
	h, field, msg := lookupKind(apiVersion, kind)
	if h == nil {
		c.add(field, "%s", msg)
		return
	}
	h(l, d, c)
}

// list handles `kind: List` (what `kubectl get ... -o yaml` prints): each item is
// loaded as its own document at its own line.
func (l *loader) list(d document, c errs) {
	for k := range d.v.fields {
		if k != "apiVersion" && k != "kind" && k != "items" && k != "metadata" {
			c.add(k, "unknown field %q", k)
		}
	}
	items := d.v.field("items")
	if items == nil || items.kind == kindNull {
		return
	}
	if items.kind != kindArray {
		c.add("items", "wrong type: expected a list, got %s", items.describe())
		return
	}
	for _, it := range items.items {
		l.document(document{file: d.file, line: it.line, v: it})
	}
}

// newCtx builds the error context of one document, with the line of every field.
func (l *loader) newCtx(d document, kind, name string) errs {
	lines := map[string]int{}
	d.v.lineMap("", lines)
	return errs{list: &l.errs, src: srcOf(d.file, d.line), kind: kind, name: name, lines: lines, unknownOK: l.unknownOK}
}

// decode strictly decodes the document into out (a pointer to a wire type). Unless
// keepStatus is set, a top-level status is dropped: it is observed state, which users
// who load `kubectl get -o yaml` output carry along, and never input.
func decode(d document, out any, keepStatus bool, c errs) bool {
	v := d.v
	if !keepStatus && v.field("status") != nil {
		cp := *v
		cp.fields = map[string]*value{}
		cp.keys = nil
		for _, k := range v.keys {
			if k != "status" {
				cp.keys = append(cp.keys, k)
				cp.fields[k] = v.fields[k]
			}
		}
		v = &cp
	}
	if !checkStrict(v, reflect.TypeOf(out).Elem(), "", c) {
		return false
	}
	raw, err := json.Marshal(v.toJSON())
	if err == nil {
		err = json.Unmarshal(raw, out)
	}
	if err != nil {
		c.add("", "cannot decode: %s", cleanJSONError(err))
		return false
	}
	return true
}

// register records an object's identity, reporting a duplicate of the same kind (kinds
// of one schema share a name space: kueue and gantry ClusterQueues are one kind).
func (l *loader) register(kind string, m api.Meta, c errs) bool {
	if m.Name == "" {
		c.add("metadata.name", "missing: every object needs a name")
		return false
	}
	key := kind + "/" + m.Key()
	if first, dup := l.seen[key]; dup {
		c.add("metadata.name", "duplicate %s %q: already defined at %s", kind, m.Key(), first)
		return false
	}
	l.seen[key] = m.Source
	l.ctx[key] = c
	return true
}

// context returns the error context of a registered object.
func (l *loader) context(kind, key string) errs {
	if c, ok := l.ctx[kind+"/"+key]; ok {
		return c
	}
	return errs{list: &l.errs, kind: kind, name: key}
}

// joinName shows "namespace/name" or "name".
func joinName(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}

// splitGroup returns the API group of an apiVersion ("batch/v1" -> "batch", "v1" -> "").
func splitGroup(apiVersion string) string {
	g, _, found := strings.Cut(apiVersion, "/")
	if !found {
		return ""
	}
	return g
}
