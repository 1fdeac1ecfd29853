//go:build nvml && cgo

package nvml

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stddef.h>

// The nvml.h declarations Gantry uses, restated so the build needs no CUDA headers.
// Layouts follow nvml.h (R470 and later).
typedef int nvmlReturn_t;
typedef struct nvmlDevice_st *nvmlDevice_t;
typedef struct nvmlGpuInstance_st *nvmlGpuInstance_t;
typedef struct nvmlComputeInstance_st *nvmlComputeInstance_t;
typedef struct nvmlEventSet_st *nvmlEventSet_t;
typedef struct { unsigned long long total, free, used; } nvmlMemory_t;
typedef struct {
	char busIdLegacy[16];
	unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
	char busId[32];
} nvmlPciInfo_t;
typedef struct { unsigned int start, size; } nvmlGpuInstancePlacement_t;
typedef struct {
	unsigned int id, isP2pSupported, sliceCount, instanceCount, multiprocessorCount,
		copyEngineCount, decoderCount, encoderCount, jpegCount, ofaCount;
	unsigned long long memorySizeMB;
} nvmlGpuInstanceProfileInfo_t;
typedef struct {
	nvmlDevice_t device;
	unsigned int id, profileId;
	nvmlGpuInstancePlacement_t placement;
} nvmlGpuInstanceInfo_t;
typedef struct {
	unsigned int id, sliceCount, instanceCount, multiprocessorCount, sharedCopyEngineCount,
		sharedDecoderCount, sharedEncoderCount, sharedJpegCount, sharedOfaCount;
} nvmlComputeInstanceProfileInfo_t;
typedef struct { unsigned int start, size; } nvmlComputeInstancePlacement_t;
typedef struct {
	nvmlDevice_t device;
	nvmlGpuInstance_t gpuInstance;
	unsigned int id, profileId;
	nvmlComputeInstancePlacement_t placement;
} nvmlComputeInstanceInfo_t;
typedef struct {
	nvmlDevice_t device;
	unsigned long long eventType, eventData;
	unsigned int gpuInstanceId, computeInstanceId;
} nvmlEventData_t;

enum {
	F_INIT, F_SHUTDOWN, F_DRIVER, F_CUDA, F_COUNT, F_BY_INDEX, F_INDEX, F_NAME, F_UUID, F_MEMORY,
	F_PCI, F_MIG_MODE, F_SET_MIG_MODE, F_MAX_MIG, F_MIG_BY_INDEX, F_IS_MIG, F_PARENT, F_GI_ID,
	F_CI_ID, F_GI_PROFILE, F_GI_PLACEMENTS, F_GIS, F_GI_BY_ID, F_GI_CREATE, F_GI_INFO, F_GI_DESTROY,
	F_CI_PROFILE, F_CI_CREATE, F_CIS, F_CI_INFO, F_CI_DESTROY, F_LINK_STATE, F_LINK_REMOTE,
	F_EVENT_TYPES, F_REGISTER, F_SET_CREATE, F_SET_WAIT, F_SET_FREE, F_N
};

