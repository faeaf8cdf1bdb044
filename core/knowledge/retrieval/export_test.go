package retrieval

// VectorIDs returns the chunk ids of the CAT's current vector generation
// and how many vectors it holds.
func (s *Service) VectorIDs(cat string) (ids []string, vectors int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.index(cat).current
	if g == nil {
		return nil, 0
	}
	return append([]string(nil), g.ids...), len(g.vecs)
}
