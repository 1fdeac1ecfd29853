package v1alpha1

import "k8s.io/apimachinery/pkg/runtime/schema"

// Group and Version of Gantry's own API.
const (
	Group   = "gantry.dev"
	Version = "v1alpha1"
)

// SchemeGroupVersion is gantry.dev/v1alpha1. It is never modified; scheme registration
// is added by the controller package's owner.
var SchemeGroupVersion = schema.GroupVersion{Group: Group, Version: Version}
