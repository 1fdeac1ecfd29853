package manifest

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The job kinds of JobSet, Kubeflow and Ray are decoded into these small local structs
// instead of pulling in their modules. Every field those CRDs define is listed, so strict
// decoding still rejects typos; the fields Gantry does not use are typed `any` and
// ignored.

// jobSetWire is jobset.x-k8s.io/v1alpha2 JobSet.
type jobSetWire struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              jobSetSpec `json:"spec"`
}

type jobSetSpec struct {
	ReplicatedJobs          []replicatedJob `json:"replicatedJobs"`
	Network                 any             `json:"network,omitempty"`
	SuccessPolicy           any             `json:"successPolicy,omitempty"`
	FailurePolicy           any             `json:"failurePolicy,omitempty"`
	StartupPolicy           any             `json:"startupPolicy,omitempty"`
	Suspend                 *bool           `json:"suspend,omitempty"`
	Coordinator             any             `json:"coordinator,omitempty"`
	ManagedBy               *string         `json:"managedBy,omitempty"`
	TTLSecondsAfterFinished *int32          `json:"ttlSecondsAfterFinished,omitempty"`
}

type replicatedJob struct {
	Name      string                  `json:"name"`
	GroupName string                  `json:"groupName,omitempty"`
	Replicas  *int32                  `json:"replicas,omitempty"`
	Template  batchv1.JobTemplateSpec `json:"template"`
	DependsOn any                     `json:"dependsOn,omitempty"`
}

// replicaSpec is Kubeflow's common ReplicaSpec.
type replicaSpec struct {
	Replicas      *int32                 `json:"replicas,omitempty"`
	Template      corev1.PodTemplateSpec `json:"template"`
	RestartPolicy string                 `json:"restartPolicy,omitempty"`
}

// runPolicy is Kubeflow's RunPolicy; SchedulingPolicy is the gang part Gantry reads.
type runPolicy struct {
	CleanPodPolicy          *string           `json:"cleanPodPolicy,omitempty"`
	TTLSecondsAfterFinished *int32            `json:"ttlSecondsAfterFinished,omitempty"`
	ActiveDeadlineSeconds   *int64            `json:"activeDeadlineSeconds,omitempty"`
	BackoffLimit            *int32            `json:"backoffLimit,omitempty"`
	SchedulingPolicy        *schedulingPolicy `json:"schedulingPolicy,omitempty"`
	Suspend                 *bool             `json:"suspend,omitempty"`
	ManagedBy               *string           `json:"managedBy,omitempty"`
}

type schedulingPolicy struct {
	MinAvailable           *int32              `json:"minAvailable,omitempty"`
	Queue                  string              `json:"queue,omitempty"`
	MinResources           corev1.ResourceList `json:"minResources,omitempty"`
	PriorityClass          string              `json:"priorityClass,omitempty"`
	ScheduleTimeoutSeconds *int32              `json:"scheduleTimeoutSeconds,omitempty"`
}

// pyTorchJobWire is kubeflow.org/v1 PyTorchJob.
type pyTorchJobWire struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		RunPolicy           runPolicy              `json:"runPolicy,omitempty"`
		ElasticPolicy       any                    `json:"elasticPolicy,omitempty"`
		PyTorchReplicaSpecs map[string]replicaSpec `json:"pytorchReplicaSpecs"`
		NprocPerNode        any                    `json:"nprocPerNode,omitempty"`
	} `json:"spec"`
}

// mpiJobWire is kubeflow.org/v2beta1 MPIJob.
type mpiJobWire struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		SlotsPerWorker         *int32                 `json:"slotsPerWorker,omitempty"`
		RunLauncherAsWorker    *bool                  `json:"runLauncherAsWorker,omitempty"`
		RunPolicy              runPolicy              `json:"runPolicy,omitempty"`
		MPIReplicaSpecs        map[string]replicaSpec `json:"mpiReplicaSpecs"`
		SSHAuthMountPath       string                 `json:"sshAuthMountPath,omitempty"`
		LauncherCreationPolicy string                 `json:"launcherCreationPolicy,omitempty"`
		MPIImplementation      string                 `json:"mpiImplementation,omitempty"`
	} `json:"spec"`
}