static const char *gantry_names[F_N] = {
	[F_INIT] = "nvmlInit_v2", [F_SHUTDOWN] = "nvmlShutdown",
	[F_DRIVER] = "nvmlSystemGetDriverVersion", [F_CUDA] = "nvmlSystemGetCudaDriverVersion",
	[F_COUNT] = "nvmlDeviceGetCount_v2", [F_BY_INDEX] = "nvmlDeviceGetHandleByIndex_v2",
	[F_INDEX] = "nvmlDeviceGetIndex", [F_NAME] = "nvmlDeviceGetName", [F_UUID] = "nvmlDeviceGetUUID",
	[F_MEMORY] = "nvmlDeviceGetMemoryInfo", [F_PCI] = "nvmlDeviceGetPciInfo_v3",
	[F_MIG_MODE] = "nvmlDeviceGetMigMode", [F_SET_MIG_MODE] = "nvmlDeviceSetMigMode",
	[F_MAX_MIG] = "nvmlDeviceGetMaxMigDeviceCount", [F_MIG_BY_INDEX] = "nvmlDeviceGetMigDeviceHandleByIndex",
	[F_IS_MIG] = "nvmlDeviceIsMigDeviceHandle", [F_PARENT] = "nvmlDeviceGetDeviceHandleFromMigDeviceHandle",
	[F_GI_ID] = "nvmlDeviceGetGpuInstanceId", [F_CI_ID] = "nvmlDeviceGetComputeInstanceId",
	[F_GI_PROFILE] = "nvmlDeviceGetGpuInstanceProfileInfo",
	[F_GI_PLACEMENTS] = "nvmlDeviceGetGpuInstancePossiblePlacements_v2",
	[F_GIS] = "nvmlDeviceGetGpuInstances", [F_GI_BY_ID] = "nvmlDeviceGetGpuInstanceById",
	[F_GI_CREATE] = "nvmlDeviceCreateGpuInstanceWithPlacement", [F_GI_INFO] = "nvmlGpuInstanceGetInfo",
	[F_GI_DESTROY] = "nvmlGpuInstanceDestroy", [F_CI_PROFILE] = "nvmlGpuInstanceGetComputeInstanceProfileInfo",
	[F_CI_CREATE] = "nvmlGpuInstanceCreateComputeInstance", [F_CIS] = "nvmlGpuInstanceGetComputeInstances",
	[F_CI_INFO] = "nvmlComputeInstanceGetInfo_v2", [F_CI_DESTROY] = "nvmlComputeInstanceDestroy",
	[F_LINK_STATE] = "nvmlDeviceGetNvLinkState", [F_LINK_REMOTE] = "nvmlDeviceGetNvLinkRemotePciInfo_v2",
	[F_EVENT_TYPES] = "nvmlDeviceGetSupportedEventTypes", [F_REGISTER] = "nvmlDeviceRegisterEvents",
	[F_SET_CREATE] = "nvmlEventSetCreate", [F_SET_WAIT] = "nvmlEventSetWait_v2", [F_SET_FREE] = "nvmlEventSetFree",
};

static void *gantry_fn[F_N];

// gantry_load opens the library once; a missing symbol stays NULL and its calls return
// NVML_ERROR_FUNCTION_NOT_FOUND (13), so an old driver fails per call, not at load.
static const char *gantry_load(void) {
	static void *lib;
	if (lib) return NULL;
	lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib) return dlerror();
	for (int i = 0; i < F_N; i++) gantry_fn[i] = dlsym(lib, gantry_names[i]);
	return NULL;
}

#define GANTRY_CALL(idx, sig, ...) \
	(gantry_fn[idx] ? ((nvmlReturn_t(*) sig)gantry_fn[idx])(__VA_ARGS__) : 13)

