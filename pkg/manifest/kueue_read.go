package manifest

import (
	"bytes"
	"reflect"

	"k8s.io/apimachinery/pkg/runtime"
)

// kueue is the handler of every Kueue queue kind (kinds.go).
func (l *loader) kueue(d document, c errs) { l.kueueObject(d, c) }

// kueueObject reads a document of a Kueue queue kind (c.kind) under its apiVersion's
// field names, converts and registers it, and returns the decoded gantry.dev/v1alpha1
// object (nil when it could not be decoded).
func (l *loader) kueueObject(d document, c errs) runtime.Object {
	switch c.kind {
	case "ResourceFlavor":
		return readKueue(l, d, c, docless((*loader).addResourceFlavor))
	case "ClusterQueue":
		return readKueue(l, d, c, (*loader).addClusterQueueFrom)
	case "LocalQueue":
		return readKueue(l, d, c, docless((*loader).addLocalQueue))
	case "Cohort":
		return readKueue(l, d, c, docless((*loader).addCohort))
	case "WorkloadPriorityClass":
		return readKueue(l, d, c, docless((*loader).addWorkloadPriorityClass))
	case "Topology":
		return readKueue(l, d, c, docless((*loader).addTopology))
	}
	c.add("kind", "%s is not a Kueue queue kind", c.kind)
	return nil
}

// readKueue is the one decode path of the Kueue kinds: map the version's field names,
// decode strictly into the wire type T, convert with add.
func readKueue[T any, PT interface {
	*T
	runtime.Object
}](l *loader, d document, c errs, add func(*loader, PT, kueueDoc, errs)) runtime.Object {
	v, x := mapKueueFields(d.v, d.v.str("apiVersion"), c.kind, reflect.TypeFor[T](), c)
	obj := PT(new(T))
	if !decode(document{file: d.file, line: d.line, v: v}, obj, false, c) {
		return nil
	}
	add(l, obj, x, c)
	return obj
}

// ReadKueueObject reads one document of a Kueue queue kind (ResourceFlavor,
// ClusterQueue, LocalQueue, Cohort, WorkloadPriorityClass, Topology) under any apiVersion
// Load reads it, exactly as Load does: the version's field names, strict decoding and
// the checks of one object on its own (references to other objects are not resolved).
// It returns the object as its gantry.dev/v1alpha1 type, whose TypeMeta still holds the
// apiVersion read. firstLine is the document's first line in file, for errors; problems
// come back as an ErrorList. `gantry convert` uses it so that it maps every version the
// way the loader does.
func ReadKueueObject(file string, firstLine int, doc []byte) (runtime.Object, error) {
	l := newLoader()
	// Blank lines in front put every node, and any syntax error, at its line in file.
	padded := append(bytes.Repeat([]byte("\n"), max(firstLine-1, 0)), doc...)
	docs, perr := parseDocuments(file, padded)
	if perr != nil {
		l.errs = append(l.errs, perr)
	} else if len(docs) != 1 {
		l.errs = append(l.errs, &Error{Source: srcOf(file, firstLine), Msg: "expected one Kueue object in this document"})
	}
	if len(l.errs) > 0 {
		return nil, l.errs.sorted()
	}
	d := docs[0]
	meta := d.v.field("metadata")
	c := l.newCtx(d, d.v.str("kind"), joinName(meta.str("namespace"), meta.str("name")))
	var obj runtime.Object
	if h, field, msg := lookupKind(d.v.str("apiVersion"), c.kind); h == nil {
		c.add(field, "%s", msg)
	} else {
		obj = l.kueueObject(d, c)
	}
	if len(l.errs) > 0 {
		return nil, l.errs.sorted()
	}
	return obj, nil
}

// docless adapts the conversion of a kind whose fields are spelled alike in every
// version, which needs nothing from the version mapping.
func docless[PT any](add func(*loader, PT, errs)) func(*loader, PT, kueueDoc, errs) {
	return func(l *loader, o PT, _ kueueDoc, c errs) { add(l, o, c) }
}
