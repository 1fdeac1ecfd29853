package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"

	"github.com/gantry-sched/gantry/pkg/api"
)

// sliceConstraint is one entry of Kueue's podset-slice-required-topology-constraints
// (kueue v1beta2 PodsetSliceRequiredTopologyConstraint).
type sliceConstraint struct {
	Topology string `json:"topology"`
	Size     int32  `json:"size"`
}

// readSliceConstraints parses the multi-layer slice annotation strictly (unknown fields
// and trailing data are errors) and checks it as Kueue's webhook does: 1 to 3 layers,
// each a node-label key with a size of at least 1, no level twice, each size dividing
// the one above. The first layer becomes SliceLevel/SliceSize, the rest InnerSlices.
// Whether the layers go from coarse to fine depends on the topology of the flavor, so
// placement checks that.
func readSliceConstraints(raw, field string, t *api.TopologyRequest, c errs) {
	layers, err := decodeSliceConstraints(raw)
	if err != nil {
		c.add(field, "not a JSON array of {\"topology\": <level>, \"size\": <pods>}: %v", err)
		return
	}
	if len(layers) == 0 || len(layers) > 1+api.MaxInnerSlices {
		c.add(field, "%d layers: want 1 to %d", len(layers), 1+api.MaxInnerSlices)
		return
	}
	seen := map[string]int{}
	ok := true
	for i, l := range layers {
		at := joinIndex(field, i)
		n := len(*c.list)
		checkLevelName(l.Topology, at+".topology", c)
		if l.Size < 1 {
			c.add(at+".size", "%d: want at least 1", l.Size)
		}
		if prev, dup := seen[l.Topology]; dup && l.Topology != "" {
			c.add(at+".topology", "%s is also layer %d", l.Topology, prev)
		}
		seen[l.Topology] = i
		if i > 0 && l.Size > 0 && layers[i-1].Size > 0 && layers[i-1].Size%l.Size != 0 {
			c.add(at+".size", "%d does not divide the size %d of the layer above", l.Size, layers[i-1].Size)
		}
		ok = ok && len(*c.list) == n
	}
	if !ok {
		return
	}
	t.SliceLevel, t.SliceSize = layers[0].Topology, layers[0].Size
	for i, l := range layers[1:] {
		t.InnerSlices[i] = api.SliceLayer{Level: l.Topology, Size: l.Size}
	}
}

func decodeSliceConstraints(raw string) ([]sliceConstraint, error) {
	dec := json.NewDecoder(bytes.NewReader([]byte(raw)))
	dec.DisallowUnknownFields()
	var out []sliceConstraint
	if err := dec.Decode(&out); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the array")
	}
	return out, nil
}
