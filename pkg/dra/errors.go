package dra

import "fmt"

// Error is a DeviceClass, claim or quota mapping Gantry cannot compile: which object,
// the field path inside it and why. Field paths are those of a ResourceClaim
// ("spec.devices.requests[0].exactly.selectors[1].cel.expression"; a
// ResourceClaimTemplate holds the same spec under spec.spec) or of a DeviceClass
// ("spec.selectors[0].cel.expression").
type Error struct {
	// Kind is "DeviceClass", "ResourceClaim" or "QuotaMapping"; Name the class name, the
	// pod's claim name or the mapping's resource.
	Kind, Name string
	Field      string
	Reason     string
}

func (e *Error) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("%s %s: %s", e.Kind, e.Name, e.Reason)
	}
	return fmt.Sprintf("%s %s: %s: %s", e.Kind, e.Name, e.Field, e.Reason)
}

// Kinds of object an Error names.
const (
	KindDeviceClass  = "DeviceClass"
	KindClaim        = "ResourceClaim"
	KindQuotaMapping = "QuotaMapping"
)

func classError(class, field, format string, args ...any) *Error {
	return &Error{Kind: KindDeviceClass, Name: class, Field: field, Reason: fmt.Sprintf(format, args...)}
}

func claimError(claim, field, format string, args ...any) *Error {
	return &Error{Kind: KindClaim, Name: claim, Field: field, Reason: fmt.Sprintf(format, args...)}
}
