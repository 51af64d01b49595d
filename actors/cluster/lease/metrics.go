package lease

// Results of a Keeper's Acquire, as Metrics.LeaseAcquisition is told them.
const (
	Acquired      = "acquired"       // the owner holds the key now
	HeldElsewhere = "held_elsewhere" // another owner holds a live lease on it (ErrHeld)
	AcquireFailed = "error"          // any other failure
)

// Metrics is told what a Keeper does with its leases (KeeperOptions):
// *metrics.Metrics is one, and the interface keeps this package free of
// Prometheus. The keeper calls it as it goes, LeasesHeld with its lock
// held so that the counts arrive in order: its methods must be quick and
// must not call the keeper.
type Metrics interface {
	// LeaseAcquisition counts an Acquire: Acquired, HeldElsewhere or
	// AcquireFailed.
	LeaseAcquisition(result string)
	// LeaseRenewal counts a renewal of every held lease (one statement),
	// ok or failed; a renewal that finds leases lost is ok.
	LeaseRenewal(ok bool)
	// LeasesLost counts n leases lost: a renewal found them ended, their
	// deadline passed, or a new tenure replaced them.
	LeasesLost(n int)
	// LeasesHeld says how many leases the keeper holds now: 0 once it
	// has stopped.
	LeasesHeld(n int)
}

// noMetrics is the Metrics of a keeper given none.
type noMetrics struct{}

func (noMetrics) LeaseAcquisition(string) {}
func (noMetrics) LeaseRenewal(bool)       {}
func (noMetrics) LeasesLost(int)          {}
func (noMetrics) LeasesHeld(int)          {}
