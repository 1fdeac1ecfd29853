package manifest

import (
	"encoding/json"
	"errors"

	"github.com/gantry-sched/gantry/pkg/api"
	"k8s.io/apimachinery/pkg/runtime"
)

// KueueObjectFromCluster converts one Kueue queue object as the API server serves it
// (an unstructured object's content: apiVersion, kind, metadata, spec and status) into
// its gantry.dev/v1alpha1 type, through ReadKueueObject, so an object on a cluster is
// read by the very reader the loader uses for its apiVersion: the same field names,
// strict decoding and checks of one object on its own. Only what a manifest would hold
// is read: status (Kueue's controller writes it, under each version's own names) and
// the server-managed metadata (managedFields, timestamps) are left out. Problems come
// back as an ErrorList whose errors name source, object and field, without a line (an
// object on a cluster has none).
func KueueObjectFromCluster(source string, obj map[string]any) (runtime.Object, error) {
	data, err := json.Marshal(manifestOf(obj))
	if err != nil {
		return nil, &Error{Source: api.Source{File: source}, Msg: "encode: " + err.Error()}
	}
	// JSON is YAML: the document is read as a file would be.
	out, err := ReadKueueObject(source, 1, data)
	var list ErrorList
	if errors.As(err, &list) {
		for _, e := range list {
			e.Source.Line = 0
		}
	}
	return out, err
}

// serverMetadata are the metadata fields the API server keeps; a manifest's author
// writes the others. resourceVersion, uid and generation stay: a caller compares
// versions of an object with them.
func serverMetadata() []string {
	return []string{"managedFields", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "selfLink"}
}

// manifestOf is a shallow copy of obj without status and server-kept metadata.
func manifestOf(obj map[string]any) map[string]any {
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		if k != "status" {
			out[k] = v
		}
	}
	if meta, ok := obj["metadata"].(map[string]any); ok {
		m := make(map[string]any, len(meta))
		for k, v := range meta {
			m[k] = v
		}
		for _, k := range serverMetadata() {
			delete(m, k)
		}
		out["metadata"] = m
	}
	return out
}
