package manifest

import (
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// kubeflowV1 is one training-operator v1 kind with the PyTorchJob shape: the field that
// holds its replica specs and the replica types it allows, in the order Kueue lists its
// pod sets (kueue pkg/controller/jobs/kubeflow/jobs/*: OrderedReplicaTypes).
type kubeflowV1 struct {
	kind, field string
	roles       []string
}

// The replica types each kind allows (training-operator v1.9 pkg/apis/kubeflow.org/v1
// and its validating webhooks). Functions, not package variables, so nothing can change
// them.
func tfJobKind() kubeflowV1 {
	return kubeflowV1{"TFJob", "tfReplicaSpecs", []string{"Chief", "Master", "PS", "Worker", "Evaluator"}}
}
func xgboostJobKind() kubeflowV1 {
	return kubeflowV1{"XGBoostJob", "xgbReplicaSpecs", []string{"Master", "Worker"}}
}
func paddleJobKind() kubeflowV1 {
	return kubeflowV1{"PaddleJob", "paddleReplicaSpecs", []string{"Master", "Worker"}}
}
func jaxJobKind() kubeflowV1 { return kubeflowV1{"JAXJob", "jaxReplicaSpecs", []string{"Worker"}} }

// kubeflowJob converts any of them as pyTorchJob does: one pod set per replica type
// (named by the lower-cased type, as the operator's replica-type pod label is), the gang
// from runPolicy.schedulingPolicy.minAvailable, its queue and priority class.
func (l *loader) kubeflowJob(k kubeflowV1, m metav1.ObjectMeta, specs map[string]replicaSpec, rp runPolicy, c errs) {
	w := l.newWorkload(m, "kubeflow.org/v1", k.kind, c)
	w.PodSets = kubeflowSets(specs, k.roles, "spec."+k.field, c)
	applyRunPolicy(&w.Workload, rp, &w.ext)
	l.addWorkload(w, firstTemplateAnnotations(specs, k.roles...), c)
}

func (l *loader) tfJob(d document, c errs) {
	var in tfJobWire
	if !decode(d, &in, false, c) {
		return
	}
	// The operator runs at most one coordinator: Chief, or Master (its older name).
	_, chief := in.Spec.TFReplicaSpecs["Chief"]
	_, master := in.Spec.TFReplicaSpecs["Master"]
	if chief && master {
		c.add("spec.tfReplicaSpecs", "a TFJob has at most one Chief or Master, not both")
	}
	l.kubeflowJob(tfJobKind(), in.ObjectMeta, in.Spec.TFReplicaSpecs, in.Spec.RunPolicy, c)
}

func (l *loader) xgboostJob(d document, c errs) {
	var in xgboostJobWire
	if !decode(d, &in, false, c) {
		return
	}
	// The operator's webhook requires exactly one Master (the XGBoost tracker).
	path := "spec.xgbReplicaSpecs.Master"
	if rs, ok := in.Spec.XGBReplicaSpecs["Master"]; !ok {
		c.add(path, "missing: an XGBoostJob needs a Master replica")
	} else if rs.Replicas == nil || *rs.Replicas != 1 {
		c.add(path+".replicas", "%s: the Master of an XGBoostJob must have replicas: 1", replicasText(rs.Replicas))
	}
	l.kubeflowJob(xgboostJobKind(), in.ObjectMeta, in.Spec.XGBReplicaSpecs, in.Spec.RunPolicy, c)
}

func (l *loader) paddleJob(d document, c errs) {
	var in paddleJobWire
	if !decode(d, &in, false, c) {
		return
	}
	l.kubeflowJob(paddleJobKind(), in.ObjectMeta, in.Spec.PaddleReplicaSpecs, in.Spec.RunPolicy, c)
}

func (l *loader) jaxJob(d document, c errs) {
	var in jaxJobWire
	if !decode(d, &in, false, c) {
		return
	}
	l.kubeflowJob(jaxJobKind(), in.ObjectMeta, in.Spec.JAXReplicaSpecs, in.Spec.RunPolicy, c)
}

// replicasText shows an optional replica count in an error.
func replicasText(n *int32) string {
	if n == nil {
		return "replicas not set"
	}
	return "replicas " + strconv.Itoa(int(*n))
}

// mpiJobV1Kind is training-operator v1's MPIJob (kubeflow.org/v1, served by the
// training-operator up to v1.8; the MPI operator's own is v2beta1).
func mpiJobV1Kind() kubeflowV1 {
	return kubeflowV1{"MPIJob", "mpiReplicaSpecs", []string{"Launcher", "Worker"}}
}

func (l *loader) mpiJobV1(d document, c errs) {
	var in mpiJobV1Wire
	if !decode(d, &in, false, c) {
		return
	}
	l.kubeflowJob(mpiJobV1Kind(), in.ObjectMeta, in.Spec.MPIReplicaSpecs, in.Spec.RunPolicy, c)
}
