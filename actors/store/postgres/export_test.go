package postgres

// MaxJournalRows is maxJournalRows, for the tests of the journal.
const MaxJournalRows = maxJournalRows
