package api

import (
	"fmt"
	"time"
)

// Source is where an object was read from, for error messages.
type Source struct {
	File string // path as given by the user, or "<stdin>"
	Line int    // 1-based line of the document's first line; 0 when unknown
}

func (s Source) String() string {
	if s.File == "" {
		return "<generated>"
	}
	if s.Line == 0 {
		return s.File
	}
	return fmt.Sprintf("%s:%d", s.File, s.Line)
}

// Meta is the identity and metadata every object carries.
type Meta struct {
	Name        string
	Namespace   string // empty for cluster-scoped objects
	Labels      map[string]string
	Annotations map[string]string
	// Created orders workloads of equal priority (FIFO). The loader sets it from
	// metadata.creationTimestamp when present, else from the submit time.
	Created time.Time
	Source  Source
}

// Key is "namespace/name" for namespaced objects and "name" otherwise.
func (m Meta) Key() string {
	if m.Namespace == "" {
		return m.Name
	}
	return m.Namespace + "/" + m.Name
}

// WorkloadID identifies a workload as "namespace/name".
type WorkloadID string
