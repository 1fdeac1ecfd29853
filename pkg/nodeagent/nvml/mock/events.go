package mock

import (
	"time"

	"github.com/gantry-sched/gantry/pkg/nodeagent/nvml"
)

// EventSet is the mock's event set: a buffered queue that InjectXID/InjectECC fill.
type EventSet struct {
	srv    *Server
	ch     chan nvml.EventData
	closed bool
}

var _ nvml.EventSet = (*EventSet)(nil)

// eventBuffer bounds the events queued per set; the mock drops events beyond it, as a
// slow reader of real NVML would miss them.
const eventBuffer = 64

// EventSetCreate makes an empty set.
func (s *Server) EventSetCreate() (nvml.EventSet, nvml.Return) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.ready(); r != nvml.SUCCESS {
		return nil, r
	}
	es := &EventSet{srv: s, ch: make(chan nvml.EventData, eventBuffer)}
	s.eventSets = append(s.eventSets, es)
	return es, nvml.SUCCESS
}

// Wait returns the next event, or ERROR_TIMEOUT after timeoutMs. The timer is the
// mock standing in for the driver's blocking wait; tests never assert on its length.
func (e *EventSet) Wait(timeoutMs uint32) (nvml.EventData, nvml.Return) {
	t := time.NewTimer(time.Duration(timeoutMs) * time.Millisecond)
	defer t.Stop()
	select {
	case ev, ok := <-e.ch:
		if !ok {
			return nvml.EventData{}, nvml.ERROR_UNINITIALIZED
		}
		return ev, nvml.SUCCESS
	case <-t.C:
		return nvml.EventData{}, nvml.ERROR_TIMEOUT
	}
}

// Free closes the set; further events are not delivered to it.
func (e *EventSet) Free() nvml.Return {
	e.srv.mu.Lock()
	defer e.srv.mu.Unlock()
	if e.closed {
		return nvml.ERROR_INVALID_ARGUMENT
	}
	e.closed = true
	close(e.ch)
	return nvml.SUCCESS
}

// InjectXID raises an XID critical-error event on GPU index (gi: the GPU instance it
// concerns, nvml.NoInstance for the whole GPU). It reports how many sets received it.
func (s *Server) InjectXID(index int, xid uint64, gi uint32) int {
	return s.inject(index, nvml.EventTypeXidCriticalError, xid, gi)
}

// InjectECC raises a double-bit ECC error event on GPU index.
func (s *Server) InjectECC(index int) int {
	return s.inject(index, nvml.EventTypeDoubleBitEccError, 0, nvml.NoInstance)
}

func (s *Server) inject(index int, typ, data uint64, gi uint32) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.gpus[index]
	n := 0
	for _, es := range s.eventSets {
		if es.closed || d.registered[es]&typ == 0 {
			continue
		}
		select {
		case es.ch <- nvml.EventData{Device: d, EventType: typ, EventData: data, GpuInstanceID: gi, ComputeInstanceID: nvml.NoInstance}:
			n++
		default:
		}
	}
	return n
}
