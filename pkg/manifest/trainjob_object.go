package manifest

import "github.com/gantry-sched/gantry/pkg/api"

// WorkloadOfTrainJob is WorkloadOfObject for a Kubeflow Trainer TrainJob, whose pods
// are in its runtime: runtime is the TrainingRuntime or ClusterTrainingRuntime that the
// TrainJob's spec.runtimeRef names, as the controller reads both from the cluster. The
// TrainJob becomes the workload Load makes of the same two objects in files.
func WorkloadOfTrainJob(source string, trainJob, runtime map[string]any) (*api.Workload, error) {
	l := newLoader()
	l.unknownOK = true
	for _, obj := range []map[string]any{runtime, trainJob} {
		v, err := valueOf(obj, 0)
		if err != nil {
			return nil, &Error{Source: srcOf(source, 0), Msg: err.Error()}
		}
		d := document{file: source, v: v}
		meta := v.field("metadata")
		kind, apiVersion := v.str("kind"), v.str("apiVersion")
		c := l.newCtx(d, kind, joinName(meta.str("namespace"), meta.str("name")))
		h, field, msg := lookupKind(apiVersion, kind)
		if h == nil {
			c.add(field, "%s", msg)
			continue
		}
		h(l, d, c)
	}
	if len(l.trainer.jobs) != 1 && len(l.errs) == 0 {
		return nil, &Error{Source: srcOf(source, 0), Msg: "WorkloadOfTrainJob needs a TrainJob and its runtime"}
	}
	l.resolveTrainJobs()
	if len(l.errs) > 0 {
		return nil, l.errs.sorted()
	}
	w := l.workloads[0].Workload
	return &w, nil
}