// rayClusterSpec is ray.io/v1 RayClusterSpec.
type rayClusterSpec struct {
	RayVersion               string            `json:"rayVersion,omitempty"`
	EnableInTreeAutoscaling  *bool             `json:"enableInTreeAutoscaling,omitempty"`
	AutoscalerOptions        any               `json:"autoscalerOptions,omitempty"`
	HeadServiceAnnotations   map[string]string `json:"headServiceAnnotations,omitempty"`
	HeadGroupSpec            headGroupSpec     `json:"headGroupSpec"`
	WorkerGroupSpecs         []workerGroupSpec `json:"workerGroupSpecs,omitempty"`
	Suspend                  *bool             `json:"suspend,omitempty"`
	ManagedBy                *string           `json:"managedBy,omitempty"`
	GcsFaultToleranceOptions any               `json:"gcsFaultToleranceOptions,omitempty"`
}

type headGroupSpec struct {
	ServiceType    string                 `json:"serviceType,omitempty"`
	HeadService    any                    `json:"headService,omitempty"`
	EnableIngress  *bool                  `json:"enableIngress,omitempty"`
	RayStartParams map[string]string      `json:"rayStartParams,omitempty"`
	Template       corev1.PodTemplateSpec `json:"template"`
	// Resources and Labels are Ray's logical resources and node labels (KubeRay v1.5),
	// passed to `ray start`; the pods' requests are in the template.
	Resources map[string]string `json:"resources,omitempty"`
	Labels    map[string]string `json:"labels,omitempty"`
}

type workerGroupSpec struct {
	GroupName          string                 `json:"groupName"`
	Replicas           *int32                 `json:"replicas,omitempty"`
	MinReplicas        *int32                 `json:"minReplicas,omitempty"`
	MaxReplicas        *int32                 `json:"maxReplicas,omitempty"`
	NumOfHosts         int32                  `json:"numOfHosts,omitempty"`
	IdleTimeoutSeconds *int32                 `json:"idleTimeoutSeconds,omitempty"`
	RayStartParams     map[string]string      `json:"rayStartParams,omitempty"`
	Template           corev1.PodTemplateSpec `json:"template"`
	ScaleStrategy      any                    `json:"scaleStrategy,omitempty"`
	Suspend            *bool                  `json:"suspend,omitempty"`
	Resources          map[string]string      `json:"resources,omitempty"`
	Labels             map[string]string      `json:"labels,omitempty"`
}

// rayClusterWire is ray.io/v1 RayCluster.
type rayClusterWire struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              rayClusterSpec `json:"spec"`
}

// rayJobWire is ray.io/v1 RayJob.
type rayJobWire struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		Entrypoint               string                  `json:"entrypoint,omitempty"`
		Metadata                 map[string]string       `json:"metadata,omitempty"`
		RuntimeEnvYAML           string                  `json:"runtimeEnvYAML,omitempty"`
		JobID                    string                  `json:"jobId,omitempty"`
		ShutdownAfterJobFinishes bool                    `json:"shutdownAfterJobFinishes,omitempty"`
		TTLSecondsAfterFinished  int32                   `json:"ttlSecondsAfterFinished,omitempty"`
		ActiveDeadlineSeconds    *int32                  `json:"activeDeadlineSeconds,omitempty"`
		RayClusterSpec           *rayClusterSpec         `json:"rayClusterSpec,omitempty"`
		ClusterSelector          map[string]string       `json:"clusterSelector,omitempty"`
		SubmitterPodTemplate     *corev1.PodTemplateSpec `json:"submitterPodTemplate,omitempty"`
		SubmitterConfig          any                     `json:"submitterConfig,omitempty"`
		EntrypointNumCpus        any                     `json:"entrypointNumCpus,omitempty"`
		EntrypointNumGpus        any                     `json:"entrypointNumGpus,omitempty"`
		EntrypointResources      string                  `json:"entrypointResources,omitempty"`
		Suspend                  bool                    `json:"suspend,omitempty"`
		SubmissionMode           string                  `json:"submissionMode,omitempty"`
		ManagedBy                *string                 `json:"managedBy,omitempty"`
		BackoffLimit             *int32                  `json:"backoffLimit,omitempty"`
		DeletionStrategy         any                     `json:"deletionStrategy,omitempty"`
	} `json:"spec"`
}

