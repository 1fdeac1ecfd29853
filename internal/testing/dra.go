package testing

// NVIDIA's DRA driver's DeviceClasses as YAML documents, for tests that load manifests:
// whole GPUs (type gpu) and MIG instances (type mig), told apart by the driver's type
// attribute. NVIDIADeviceClassesYAML holds both, separated by "---".
const (
	GPUDeviceClassYAML = `apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: gpu.nvidia.com
spec:
  selectors:
  - cel:
      expression: device.driver == "gpu.nvidia.com" && device.attributes["gpu.nvidia.com"].type == "gpu"
`
	MIGDeviceClassYAML = `apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: mig.nvidia.com
spec:
  selectors:
  - cel:
      expression: device.driver == "gpu.nvidia.com" && device.attributes["gpu.nvidia.com"].type == "mig"
`
	NVIDIADeviceClassesYAML = GPUDeviceClassYAML + "---\n" + MIGDeviceClassYAML
)
