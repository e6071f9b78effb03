package server

import (
	"strconv"

	"basalt/internal/store"
)

// keyspaceEvents publishes the keyspace notifications of a committed batch
// (store.NotifyListener): for each event, as Redis does, the event name on
// __keyspace@<db>__:<key> (with K) and then the key on
// __keyevent@<db>__:<event> (with E). Every node calls it for the batches
// it applies, so a subscriber hears of the writes of the whole group on
// whichever node it is connected to. The hub's lock is taken once for the
// batch, so the events of a batch reach every subscriber together and in
// order. Messages of PUBLISH records come in the same stream, in order.
func (h *Hub) keyspaceEvents(flags store.NotifyFlags, events []store.Event) {
	var channel []byte
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, e := range events {
		if e.Publish {
			n := h.publishLocked(kindChannel, e.Key, []byte(e.Name))
			if e.Receivers != nil {
				e.Receivers(n)
			}
			continue
		}
		db := strconv.Itoa(e.DB)
		if flags&store.NotifyKeyspace != 0 {
			channel = append(append(append(append(channel[:0], "__keyspace@"...), db...), "__:"...), e.Key...)
			h.publishLocked(kindChannel, channel, []byte(e.Name))
		}
		if flags&store.NotifyKeyevent != 0 {
			channel = append(append(append(append(channel[:0], "__keyevent@"...), db...), "__:"...), e.Name...)
			h.publishLocked(kindChannel, channel, e.Key)
		}
	}
}