static nvmlReturn_t g_init(void) { return gantry_fn[F_INIT] ? ((nvmlReturn_t(*)(void))gantry_fn[F_INIT])() : 13; }
static nvmlReturn_t g_shutdown(void) { return gantry_fn[F_SHUTDOWN] ? ((nvmlReturn_t(*)(void))gantry_fn[F_SHUTDOWN])() : 13; }
static nvmlReturn_t g_driver(char *b, unsigned int n) { return GANTRY_CALL(F_DRIVER, (char *, unsigned int), b, n); }
static nvmlReturn_t g_cuda(int *v) { return GANTRY_CALL(F_CUDA, (int *), v); }
static nvmlReturn_t g_count(unsigned int *n) { return GANTRY_CALL(F_COUNT, (unsigned int *), n); }
static nvmlReturn_t g_by_index(unsigned int i, nvmlDevice_t *d) { return GANTRY_CALL(F_BY_INDEX, (unsigned int, nvmlDevice_t *), i, d); }
static nvmlReturn_t g_index(nvmlDevice_t d, unsigned int *i) { return GANTRY_CALL(F_INDEX, (nvmlDevice_t, unsigned int *), d, i); }
static nvmlReturn_t g_name(nvmlDevice_t d, char *b, unsigned int n) { return GANTRY_CALL(F_NAME, (nvmlDevice_t, char *, unsigned int), d, b, n); }
static nvmlReturn_t g_uuid(nvmlDevice_t d, char *b, unsigned int n) { return GANTRY_CALL(F_UUID, (nvmlDevice_t, char *, unsigned int), d, b, n); }
static nvmlReturn_t g_memory(nvmlDevice_t d, nvmlMemory_t *m) { return GANTRY_CALL(F_MEMORY, (nvmlDevice_t, nvmlMemory_t *), d, m); }
static nvmlReturn_t g_pci(nvmlDevice_t d, nvmlPciInfo_t *p) { return GANTRY_CALL(F_PCI, (nvmlDevice_t, nvmlPciInfo_t *), d, p); }
static nvmlReturn_t g_mig_mode(nvmlDevice_t d, unsigned int *c, unsigned int *p) { return GANTRY_CALL(F_MIG_MODE, (nvmlDevice_t, unsigned int *, unsigned int *), d, c, p); }
static nvmlReturn_t g_set_mig_mode(nvmlDevice_t d, unsigned int m, nvmlReturn_t *a) { return GANTRY_CALL(F_SET_MIG_MODE, (nvmlDevice_t, unsigned int, nvmlReturn_t *), d, m, a); }
static nvmlReturn_t g_max_mig(nvmlDevice_t d, unsigned int *n) { return GANTRY_CALL(F_MAX_MIG, (nvmlDevice_t, unsigned int *), d, n); }
static nvmlReturn_t g_mig_by_index(nvmlDevice_t d, unsigned int i, nvmlDevice_t *m) { return GANTRY_CALL(F_MIG_BY_INDEX, (nvmlDevice_t, unsigned int, nvmlDevice_t *), d, i, m); }
static nvmlReturn_t g_is_mig(nvmlDevice_t d, unsigned int *v) { return GANTRY_CALL(F_IS_MIG, (nvmlDevice_t, unsigned int *), d, v); }
static nvmlReturn_t g_parent(nvmlDevice_t d, nvmlDevice_t *p) { return GANTRY_CALL(F_PARENT, (nvmlDevice_t, nvmlDevice_t *), d, p); }
static nvmlReturn_t g_gi_id(nvmlDevice_t d, unsigned int *v) { return GANTRY_CALL(F_GI_ID, (nvmlDevice_t, unsigned int *), d, v); }
static nvmlReturn_t g_ci_id(nvmlDevice_t d, unsigned int *v) { return GANTRY_CALL(F_CI_ID, (nvmlDevice_t, unsigned int *), d, v); }
static nvmlReturn_t g_gi_profile(nvmlDevice_t d, unsigned int p, nvmlGpuInstanceProfileInfo_t *i) { return GANTRY_CALL(F_GI_PROFILE, (nvmlDevice_t, unsigned int, nvmlGpuInstanceProfileInfo_t *), d, p, i); }
static nvmlReturn_t g_gi_placements(nvmlDevice_t d, unsigned int p, nvmlGpuInstancePlacement_t *pl, unsigned int *n) { return GANTRY_CALL(F_GI_PLACEMENTS, (nvmlDevice_t, unsigned int, nvmlGpuInstancePlacement_t *, unsigned int *), d, p, pl, n); }
static nvmlReturn_t g_gis(nvmlDevice_t d, unsigned int p, nvmlGpuInstance_t *g, unsigned int *n) { return GANTRY_CALL(F_GIS, (nvmlDevice_t, unsigned int, nvmlGpuInstance_t *, unsigned int *), d, p, g, n); }
static nvmlReturn_t g_gi_by_id(nvmlDevice_t d, unsigned int id, nvmlGpuInstance_t *g) { return GANTRY_CALL(F_GI_BY_ID, (nvmlDevice_t, unsigned int, nvmlGpuInstance_t *), d, id, g); }
static nvmlReturn_t g_gi_create(nvmlDevice_t d, unsigned int p, const nvmlGpuInstancePlacement_t *pl, nvmlGpuInstance_t *g) { return GANTRY_CALL(F_GI_CREATE, (nvmlDevice_t, unsigned int, const nvmlGpuInstancePlacement_t *, nvmlGpuInstance_t *), d, p, pl, g); }
static nvmlReturn_t g_gi_info(nvmlGpuInstance_t g, nvmlGpuInstanceInfo_t *i) { return GANTRY_CALL(F_GI_INFO, (nvmlGpuInstance_t, nvmlGpuInstanceInfo_t *), g, i); }
static nvmlReturn_t g_gi_destroy(nvmlGpuInstance_t g) { return GANTRY_CALL(F_GI_DESTROY, (nvmlGpuInstance_t), g); }
static nvmlReturn_t g_ci_profile(nvmlGpuInstance_t g, unsigned int p, unsigned int e, nvmlComputeInstanceProfileInfo_t *i) { return GANTRY_CALL(F_CI_PROFILE, (nvmlGpuInstance_t, unsigned int, unsigned int, nvmlComputeInstanceProfileInfo_t *), g, p, e, i); }
static nvmlReturn_t g_ci_create(nvmlGpuInstance_t g, unsigned int p, nvmlComputeInstance_t *c) { return GANTRY_CALL(F_CI_CREATE, (nvmlGpuInstance_t, unsigned int, nvmlComputeInstance_t *), g, p, c); }
static nvmlReturn_t g_cis(nvmlGpuInstance_t g, unsigned int p, nvmlComputeInstance_t *c, unsigned int *n) { return GANTRY_CALL(F_CIS, (nvmlGpuInstance_t, unsigned int, nvmlComputeInstance_t *, unsigned int *), g, p, c, n); }
static nvmlReturn_t g_ci_info(nvmlComputeInstance_t c, nvmlComputeInstanceInfo_t *i) { return GANTRY_CALL(F_CI_INFO, (nvmlComputeInstance_t, nvmlComputeInstanceInfo_t *), c, i); }
static nvmlReturn_t g_ci_destroy(nvmlComputeInstance_t c) { return GANTRY_CALL(F_CI_DESTROY, (nvmlComputeInstance_t), c); }
static nvmlReturn_t g_link_state(nvmlDevice_t d, unsigned int l, int *s) { return GANTRY_CALL(F_LINK_STATE, (nvmlDevice_t, unsigned int, int *), d, l, s); }
static nvmlReturn_t g_link_remote(nvmlDevice_t d, unsigned int l, nvmlPciInfo_t *p) { return GANTRY_CALL(F_LINK_REMOTE, (nvmlDevice_t, unsigned int, nvmlPciInfo_t *), d, l, p); }
static nvmlReturn_t g_event_types(nvmlDevice_t d, unsigned long long *t) { return GANTRY_CALL(F_EVENT_TYPES, (nvmlDevice_t, unsigned long long *), d, t); }
static nvmlReturn_t g_register(nvmlDevice_t d, unsigned long long t, nvmlEventSet_t s) { return GANTRY_CALL(F_REGISTER, (nvmlDevice_t, unsigned long long, nvmlEventSet_t), d, t, s); }
static nvmlReturn_t g_set_create(nvmlEventSet_t *s) { return GANTRY_CALL(F_SET_CREATE, (nvmlEventSet_t *), s); }
static nvmlReturn_t g_set_wait(nvmlEventSet_t s, nvmlEventData_t *e, unsigned int ms) { return GANTRY_CALL(F_SET_WAIT, (nvmlEventSet_t, nvmlEventData_t *, unsigned int), s, e, ms); }
static nvmlReturn_t g_set_free(nvmlEventSet_t s) { return GANTRY_CALL(F_SET_FREE, (nvmlEventSet_t), s); }
*/
import "C"

