package manifest

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"

	"github.com/gantry-sched/gantry/pkg/api"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// WorkloadOfObject converts one job object that is already decoded (a Kubernetes
// client's unstructured content, as the controller reads it from the cluster) with the
// reader Load uses for the same apiVersion and kind: the same decoding into the same
// typed structs, the same pod sets, gang minimums and run-policy settings. So a
// PyTorchJob or RayJob becomes the same gang in the simulator and on a cluster. Fields
// the typed structs do not list are ignored here, unlike in files: the API server has
// validated the object against its CRD, and a newer operator or Kubernetes release may
// add fields (a pod spec's, a RayJob's) that must not make a running cluster refuse the
// job; wrong types and values are still errors.
//
// source names where the object came from in errors ("cluster"). The result is not
// resolved against queues or priority classes (those live elsewhere on a cluster): its
// Queue, PriorityClass and MinMember are as the object states them. An object of a kind
// that is not a job (a queue, a Node, a plain Pod) is an error, as is every problem
// Load would report for the object, each naming the object and field.
func WorkloadOfObject(source string, obj map[string]any) (*api.Workload, error) {
	v, err := valueOf(obj, 0)
	if err != nil {
		return nil, &Error{Source: srcOf(source, 0), Msg: err.Error()}
	}
	d := document{file: source, v: v}
	meta := v.field("metadata")
	name := joinName(meta.str("namespace"), meta.str("name"))
	kind, apiVersion := v.str("kind"), v.str("apiVersion")
	l := newLoader()
	l.unknownOK = true
	c := l.newCtx(d, kind, name)
	h, field, msg := lookupKind(apiVersion, kind)
	if h == nil {
		c.add(field, "%s", msg)
		return nil, l.errs.sorted()
	}
	h(l, d, c)
	if len(l.errs) > 0 {
		return nil, l.errs.sorted()
	}
	if len(l.trainer.jobs) > 0 {
		c.add("spec.runtimeRef", "a TrainJob's pods are in its runtime: convert it with WorkloadOfTrainJob")
		return nil, l.errs.sorted()
	}
	if len(l.workloads) != 1 {
		c.add("kind", "%s %s is not a job kind: it describes no workload", apiVersion, kind)
		return nil, l.errs.sorted()
	}
	w := l.workloads[0].Workload
	return &w, nil
}

// WorkloadOfJob is WorkloadOfObject for a batch/v1 Job held typed (as informers of
// built-in kinds deliver it).
func WorkloadOfJob(source string, job *batchv1.Job) (*api.Workload, error) {
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(job)
	if err != nil {
		return nil, &Error{Source: srcOf(source, 0), Kind: "Job", Name: joinName(job.Namespace, job.Name), Msg: err.Error()}
	}
	// Typed objects from a client carry no TypeMeta.
	obj["apiVersion"], obj["kind"] = "batch/v1", "Job"
	return WorkloadOfObject(source, obj)
}

// valueOf builds the decoder's value tree from decoded JSON content (maps, slices,
// strings, booleans, numbers as Kubernetes' JSON decoding leaves them). Object keys are
// taken in sorted order so errors come out in a stable order; there are no lines.
func valueOf(x any, depth int) (*value, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("object nested deeper than %d levels", maxDepth)
	}
	switch t := x.(type) {
	case nil:
		return &value{kind: kindNull}, nil
	case map[string]any:
		return objectValue(t, depth)
	case []any:
		v := &value{kind: kindArray}
		for _, it := range t {
			iv, err := valueOf(it, depth+1)
			if err != nil {
				return nil, err
			}
			v.items = append(v.items, iv)
		}
		return v, nil
	case string, bool, json.Number:
		return &value{kind: kindScalar, scalar: t}, nil
	}
	n, ok := numberText(x)
	if !ok {
		return nil, fmt.Errorf("unsupported value of Go type %T", x)
	}
	return &value{kind: kindScalar, scalar: json.Number(n)}, nil
}

func objectValue(m map[string]any, depth int) (*value, error) {
	v := &value{kind: kindObject, fields: make(map[string]*value, len(m))}
	for k := range m {
		v.keys = append(v.keys, k)
	}
	sort.Strings(v.keys)
	for _, k := range v.keys {
		fv, err := valueOf(m[k], depth+1)
		if err != nil {
			return nil, err
		}
		v.fields[k] = fv
	}
	return v, nil
}

// numberText writes a number as JSON does, keeping integers exact (no float stands
// between an object and a count or quantity).
func numberText(x any) (string, bool) {
	switch n := x.(type) {
	case int64:
		return strconv.FormatInt(n, 10), true
	case int32:
		return strconv.FormatInt(int64(n), 10), true
	case int:
		return strconv.Itoa(n), true
	case float64:
		if math.IsNaN(n) || math.IsInf(n, 0) {
			return "", false
		}
		return strconv.FormatFloat(n, 'f', -1, 64), true
	}
	return "", false
}
