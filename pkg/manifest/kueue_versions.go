package manifest

import (
	"reflect"
	"sort"
	"strings"
)

// The Kueue queue kinds are read under several apiVersions and decoded into the types of
// gantry.dev/v1alpha1, whose fields carry Kueue v1beta1's names. One reader per kind
// serves every version: before decoding, kueueFields says which fields a version names
// differently (renamed to the wire type's name), which fields belong to another version
// (errors that say what this version calls them) and which fields the wire type has no
// room for (read beside it, see kueueDoc.aside).

// The apiVersions the Kueue queue kinds are read under.
const (
	kueueV1alpha1  = "kueue.x-k8s.io/v1alpha1"
	kueueV1beta1   = "kueue.x-k8s.io/v1beta1"
	kueueV1beta2   = "kueue.x-k8s.io/v1beta2"
	gantryV1alpha1 = "gantry.dev/v1alpha1"
)

// Field ids of kueueFields, for kueueDoc.path and kueueDoc.aside.
const (
	fieldCohort          = "cohort"
	fieldAdmissionChecks = "admissionChecks"
	fieldPreference      = "preference"
	fieldConcurrent      = "concurrentAdmissionPolicy"
	fieldParent          = "parent"
	fieldParentName      = "parentName"
)

// kueueField is one field of a Kueue queue kind whose name, or whose existence, depends
// on the apiVersion.
type kueueField struct {
	id     string
	kind   string
	parent string // path of the object holding the field
	// names maps an apiVersion to the field's name there; a version not listed has no
	// such field.
	names map[string]string
	// wire is the field's name in the gantry.dev/v1alpha1 type; "" when that type has no
	// room for it and the loader reads it beside the type.
	wire string
	// instead is what to write under a version without the field, when anything.
	instead string
}

// kueueFields lists every field of the queue kinds that differs between Kueue v1alpha1,
// v1beta1, v1beta2 and gantry.dev/v1alpha1. ResourceFlavor, LocalQueue,
// WorkloadPriorityClass and Topology specs are the same in all of them (v1beta2 changed
// only their status, which is not read).
func kueueFields() []kueueField {
	return []kueueField{
		// v1beta2 renamed the ClusterQueue's cohort.
		{id: fieldCohort, kind: "ClusterQueue", parent: "spec", wire: "cohort",
			names: map[string]string{kueueV1beta1: "cohort", gantryV1alpha1: "cohort", kueueV1beta2: "cohortName"}},
		// v1beta2 removed the plain list; each check is a rule of admissionChecksStrategy.
		{id: fieldAdmissionChecks, kind: "ClusterQueue", parent: "spec", wire: "admissionChecks",
			names:   map[string]string{kueueV1beta1: "admissionChecks", gantryV1alpha1: "admissionChecks"},
			instead: "spec.admissionChecksStrategy.admissionChecks (a list of {name, onFlavors})"},
		// Kueue v0.16 added preference to v1beta1 and v1beta2; Gantry's own CRD has no
		// such field.
		{id: fieldPreference, kind: "ClusterQueue", parent: "spec.flavorFungibility",
			names: map[string]string{kueueV1beta1: "preference", kueueV1beta2: "preference"}},
		{id: fieldConcurrent, kind: "ClusterQueue", parent: "spec",
			names: map[string]string{kueueV1beta2: "concurrentAdmissionPolicy"}},
		// Kueue v1alpha1's Cohort said parent; v1beta1 renamed it parentName. Gantry's
		// own type accepts both.
		{id: fieldParent, kind: "Cohort", parent: "spec", wire: "parent",
			names:   map[string]string{kueueV1alpha1: "parent", gantryV1alpha1: "parent"},
			instead: "spec.parentName"},
		{id: fieldParentName, kind: "Cohort", parent: "spec", wire: "parentName",
			names:   map[string]string{kueueV1beta1: "parentName", kueueV1beta2: "parentName", gantryV1alpha1: "parentName"},
			instead: "spec.parent"},
	}
}

// kueueDoc is what the version mapping learnt of one document: its apiVersion and the
// fields read beside the wire type, by field id.
type kueueDoc struct {
	apiVersion string
	aside      map[string]asideField
}

// asideField is a field the wire type has no room for, with the path the user wrote.
type asideField struct {
	path string
	v    *value
}

// gantryDoc is the kueueDoc of typed gantry.dev/v1alpha1 objects (LoadTyped).
func gantryDoc() kueueDoc { return kueueDoc{apiVersion: gantryV1alpha1} }

// legacyStopWords reports whether the version accepts Kueue v1beta1's Borrow and
// Preempt as spellings of MayStopSearch (v1beta2 removed them).
func (k kueueDoc) legacyStopWords() bool { return k.apiVersion != kueueV1beta2 }