import "fmt"

// New loads libnvidia-ml.so.1. Call Init on the result before anything else.
func New() (Interface, error) {
	if msg := C.gantry_load(); msg != nil {
		return nil, fmt.Errorf("nvml: loading libnvidia-ml.so.1: %s", C.GoString(msg))
	}
	return library{}, nil
}

// Buffer sizes from nvml.h (NVML_*_BUFFER_SIZE, v2 where there is one).
const (
	driverBuf = 80
	nameBuf   = 96
	uuidBuf   = 96
)

type library struct{}

func ret(r C.nvmlReturn_t) Return { return Return(r) }

func (library) Init() Return     { return ret(C.g_init()) }
func (library) Shutdown() Return { return ret(C.g_shutdown()) }

func (library) SystemGetDriverVersion() (string, Return) {
	var buf [driverBuf]C.char
	r := ret(C.g_driver(&buf[0], driverBuf))
	return C.GoString(&buf[0]), r
}

func (library) SystemGetCudaDriverVersion() (int, Return) {
	var v C.int
	r := ret(C.g_cuda(&v))
	return int(v), r
}

func (library) DeviceGetCount() (int, Return) {
	var n C.uint
	r := ret(C.g_count(&n))
	return int(n), r
}

func (library) DeviceGetHandleByIndex(i int) (Device, Return) {
	var d C.nvmlDevice_t
	r := ret(C.g_by_index(C.uint(i), &d))
	return device{d}, r
}

