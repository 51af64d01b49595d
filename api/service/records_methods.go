package service

import (
	"github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/api/rpc"
)

// recordMethods are artifact and deployment deletion, artifacts.save, capabilities.call, sources and the admin event log.
func (s *Service) recordMethods() map[string]rpc.Method {
	return map[string]rpc.Method{
		protocol.MethodArtifactsSave:     forAuthor(s.saveWholeArtifact),
		protocol.MethodArtifactsDelete:   forAuthor(s.deleteArtifact),
		protocol.MethodDeploymentsDelete: forAuthor(s.deleteDeployment),
		protocol.MethodCapabilitiesCall:  forRun(s.callCapability),
		protocol.MethodSourcesList:       forRead(s.listSources),
		protocol.MethodSourcesInspect:    forRead(s.inspectSource),
		protocol.MethodSourcesDiagnose:   forRead(s.diagnoseSource),
		protocol.MethodAdminEventsList:   forAdmin(s.listEvents),
	}
}
