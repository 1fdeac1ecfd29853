package devices

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/gantry-sched/gantry/pkg/resources"
)

// AnnotationUnhealthyDevices is the Node annotation the node agent writes with the
// device IDs ("GPU-3", "GPU-1/mig-1g.10gb@4") that failed health checks, comma
// separated; absent when all are healthy. The controller reads it.
const AnnotationUnhealthyDevices = "gantry.dev/unhealthy-devices"

// AnnotationReplicatedDevices is the Node annotation the node agent writes with the
// devices its per-resource sharing entries replicate, because GPU Feature Discovery's
// labels only give counts: "nvidia.com/gpu=1,6;nvidia.com/mig-1g.5gb=0:1,3:0" (each
// resource by its own name, not a rename; devices as DeviceRef.Index writes them).
const AnnotationReplicatedDevices = "gantry.dev/replicated-devices"

// ReplicatedDevices maps each replicated resource to the devices replicated.
type ReplicatedDevices map[resources.Name][]string

// String renders the annotation value, resources and devices sorted.
func (r ReplicatedDevices) String() string {
	names := make([]string, 0, len(r))
	for n := range r {
		names = append(names, string(n))
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, n := range names {
		refs := slices.Clone(r[resources.Name(n)])
		sort.Strings(refs)
		parts[i] = n + "=" + strings.Join(refs, ",")
	}
	return strings.Join(parts, ";")
}

// ParseReplicatedDevices reads the annotation value back; a malformed one is an error
// saying which part.
func ParseReplicatedDevices(v string) (ReplicatedDevices, error) {
	out := ReplicatedDevices{}
	if strings.TrimSpace(v) == "" {
		return out, nil
	}
	for _, part := range strings.Split(v, ";") {
		name, refs, ok := strings.Cut(part, "=")
		if !ok || name == "" || refs == "" {
			return nil, fmt.Errorf("%q: want <resource>=<device>,<device>", part)
		}
		n := resources.Name(strings.TrimSpace(name))
		if _, dup := out[n]; dup {
			return nil, fmt.Errorf("%s is listed twice", n)
		}
		for _, ref := range strings.Split(refs, ",") {
			if ref = strings.TrimSpace(ref); !indexRef(ref) {
				return nil, fmt.Errorf("%s: device %q: want a GPU index (3) or a MIG device (3:1)", n, ref)
			}
			out[n] = append(out[n], ref)
		}
	}
	return out, nil
}

// indexRef is a device written by index, not "all" or a UUID.
func indexRef(ref string) bool {
	return validDeviceRef(ref) && ref != "all" && !strings.HasPrefix(ref, "GPU-") && !strings.HasPrefix(ref, "MIG-")
}
