package manifest

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// hyperNodeWire is Volcano's topology.volcano.sh/v1alpha1 HyperNode, decoded into local
// structs (as vcJobWire) with every field of Volcano's HyperNodeSpec listed, so strict
// decoding rejects typos. status (nodeCount, conditions) is observed state and dropped.
type hyperNodeWire struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		Tier     int32             `json:"tier,omitempty"`
		TierName string            `json:"tierName,omitempty"`
		Members  []hyperNodeMember `json:"members,omitempty"`
	} `json:"spec"`
}

type hyperNodeMember struct {
	Type     string `json:"type,omitempty"`
	Selector struct {
		ExactMatch *struct {
			Name string `json:"name"`
		} `json:"exactMatch,omitempty"`
		RegexMatch *struct {
			Pattern string `json:"pattern"`
		} `json:"regexMatch,omitempty"`
		LabelMatch *metav1.LabelSelector `json:"labelMatch,omitempty"`
	} `json:"selector,omitempty"`
}