func (library) EventSetCreate() (EventSet, Return) {
	var s C.nvmlEventSet_t
	r := ret(C.g_set_create(&s))
	return eventSet{s}, r
}

// device wraps an NVML device handle (a pointer owned by the library, never by Go).
type device struct{ h C.nvmlDevice_t }

func (d device) GetIndex() (int, Return) {
	var v C.uint
	r := ret(C.g_index(d.h, &v))
	return int(v), r
}

func (d device) GetName() (string, Return) {
	var buf [nameBuf]C.char
	r := ret(C.g_name(d.h, &buf[0], nameBuf))
	return C.GoString(&buf[0]), r
}

func (d device) GetUUID() (string, Return) {
	var buf [uuidBuf]C.char
	r := ret(C.g_uuid(d.h, &buf[0], uuidBuf))
	return C.GoString(&buf[0]), r
}

func (d device) GetMemoryInfo() (Memory, Return) {
	var m C.nvmlMemory_t
	r := ret(C.g_memory(d.h, &m))
	return Memory{Total: uint64(m.total), Free: uint64(m.free), Used: uint64(m.used)}, r
}

func pciInfo(p *C.nvmlPciInfo_t) PciInfo {
	return PciInfo{
		BusID: C.GoString(&p.busId[0]), Domain: uint32(p.domain), Bus: uint32(p.bus),
		Device: uint32(p.device), PciDeviceID: uint32(p.pciDeviceId),
	}
}

func (d device) GetPciInfo() (PciInfo, Return) {
	var p C.nvmlPciInfo_t
	r := ret(C.g_pci(d.h, &p))
	return pciInfo(&p), r
}

func (d device) GetMigMode() (int, int, Return) {
	var c, p C.uint
	r := ret(C.g_mig_mode(d.h, &c, &p))
	return int(c), int(p), r
}

func (d device) SetMigMode(mode int) (Return, Return) {
	var a C.nvmlReturn_t
	r := ret(C.g_set_mig_mode(d.h, C.uint(mode), &a))
	return ret(a), r
}

func (d device) GetMaxMigDeviceCount() (int, Return) {
	var n C.uint
	r := ret(C.g_max_mig(d.h, &n))
	return int(n), r
}

func (d device) GetMigDeviceHandleByIndex(i int) (Device, Return) {
	var m C.nvmlDevice_t
	r := ret(C.g_mig_by_index(d.h, C.uint(i), &m))
	return device{m}, r
}

func (d device) IsMigDeviceHandle() (bool, Return) {
	var v C.uint
	r := ret(C.g_is_mig(d.h, &v))
	return v != 0, r
}

