package memstore

// SetAfterDeleteBatch installs fn to run after each batch of
// DeleteInteractions.
func (s *Store) SetAfterDeleteBatch(fn func()) { s.afterDeleteBatch = fn }
