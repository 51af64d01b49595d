package edge

// OutboxStats returns the messages and bytes c has produced and not yet
// written.
func OutboxStats(c *Conn) (int, int64) { return c.out.stats() }

// OpenClients returns the number of client addresses with a connection or
// a request open; a connection leaves once all its goroutines have
// returned.
func OpenClients(s *Server) int { return s.clients.size() }
