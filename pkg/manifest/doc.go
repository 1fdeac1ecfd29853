// Package manifest owns reading user manifests: files, folders and stdin holding
// multi-document YAML or JSON in the formats users already write (Kueue, Volcano,
// batch/v1, JobSet, Kubeflow, Ray, core v1 and Gantry's own kinds).
//
// Load decodes every document strictly (unknown fields and wrong types are errors with
// the field's path and line), converts it into the typed model of pkg/api (each job kind
// becomes an api.Workload), resolves cross references (queues, flavors, cohorts,
// priority classes) and returns all problems of all files at once as an ErrorList.
//
// This is the edge of the pipeline: after Load no stage sees YAML, untyped maps or
// unvalidated values. The package does file I/O only in Load's reading step; the
// conversion and validation helpers are pure.
package manifest
