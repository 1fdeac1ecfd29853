package manifest

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Kueue's AdmissionCheck and ProvisioningRequestConfig (kueue.x-k8s.io v1beta1 and
// v1beta2, whose specs are the same), decoded into local structs with every spec field
// of Kueue v0.17 listed, so strict decoding rejects typos. Status is observed state and
// dropped.

type admissionCheckWire struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		ControllerName string `json:"controllerName"`
		// RetryDelayMinutes was removed from Kueue's API in v0.12 and is still read
		// (and ignored) by its CRDs for old files.
		RetryDelayMinutes *int64           `json:"retryDelayMinutes,omitempty"`
		Parameters        *checkParameters `json:"parameters,omitempty"`
	} `json:"spec"`
}

type checkParameters struct {
	APIGroup string `json:"apiGroup,omitempty"`
	Kind     string `json:"kind,omitempty"`
	Name     string `json:"name,omitempty"`
}

type provReqConfigWire struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		ProvisioningClassName string            `json:"provisioningClassName,omitempty"`
		Parameters            map[string]string `json:"parameters,omitempty"`
		ManagedResources      []string          `json:"managedResources,omitempty"`
		RetryStrategy         *struct {
			BackoffLimitCount  *int32 `json:"backoffLimitCount,omitempty"`
			BackoffBaseSeconds *int32 `json:"backoffBaseSeconds,omitempty"`
			BackoffMaxSeconds  *int32 `json:"backoffMaxSeconds,omitempty"`
		} `json:"retryStrategy,omitempty"`
		PodSetUpdates *struct {
			NodeSelector []struct {
				Key                              string `json:"key,omitempty"`
				ValueFromProvisioningClassDetail string `json:"valueFromProvisioningClassDetail,omitempty"`
			} `json:"nodeSelector,omitempty"`
		} `json:"podSetUpdates,omitempty"`
		PodSetMergePolicy *string `json:"podSetMergePolicy,omitempty"`
	} `json:"spec"`
}