func (d device) GetDeviceHandleFromMigDeviceHandle() (Device, Return) {
	var p C.nvmlDevice_t
	r := ret(C.g_parent(d.h, &p))
	return device{p}, r
}

func (d device) GetGpuInstanceId() (int, Return) {
	var v C.uint
	r := ret(C.g_gi_id(d.h, &v))
	return int(v), r
}

func (d device) GetComputeInstanceId() (int, Return) {
	var v C.uint
	r := ret(C.g_ci_id(d.h, &v))
	return int(v), r
}

func (d device) GetGpuInstanceProfileInfo(profile int) (GpuInstanceProfileInfo, Return) {
	var i C.nvmlGpuInstanceProfileInfo_t
	r := ret(C.g_gi_profile(d.h, C.uint(profile), &i))
	return GpuInstanceProfileInfo{
		ID: uint32(i.id), IsP2pSupported: uint32(i.isP2pSupported), SliceCount: uint32(i.sliceCount),
		InstanceCount: uint32(i.instanceCount), MultiprocessorCount: uint32(i.multiprocessorCount),
		CopyEngineCount: uint32(i.copyEngineCount), DecoderCount: uint32(i.decoderCount),
		EncoderCount: uint32(i.encoderCount), JpegCount: uint32(i.jpegCount), OfaCount: uint32(i.ofaCount),
		MemorySizeMB: uint64(i.memorySizeMB),
	}, r
}

// maxInstances bounds the arrays NVML fills: no GPU has more than 8 memory slices.
const maxInstances = 8

func (d device) GetGpuInstancePossiblePlacements(info *GpuInstanceProfileInfo) ([]GpuInstancePlacement, Return) {
	if info == nil {
		return nil, ERROR_INVALID_ARGUMENT
	}
	var pl [maxInstances]C.nvmlGpuInstancePlacement_t
	n := C.uint(maxInstances)
	r := ret(C.g_gi_placements(d.h, C.uint(info.ID), &pl[0], &n))
	if r != SUCCESS {
		return nil, r
	}
	out := make([]GpuInstancePlacement, int(n))
	for i := range out {
		out[i] = GpuInstancePlacement{Start: uint32(pl[i].start), Size: uint32(pl[i].size)}
	}
	return out, r
}

func (d device) GetGpuInstances(info *GpuInstanceProfileInfo) ([]GpuInstance, Return) {
	if info == nil {
		return nil, ERROR_INVALID_ARGUMENT
	}
	var gis [maxInstances]C.nvmlGpuInstance_t
	var n C.uint
	r := ret(C.g_gis(d.h, C.uint(info.ID), &gis[0], &n))
	if r != SUCCESS {
		return nil, r
	}
	out := make([]GpuInstance, int(n))
	for i := range out {
		out[i] = gpuInstance{gis[i]}
	}
	return out, r
}

func (d device) GetGpuInstanceById(id int) (GpuInstance, Return) {
	var g C.nvmlGpuInstance_t
	r := ret(C.g_gi_by_id(d.h, C.uint(id), &g))
	return gpuInstance{g}, r
}

func (d device) CreateGpuInstanceWithPlacement(info *GpuInstanceProfileInfo, pl *GpuInstancePlacement) (GpuInstance, Return) {
	if info == nil || pl == nil {
		return nil, ERROR_INVALID_ARGUMENT
	}
	cpl := C.nvmlGpuInstancePlacement_t{start: C.uint(pl.Start), size: C.uint(pl.Size)}
	var g C.nvmlGpuInstance_t
	r := ret(C.g_gi_create(d.h, C.uint(info.ID), &cpl, &g))
	return gpuInstance{g}, r
}

func (d device) GetNvLinkState(link int) (EnableState, Return) {
	var s C.int
	r := ret(C.g_link_state(d.h, C.uint(link), &s))
	return EnableState(s), r
}

func (d device) GetNvLinkRemotePciInfo(link int) (PciInfo, Return) {
	var p C.nvmlPciInfo_t
	r := ret(C.g_link_remote(d.h, C.uint(link), &p))
	return pciInfo(&p), r
}