// path is the path of field id as this document's version spells it, for messages.
func (k kueueDoc) path(id string) string {
	for _, f := range kueueFields() {
		if f.id != id {
			continue
		}
		if n, ok := f.names[k.apiVersion]; ok {
			return joinKey(f.parent, n)
		}
		return joinKey(f.parent, f.wire)
	}
	return id
}

// mapKueueFields applies kueueFields to the document v of kind under apiVersion, for
// decoding into wire (the gantry.dev/v1alpha1 type): another version's field names are
// reported and dropped, this version's names are renamed to the wire names, and fields
// the wire type lacks are taken out into kueueDoc.aside. v itself is not changed.
func mapKueueFields(v *value, apiVersion, kind string, wire reflect.Type, c errs) (*value, kueueDoc) {
	doc := kueueDoc{apiVersion: apiVersion, aside: map[string]asideField{}}
	for _, f := range kueueFields() {
		if f.kind != kind {
			continue
		}
		mine, has := f.names[apiVersion]
		for _, other := range f.otherNames(apiVersion) {
			if node := v.at(f.parent).field(other); node != nil {
				c.addAt(node.line, joinKey(f.parent, other), "%s", f.wrongVersion(other, apiVersion))
				v = editObject(v, f.parent, func(o *value) { o.remove(other) })
			}
		}
		node := v.at(f.parent).field(mine)
		if !has || node == nil {
			continue
		}
		path := joinKey(f.parent, mine)
		switch {
		case f.wire == "":
			doc.aside[f.id] = asideField{path: path, v: node}
			v = editObject(v, f.parent, func(o *value) { o.remove(mine) })
		case f.wire != mine:
			// Checked here, where the path is the user's: after the rename the strict
			// decoder would name the wire field instead.
			if !checkStrict(node, wireField(wire, f.parent, f.wire), path, c) {
				v = editObject(v, f.parent, func(o *value) { o.remove(mine) })
				continue
			}
			v = editObject(v, f.parent, func(o *value) { o.rename(mine, f.wire) })
		}
	}
	return v, doc
}

// otherNames are the names other versions give the field that apiVersion does not
// use, sorted.
func (f kueueField) otherNames(apiVersion string) []string {
	mine := f.names[apiVersion]
	seen := map[string]bool{}
	var out []string
	for _, n := range f.names {
		if n != mine && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// wrongVersion says why name is not read under apiVersion and what to write instead.
func (f kueueField) wrongVersion(name, apiVersion string) string {
	var versions []string
	for v, n := range f.names {
		if n == name {
			versions = append(versions, v)
		}
	}
	sort.Strings(versions)
	msg := "not a field of " + apiVersion + " " + f.kind + ": " + quote(name) + " is the name in " + strings.Join(versions, " and ")
	if mine, ok := f.names[apiVersion]; ok {
		return msg + "; write " + joinKey(f.parent, mine)
	}
	if f.instead != "" {
		return msg + "; write " + f.instead
	}
	return msg
}

func quote(s string) string { return `"` + s + `"` }

// wireField is the Go type of field name of the object at path parent of struct t.
func wireField(t reflect.Type, parent, name string) reflect.Type {
	for _, seg := range strings.Split(parent, ".") {
		if seg == "" {
			continue
		}
		t = derefType(jsonFields(t)[seg])
	}
	return jsonFields(t)[name]
}

func derefType(t reflect.Type) reflect.Type {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// at returns the node at a dotted path of object keys ("" is v), or nil.
func (v *value) at(path string) *value {
	for _, seg := range strings.Split(path, ".") {
		if seg != "" {
			v = v.field(seg)
		}
	}
	return v
}

// editObject returns a copy of v in which the object at path parent is a copy changed by
// edit; the nodes along the path are copied, so v and its other holders see no change.
// The object at parent must exist.
func editObject(v *value, parent string, edit func(*value)) *value {
	cp := *v
	cp.keys = append([]string(nil), v.keys...)
	cp.fields = make(map[string]*value, len(v.fields))
	for k, f := range v.fields {
		cp.fields[k] = f
	}
	head, rest, _ := strings.Cut(parent, ".")
	if head == "" {
		edit(&cp)
		return &cp
	}
	cp.fields[head] = editObject(v.fields[head], rest, edit)
	return &cp
}

// remove deletes key k of an object node.
func (v *value) remove(k string) {
	delete(v.fields, k)
	for i, key := range v.keys {
		if key == k {
			v.keys = append(v.keys[:i:i], v.keys[i+1:]...)
			return
		}
	}
}

// rename moves key from to key to in an object node, keeping its place.
func (v *value) rename(from, to string) {
	v.fields[to] = v.fields[from]
	delete(v.fields, from)
	for i, key := range v.keys {
		if key == from {
			v.keys[i] = to
		}
	}
}
