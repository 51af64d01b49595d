package service

// stoppedBy reports whether done is closed, without waiting.
func stoppedBy(done <-chan struct{}) bool {
	select {
	case <-done:
		return true
	default:
		return false
	}
}