func (d device) GetSupportedEventTypes() (uint64, Return) {
	var t C.ulonglong
	r := ret(C.g_event_types(d.h, &t))
	return uint64(t), r
}

func (d device) RegisterEvents(types uint64, set EventSet) Return {
	es, ok := set.(eventSet)
	if !ok {
		return ERROR_INVALID_ARGUMENT
	}
	return ret(C.g_register(d.h, C.ulonglong(types), es.h))
}

type gpuInstance struct{ h C.nvmlGpuInstance_t }

func (g gpuInstance) GetInfo() (GpuInstanceInfo, Return) {
	var i C.nvmlGpuInstanceInfo_t
	r := ret(C.g_gi_info(g.h, &i))
	return GpuInstanceInfo{ID: uint32(i.id), ProfileID: uint32(i.profileId),
		Placement: GpuInstancePlacement{Start: uint32(i.placement.start), Size: uint32(i.placement.size)}}, r
}

func (g gpuInstance) Destroy() Return { return ret(C.g_gi_destroy(g.h)) }

func (g gpuInstance) GetComputeInstanceProfileInfo(profile, eng int) (ComputeInstanceProfileInfo, Return) {
	var i C.nvmlComputeInstanceProfileInfo_t
	r := ret(C.g_ci_profile(g.h, C.uint(profile), C.uint(eng), &i))
	return ComputeInstanceProfileInfo{ID: uint32(i.id), SliceCount: uint32(i.sliceCount),
		InstanceCount: uint32(i.instanceCount), MultiprocessorCount: uint32(i.multiprocessorCount)}, r
}

func (g gpuInstance) CreateComputeInstance(info *ComputeInstanceProfileInfo) (ComputeInstance, Return) {
	if info == nil {
		return nil, ERROR_INVALID_ARGUMENT
	}
	var c C.nvmlComputeInstance_t
	r := ret(C.g_ci_create(g.h, C.uint(info.ID), &c))
	return computeInstance{c}, r
}

func (g gpuInstance) GetComputeInstances(info *ComputeInstanceProfileInfo) ([]ComputeInstance, Return) {
	if info == nil {
		return nil, ERROR_INVALID_ARGUMENT
	}
	var cis [maxInstances]C.nvmlComputeInstance_t
	var n C.uint
	r := ret(C.g_cis(g.h, C.uint(info.ID), &cis[0], &n))
	if r != SUCCESS {
		return nil, r
	}
	out := make([]ComputeInstance, int(n))
	for i := range out {
		out[i] = computeInstance{cis[i]}
	}
	return out, r
}

type computeInstance struct{ h C.nvmlComputeInstance_t }

func (c computeInstance) GetInfo() (ComputeInstanceInfo, Return) {
	var i C.nvmlComputeInstanceInfo_t
	r := ret(C.g_ci_info(c.h, &i))
	var gi C.nvmlGpuInstanceInfo_t
	gr := ret(C.g_gi_info(i.gpuInstance, &gi))
	if r == SUCCESS && gr != SUCCESS {
		r = gr
	}
	return ComputeInstanceInfo{ID: uint32(i.id), ProfileID: uint32(i.profileId), GpuInstanceID: uint32(gi.id)}, r
}

func (c computeInstance) Destroy() Return { return ret(C.g_ci_destroy(c.h)) }

type eventSet struct{ h C.nvmlEventSet_t }

func (e eventSet) Wait(timeoutMs uint32) (EventData, Return) {
	var ev C.nvmlEventData_t
	r := ret(C.g_set_wait(e.h, &ev, C.uint(timeoutMs)))
	return EventData{Device: device{ev.device}, EventType: uint64(ev.eventType), EventData: uint64(ev.eventData),
		GpuInstanceID: uint32(ev.gpuInstanceId), ComputeInstanceID: uint32(ev.computeInstanceId)}, r
}

func (e eventSet) Free() Return { return ret(C.g_set_free(e.h)) }
