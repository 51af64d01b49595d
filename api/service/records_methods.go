package service

import "github.com/mcpflow/mcpflow/api/protocol"

// recordMethods are artifact and deployment deletion, artifacts.save, capabilities.call, sources and the admin event log.
func (s *Service) recordMethods() map[string]Handler {
	return map[string]Handler{
		protocol.MethodArtifactsSave:     handle(s.saveWholeArtifact),
		protocol.MethodArtifactsDelete:   handle(s.deleteArtifact),
		protocol.MethodDeploymentsDelete: handle(s.deleteDeployment),
		protocol.MethodCapabilitiesCall:  handle(s.callCapability),
		protocol.MethodSourcesList:       handle(s.listSources),
		protocol.MethodSourcesInspect:    handle(s.inspectSource),
		protocol.MethodSourcesDiagnose:   handle(s.diagnoseSource),
		protocol.MethodAdminEventsList:   handle(s.listEvents),
	}
}
