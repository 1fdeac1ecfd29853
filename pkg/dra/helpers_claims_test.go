package dra_test

import (
	"testing"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/gantry-sched/gantry/pkg/dra"
)

// nvClasses are NVIDIA's GPU DRA driver's device classes as its chart installs them.
func nvClasses() []resourcev1.DeviceClass {
	return []resourcev1.DeviceClass{
		classOf(dra.ClassGPU, "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"),
		classOf(dra.ClassMIG, "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'"),
	}
}

func classOf(name string, exprs ...string) resourcev1.DeviceClass {
	return resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: resourcev1.DeviceClassSpec{Selectors: celSelectors(exprs...)}}
}

func celSelectors(exprs ...string) []resourcev1.DeviceSelector {
	var out []resourcev1.DeviceSelector
	for _, e := range exprs {
		out = append(out, resourcev1.DeviceSelector{CEL: &resourcev1.CELDeviceSelector{Expression: e}})
	}
	return out
}

// exact is a request for count devices of class with selectors.
func reqExact(name, class string, count int64, exprs ...string) resourcev1.DeviceRequest {
	return resourcev1.DeviceRequest{Name: name, Exactly: &resourcev1.ExactDeviceRequest{
		DeviceClassName: class, Count: count, AllocationMode: resourcev1.DeviceAllocationModeExactCount, Selectors: celSelectors(exprs...)}}
}

// admin is exact with adminAccess.
func reqAdmin(name, class string, count int64, exprs ...string) resourcev1.DeviceRequest {
	r := reqExact(name, class, count, exprs...)
	r.Exactly.AdminAccess = ptr.To(true)
	return r
}

// firstAvailable is a request met by the first subrequest that can be.
func reqFirst(name string, subs ...resourcev1.DeviceSubRequest) resourcev1.DeviceRequest {
	return resourcev1.DeviceRequest{Name: name, FirstAvailable: subs}
}

func subReq(name, class string, count int64, exprs ...string) resourcev1.DeviceSubRequest {
	return resourcev1.DeviceSubRequest{Name: name, DeviceClassName: class, Count: count, AllocationMode: resourcev1.DeviceAllocationModeExactCount, Selectors: celSelectors(exprs...)}
}

// claim is a pod claim of its own with requests.
func podClaim(name string, reqs ...resourcev1.DeviceRequest) dra.ClaimSpec {
	return dra.ClaimSpec{Name: name, Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: reqs}}}
}

// matchAttr adds a matchAttribute constraint over requests (none: all) to c.
func withMatch(c dra.ClaimSpec, attr string, requests ...string) dra.ClaimSpec {
	c.Spec.Devices.Constraints = append(c.Spec.Devices.Constraints, resourcev1.DeviceConstraint{Requests: requests, MatchAttribute: ptr.To(resourcev1.FullyQualifiedName(attr))})
	return c
}

func mustClasses(t testing.TB, cls []resourcev1.DeviceClass, m []dra.QuotaMapping, opts ...dra.ClassOption) *dra.Classes {
	t.Helper()
	c, err := dra.NewClasses(cls, m, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func mustCompile(t testing.TB, c *dra.Classes, claims ...dra.ClaimSpec) *dra.PodClaims {
	t.Helper()
	pc, err := c.Compile(claims)
	if err != nil {
		t.Fatal(err)
	}
	return pc
}

// The selectors tests use, on the driver's attributes.
const (
	selH100     = `device.attributes["gpu.nvidia.com"].productName.startsWith("NVIDIA H100")`
	selMIG1g10  = `device.attributes["gpu.nvidia.com"].profile == "1g.10gb"`
	selMem40Gi  = `device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40Gi")) >= 0`
	attrNVLink  = "gantry.dev/nvlinkDomain"
	attrPCIRoot = "resource.kubernetes.io/pcieRoot"
)