// volcanoQueueWire is scheduling.volcano.sh/v1beta1 Queue.
type volcanoQueueWire struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		Weight         int32               `json:"weight,omitempty"`
		Capability     corev1.ResourceList `json:"capability,omitempty"`
		Reclaimable    *bool               `json:"reclaimable,omitempty"`
		ExtendClusters any                 `json:"extendClusters,omitempty"`
		Guarantee      struct {
			Resource corev1.ResourceList `json:"resource,omitempty"`
		} `json:"guarantee,omitempty"`
		Deserved corev1.ResourceList `json:"deserved,omitempty"`
		Parent   string              `json:"parent,omitempty"`
		Affinity any                 `json:"affinity,omitempty"`
		Type     string              `json:"type,omitempty"`
	} `json:"spec"`
}

// The training-operator v1 kinds beside PyTorchJob (kubeflow.org/v1, training-operator
// v1.9 pkg/apis/kubeflow.org/v1): each spec is a RunPolicy and a map of replica specs
// under its own field name, plus a few fields of its own that Gantry does not use.

// tfJobWire is kubeflow.org/v1 TFJob.
type tfJobWire struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		RunPolicy           runPolicy              `json:"runPolicy,omitempty"`
		SuccessPolicy       *string                `json:"successPolicy,omitempty"`
		TFReplicaSpecs      map[string]replicaSpec `json:"tfReplicaSpecs"`
		EnableDynamicWorker bool                   `json:"enableDynamicWorker,omitempty"`
	} `json:"spec"`
}

// xgboostJobWire is kubeflow.org/v1 XGBoostJob.
type xgboostJobWire struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		RunPolicy       runPolicy              `json:"runPolicy,omitempty"`
		XGBReplicaSpecs map[string]replicaSpec `json:"xgbReplicaSpecs"`
	} `json:"spec"`
}

// paddleJobWire is kubeflow.org/v1 PaddleJob.
type paddleJobWire struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		RunPolicy          runPolicy              `json:"runPolicy,omitempty"`
		ElasticPolicy      any                    `json:"elasticPolicy,omitempty"`
		PaddleReplicaSpecs map[string]replicaSpec `json:"paddleReplicaSpecs"`
	} `json:"spec"`
}

// jaxJobWire is kubeflow.org/v1 JAXJob.
type jaxJobWire struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		RunPolicy       runPolicy              `json:"runPolicy,omitempty"`
		JAXReplicaSpecs map[string]replicaSpec `json:"jaxReplicaSpecs"`
	} `json:"spec"`
}

// mpiJobV1Wire is kubeflow.org/v1 MPIJob (training-operator v1.8 pkg/apis/kubeflow.org/v1).
type mpiJobV1Wire struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		SlotsPerWorker  *int32                 `json:"slotsPerWorker,omitempty"`
		CleanPodPolicy  *string                `json:"cleanPodPolicy,omitempty"`
		MPIReplicaSpecs map[string]replicaSpec `json:"mpiReplicaSpecs"`
		MainContainer   string                 `json:"mainContainer,omitempty"`
		RunPolicy       runPolicy              `json:"runPolicy,omitempty"`
	} `json:"spec"`
}
