package manifest

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// vcJobWire is Volcano's batch.volcano.sh/v1alpha1 Job (vcjob), decoded into local
// structs instead of pulling in Volcano's module. Every field of Volcano's JobSpec and
// TaskSpec is listed, so strict decoding still rejects typos.
type vcJobWire struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              vcJobSpec `json:"spec"`
}

type vcJobSpec struct {
	SchedulerName           string              `json:"schedulerName,omitempty"`
	MinAvailable            int32               `json:"minAvailable,omitempty"`
	Volumes                 []vcVolume          `json:"volumes,omitempty"`
	Tasks                   []vcTask            `json:"tasks,omitempty"`
	Policies                []vcPolicy          `json:"policies,omitempty"`
	Plugins                 map[string][]string `json:"plugins,omitempty"`
	RunningEstimate         *metav1.Duration    `json:"runningEstimate,omitempty"`
	Queue                   string              `json:"queue,omitempty"`
	MaxRetry                int32               `json:"maxRetry,omitempty"`
	TTLSecondsAfterFinished *int32              `json:"ttlSecondsAfterFinished,omitempty"`
	PriorityClassName       string              `json:"priorityClassName,omitempty"`
	MinSuccess              *int32              `json:"minSuccess,omitempty"`
	NetworkTopology         *vcNetworkTopology  `json:"networkTopology,omitempty"`
}

// vcNetworkTopology is Volcano's NetworkTopologySpec (vcjob and PodGroup alike).
type vcNetworkTopology struct {
	Mode               string `json:"mode,omitempty"`
	HighestTierAllowed *int32 `json:"highestTierAllowed,omitempty"`
	HighestTierName    string `json:"highestTierName,omitempty"`
}

type vcVolume struct {
	MountPath       string                            `json:"mountPath"`
	VolumeClaimName string                            `json:"volumeClaimName,omitempty"`
	VolumeClaim     *corev1.PersistentVolumeClaimSpec `json:"volumeClaim,omitempty"`
}

// vcPolicy is Volcano's LifecyclePolicy: on an event (or a container exit code) the job
// controller takes an action.
type vcPolicy struct {
	Action   string           `json:"action,omitempty"`
	Event    string           `json:"event,omitempty"`
	Events   []string         `json:"events,omitempty"`
	ExitCode *int32           `json:"exitCode,omitempty"`
	Timeout  *metav1.Duration `json:"timeout,omitempty"`
}

type vcTask struct {
	Name            string                 `json:"name,omitempty"`
	Replicas        int32                  `json:"replicas,omitempty"`
	MinAvailable    *int32                 `json:"minAvailable,omitempty"`
	Template        corev1.PodTemplateSpec `json:"template,omitempty"`
	Policies        []vcPolicy             `json:"policies,omitempty"`
	TopologyPolicy  string                 `json:"topologyPolicy,omitempty"`
	MaxRetry        int32                  `json:"maxRetry,omitempty"`
	DependsOn       *vcDependsOn           `json:"dependsOn,omitempty"`
	PartitionPolicy *vcPartitionPolicy     `json:"partitionPolicy,omitempty"`
}

type vcDependsOn struct {
	Name      []string `json:"name,omitempty"`
	Iteration string   `json:"iteration,omitempty"`
}

type vcPartitionPolicy struct {
	TotalPartitions int32              `json:"totalPartitions"`
	PartitionSize   int32              `json:"partitionSize"`
	NetworkTopology *vcNetworkTopology `json:"networkTopology,omitempty"`
	MinPartitions   int32              `json:"minPartitions,omitempty"`
}

// volcanoPodGroupWire is scheduling.volcano.sh/v1beta1 PodGroup, with Volcano's whole
// NetworkTopologySpec (highestTierName included).
type volcanoPodGroupWire struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		MinMember         int32               `json:"minMember,omitempty"`
		MinTaskMember     map[string]int32    `json:"minTaskMember,omitempty"`
		Queue             string              `json:"queue,omitempty"`
		PriorityClassName string              `json:"priorityClassName,omitempty"`
		MinResources      corev1.ResourceList `json:"minResources,omitempty"`
		NetworkTopology   *vcNetworkTopology  `json:"networkTopology,omitempty"`
	} `json:"spec"`
}
