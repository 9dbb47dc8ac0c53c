package sqlite

// Commits is how many transactions the store has committed.
func (s *SQLite) Commits() int64 { return s.commits.Load() }

// HoldCommits keeps every write waiting until release is called, so that a
// test can line writes up for one commit.
func (s *SQLite) HoldCommits() (release func()) {
	s.wmu.Lock()
	return s.wmu.Unlock
}

// Queued is how many writes wait for a commit.
func (s *SQLite) Queued() int {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	return len(s.queue)
}

// SetSweepBatch sets how many responses one sweep transaction takes on,
// until restore.
func SetSweepBatch(n int) (restore func()) {
	old := sweepBatch
	sweepBatch = n
	return func() { sweepBatch = old }
}
