package pluginconfig

import (
	yaml "go.yaml.in/yaml/v3"
)

// Version is the only config version NVIDIA's plugin defines.
const Version = "v1"

// file is the config file as written. Pointers tell an absent field from a zero one.
type file struct {
	Version string      `yaml:"version"`
	Flags   flags       `yaml:"flags"`
	Sharing sharingSpec `yaml:"sharing"`
	// Resources renames GPUs and MIG devices by product pattern; Gantry's names follow
	// the device model, so a file that sets it is refused rather than half-honoured.
	Resources yaml.Node `yaml:"resources"`
}

type flags struct {
	MigStrategy     *string      `yaml:"migStrategy"`
	FailOnInitError *bool        `yaml:"failOnInitError"`
	Plugin          *pluginFlags `yaml:"plugin"`
	GFD             yaml.Node    `yaml:"gfd"`
}

// pluginFlags are the plugin's container-runtime settings: Gantry passes devices by
// environment variable and CDI is the runtime's business, so they are noted, not used.
type pluginFlags struct {
	PassDeviceSpecs     *bool     `yaml:"passDeviceSpecs"`
	DeviceListStrategy  yaml.Node `yaml:"deviceListStrategy"`
	DeviceIDStrategy    *string   `yaml:"deviceIDStrategy"`
	CDIAnnotationPrefix *string   `yaml:"cdiAnnotationPrefix"`
	NvidiaCTKPath       *string   `yaml:"nvidiaCTKPath"`
	NvidiaDevRoot       *string   `yaml:"nvidiaDevRoot"`
	ContainerDriverRoot *string   `yaml:"containerDriverRoot"`
	GDSEnabled          *bool     `yaml:"gdsEnabled"`
	MOFEDEnabled        *bool     `yaml:"mofedEnabled"`
}

type sharingSpec struct {
	TimeSlicing *replicaSpec `yaml:"timeSlicing"`
	MPS         *replicaSpec `yaml:"mps"`
}

type replicaSpec struct {
	RenameByDefault            bool              `yaml:"renameByDefault"`
	FailRequestsGreaterThanOne bool              `yaml:"failRequestsGreaterThanOne"`
	Resources                  []replicaResource `yaml:"resources"`
}

type replicaResource struct {
	Name     string    `yaml:"name"`
	Rename   string    `yaml:"rename"`
	Replicas int       `yaml:"replicas"`
	Devices  yaml.Node `yaml:"devices"`
}
