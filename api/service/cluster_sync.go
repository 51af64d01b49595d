package service

// RecordsChanged drops every prepared deployment: another node of the
// cluster wrote a deployment or an artifact. (What the other nodes change
// of the catalogs and sources, this node follows through the sources
// package: its CatalogSink's Reload and its Sources' Follow.)
func (s *Service) RecordsChanged() { s.recordsChanged() }
