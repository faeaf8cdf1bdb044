package memstore

// RemoveFirst removes the oldest interaction, as a deletion does, without
// going through Append.
func RemoveFirst(s *Store) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.interactions, s.seqs = s.interactions[1:], s.seqs[1:]
}
