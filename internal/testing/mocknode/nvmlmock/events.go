package nvmlmock

import (
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
)

// supportedEvents are the event types every mock GPU can deliver.
const supportedEvents = nvml.EventTypeSingleBitEccError | nvml.EventTypeDoubleBitEccError |
	nvml.EventTypeXidCriticalError | nvml.EventTypePState | nvml.EventTypeClock

// eventSet is an NVML event set: GPUs registered with their event masks and a queue of
// delivered events.
type eventSet struct {
	mock.EventSet
	queue chan nvml.EventData
	// registered and failWait are guarded by the Server's mu.
	registered map[int]uint64
	failWait   nvml.Return
}

func (s *Server) createEventSet() (nvml.EventSet, nvml.Return) {
	es := &eventSet{queue: make(chan nvml.EventData, 64), registered: map[int]uint64{}}
	es.WaitFunc = func(timeoutMs uint32) (nvml.EventData, nvml.Return) {
		s.mu.Lock()
		fail := es.failWait
		s.mu.Unlock()
		if fail != nvml.SUCCESS {
			return nvml.EventData{}, fail
		}
		t := time.NewTimer(time.Duration(timeoutMs) * time.Millisecond)
		defer t.Stop()
		select {
		case ev := <-es.queue:
			return ev, nvml.SUCCESS
		case <-t.C:
			return nvml.EventData{}, nvml.ERROR_TIMEOUT
		}
	}
	es.FreeFunc = func() nvml.Return {
		s.mu.Lock()
		defer s.mu.Unlock()
		for i, other := range s.sets {
			if other == es {
				s.sets = append(s.sets[:i], s.sets[i+1:]...)
				return nvml.SUCCESS
			}
		}
		return nvml.ERROR_INVALID_ARGUMENT
	}
	s.mu.Lock()
	s.sets = append(s.sets, es)
	s.mu.Unlock()
	return es, nvml.SUCCESS
}

// extendEvents lets a GPU tell its event types and register them on a set.
func (s *Server) extendEvents(g *gpu) {
	d := g.dev
	d.GetSupportedEventTypesFunc = func() (uint64, nvml.Return) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if g.noEventTypes {
			return 0, nvml.ERROR_NOT_SUPPORTED
		}
		return supportedEvents, nvml.SUCCESS
	}
	d.RegisterEventsFunc = func(types uint64, set nvml.EventSet) nvml.Return {
		s.mu.Lock()
		defer s.mu.Unlock()
		es, ok := set.(*eventSet)
		switch {
		case !ok:
			return nvml.ERROR_INVALID_ARGUMENT
		case g.noEventTypes || g.refuseRegister || types&^supportedEvents != 0:
			return nvml.ERROR_NOT_SUPPORTED
		}
		es.registered[g.index] |= types
		return nvml.SUCCESS
	}
}

// UnsupportedEvents makes GPU i answer ERROR_NOT_SUPPORTED when asked for its event types.
func (s *Server) UnsupportedEvents(i int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gpuAt(i).noEventTypes = true
}

// RefuseEventRegistration makes GPU i list its event types but refuse to register them
// (ERROR_NOT_SUPPORTED), as GPUs too old for health checks do.
func (s *Server) RefuseEventRegistration(i int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gpuAt(i).refuseRegister = true
}

// FailEventWait makes every event set's Wait return r from now on.
func (s *Server) FailEventWait(r nvml.Return) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, es := range s.sets {
		es.failWait = r
	}
}

// Inject delivers an event of type eventType about GPU i (inside GPU instance gi and
// compute instance ci, or NoInstance for both) to every set that registered the type
// for the GPU. It returns how many sets received it.
func (s *Server) Inject(i int, eventType, data uint64, gi, ci uint32) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.gpuAt(i)
	n := 0
	for _, es := range s.sets {
		if es.registered[i]&eventType == 0 {
			continue
		}
		select {
		case es.queue <- nvml.EventData{Device: g.dev, EventType: eventType, EventData: data, GpuInstanceId: gi, ComputeInstanceId: ci}:
			n++
		default: // a full queue drops the event, as a slow reader of NVML would miss it
		}
	}
	return n
}

// InjectXID delivers XID xid on GPU i, inside GPU instance gi (NoInstance: the whole
// GPU; the agent's GPU instances hold one compute instance, ID 0).
func (s *Server) InjectXID(i int, xid uint64, gi uint32) int {
	return s.Inject(i, nvml.EventTypeXidCriticalError, xid, gi, computeOf(gi))
}

// InjectDoubleBitECC delivers a double-bit ECC error on GPU i, inside GPU instance gi
// (NoInstance: the whole GPU).
func (s *Server) InjectDoubleBitECC(i int, gi uint32) int {
	return s.Inject(i, nvml.EventTypeDoubleBitEccError, 0, gi, computeOf(gi))
}

func computeOf(gi uint32) uint32 {
	if gi == NoInstance {
		return NoInstance
	}
	return 0
}
