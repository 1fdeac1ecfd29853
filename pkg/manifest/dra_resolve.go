package manifest

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/dra"
	resourcev1 "k8s.io/api/resource/v1"
)

// ClaimSource finds the objects pod claims name, in a namespace: the file loader's
// ResourceClaimTemplates and ResourceClaims, or a controller's informer caches.
type ClaimSource interface {
	ClaimTemplate(namespace, name string) (*resourcev1.ResourceClaimTemplate, bool)
	Claim(namespace, name string) (*resourcev1.ResourceClaim, bool)
}

// ClaimError is a pod claim that cannot be resolved or compiled: which pod set and
// claim, the field to blame (the claim's Field, or a path inside it), and why.
type ClaimError struct {
	PodSet string
	Claim  string
	Field  string
	Err    error
}

func (e *ClaimError) Error() string {
	return fmt.Sprintf("pod set %q: claim %q: %v", e.PodSet, e.Claim, e.Err)
}

func (e *ClaimError) Unwrap() error { return e.Err }

// ResolveClaims fills in the Spec of every claim of the workload's pod sets from src,
// compiles each pod set's claims with classes (selectors, device classes, constraints)
// and adds the quota amounts their devices count as to the pod set's Requests. A pod
// set whose claims all resolved already (Spec set) is compiled but not looked up again.
// Every problem is returned, one ClaimError each; the pod sets with problems are left
// with their Requests unchanged.
func ResolveClaims(w *api.Workload, src ClaimSource, classes *dra.Classes) []*ClaimError {
	var out []*ClaimError
	for i := range w.PodSets {
		out = append(out, resolvePodSetClaims(&w.PodSets[i], w.Namespace, src, classes)...)
	}
	return out
}

// resolvePodSetClaims resolves and compiles one pod set's claims.
func resolvePodSetClaims(ps *api.PodSet, namespace string, src ClaimSource, classes *dra.Classes) []*ClaimError {
	if !ps.HasClaims() {
		return nil
	}
	var out []*ClaimError
	specs := make([]dra.ClaimSpec, 0, len(ps.Claims))
	for k := range ps.Claims {
		pc := &ps.Claims[k]
		if pc.Spec == nil {
			if err := lookUpClaim(pc, namespace, src); err != nil {
				out = append(out, &ClaimError{PodSet: ps.Name, Claim: pc.Name, Field: pc.Field + "." + referenceField(pc), Err: err})
				continue
			}
		}
		spec := dra.ClaimSpec{Name: pc.Name, Spec: *pc.Spec}
		if pc.Shared() {
			spec.Shared = namespace + "/" + pc.ResourceClaimName
		}
		specs = append(specs, spec)
	}
	if len(out) > 0 {
		return out
	}
	compiled, err := classes.Compile(specs)
	if err != nil {
		return []*ClaimError{{PodSet: ps.Name, Claim: claimOfError(ps, err), Field: fieldOfError(ps, err), Err: errors.New(claimErrorText(err))}}
	}
	ps.Requests = ps.Requests.Add(compiled.Quota())
	return nil
}

// lookUpClaim sets pc.Spec from the template or claim it names.
func lookUpClaim(pc *api.PodClaim, namespace string, src ClaimSource) error {
	if pc.Shared() {
		c, ok := src.Claim(namespace, pc.ResourceClaimName)
		if !ok {
			return fmt.Errorf("ResourceClaim %q not found in namespace %s", pc.ResourceClaimName, namespace)
		}
		pc.Spec = &c.Spec
		return nil
	}
	t, ok := src.ClaimTemplate(namespace, pc.ResourceClaimTemplateName)
	if !ok {
		return fmt.Errorf("ResourceClaimTemplate %q not found in namespace %s", pc.ResourceClaimTemplateName, namespace)
	}
	pc.Spec = &t.Spec.Spec
	return nil
}

// referenceField is the field of a pod claim that names its source.
func referenceField(pc *api.PodClaim) string {
	if pc.Shared() {
		return "resourceClaimName"
	}
	return "resourceClaimTemplateName"
}

// draError is err's *dra.Error, when it is one.
func draError(err error) (*dra.Error, bool) {
	var e *dra.Error
	ok := errors.As(err, &e)
	return e, ok
}

// claimErrorField is the field path inside a claim spec a compile error names, without
// the claim object's own "spec." ("" when err names none).
func claimErrorField(err error) string {
	if e, ok := draError(err); ok {
		return strings.TrimPrefix(e.Field, "spec.")
	}
	return ""
}

// claimErrorText is a compile error's reason: the object and field are the message's
// own prefix already.
func claimErrorText(err error) string {
	if e, ok := draError(err); ok {
		return e.Reason
	}
	return err.Error()
}

// classErrorField is the field of a DeviceClass a compile error names.
func classErrorField(err error) string {
	if e, ok := draError(err); ok {
		return e.Field
	}
	return ""
}

// claimOfError names the pod claim a compile error is about (the pod set's first
// claim when the error does not say).
func claimOfError(ps *api.PodSet, err error) string {
	if e, ok := draError(err); ok && e.Kind == dra.KindClaim {
		return e.Name
	}
	return ps.Claims[0].Name
}

// fieldOfError is the field to blame for a compile error of a pod set's claims: the
// pod claim's own entry (the spec it names lives in another object).
func fieldOfError(ps *api.PodSet, err error) string {
	name := claimOfError(ps, err)
	for _, c := range ps.Claims {
		if c.Name == name {
			return c.Field
		}
	}
	return ps.Claims[0].Field
}
