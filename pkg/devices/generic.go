package devices

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gantry-sched/gantry/pkg/resources"
)

// A GPU whose model is not in the catalog still counts: it is offered whole (or shared
// by time-slicing, MPS or fractions, never MIG) with the memory its node reports. Its ID
// carries that memory, so every LookupModel of the ID, anywhere, gives the same model
// without a registry: "generic-81559Mi-NVIDIA-X200".
const (
	genericPrefix = "generic-"
	genericMiB    = "Mi"
	// GenericFamily is the family of a generic model (GPU Feature Discovery's word for an
	// unknown architecture).
	GenericFamily = "undefined"
)

// GenericModel is the model of an uncatalogued GPU with the given product name (may be
// empty) and memory.
func GenericModel(product string, memory resources.MiB) (Model, error) {
	if memory <= 0 {
		return Model{}, fmt.Errorf("generic GPU model %q: memory %d MiB must be positive", product, memory)
	}
	id := genericPrefix + strconv.FormatInt(int64(memory), 10) + genericMiB
	if product = strings.TrimSpace(product); product != "" {
		id += "-" + product
	}
	return Model{ID: ModelID(id), Family: GenericFamily, Memory: memory, Products: nonEmpty(product)}, nil
}

// IsGeneric reports whether m was built by GenericModel rather than taken from the catalog.
func (m Model) IsGeneric() bool { return strings.HasPrefix(string(m.ID), genericPrefix) }

// lookupGeneric reads a generic model's ID; ok is false when name is not one.
func lookupGeneric(name string) (Model, bool, error) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(name), genericPrefix)
	if !ok {
		return Model{}, false, nil
	}
	num, product, _ := strings.Cut(rest, genericMiB)
	mib, err := strconv.ParseInt(num, 10, 64)
	if err != nil || (product != "" && !strings.HasPrefix(product, "-")) {
		return Model{}, true, fmt.Errorf("generic GPU model %q: want generic-<MiB>Mi[-<product>]", name)
	}
	m, err := GenericModel(strings.TrimPrefix(product, "-"), resources.MiB(mib))
	return m, true, err
}

func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}
