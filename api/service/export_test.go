package service

// OpenSubscriptions is how many subscriptions h holds.
func (h *Hub) OpenSubscriptions() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}

// Buffered reports how many events subscription id holds undelivered and
// whether it lags; ok is false once it has ended.
func (h *Hub) Buffered(id string) (n int, lagging, ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s, ok := h.subs[id]
	if !ok {
		return 0, false, false
	}
	return len(s.buf), s.lagReason != "", true
}
