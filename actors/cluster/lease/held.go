package lease

// HeldQuery is the SQL query of the fence on an owner's new work: it
// yields one row while owner holds a live lease on key, by the database's
// clock_timestamp(), and none otherwise. The row it yields it locks FOR
// SHARE until the transaction that runs it ends, so that no other owner
// can take the key (Acquire updates the row) before that transaction has
// committed: whatever the transaction writes is committed while owner
// still holds the key, and so seen by whoever takes the key next. key and
// owner are SQL expressions, such as the statement's parameters ("$1").
//
// A store whose writes must be fenced so (the postgres store's, see its
// WithMembership) takes the query from here rather than spelling the
// leases table out itself.
func HeldQuery(key, owner string) string {
	return `SELECT FROM leases WHERE key = ` + key + ` AND owner = ` + owner +
		` AND expires_at > clock_timestamp() FOR SHARE`
}
