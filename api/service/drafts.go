package service

import (
	"github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/api/rpc"
)

// draftMethods are workflow.drafts.*: the stateless edits and checks of
// a draft document passed whole, stored nowhere (their handlers are
// beside the workspace edits they share: document_edits.go,
// workspaces.go, compile.go).
func (s *Service) draftMethods() map[string]rpc.Method {
	return map[string]rpc.Method{
		protocol.MethodDraftsPatch:                forAuthor(s.patchDraft),
		protocol.MethodDraftsCreateFromCapability: forAuthor(s.createFromCapability),
		protocol.MethodDraftsValidate:             forRead(s.validateDraft),
	}
}
