package service

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strconv"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/suggest"
	"github.com/mcpflow/mcpflow/api/jsonrpc"
	"github.com/mcpflow/mcpflow/api/rpc"
)

// suggestLimit bounds how many records of a kind a suggestion reads.
const suggestLimit = 1000

// unknownID matches the message of a KeyError about an unknown id, as
// notFound and storeErr word it: `unknown deployment "visit"`, `unknown
// artifact "a" version 2`.
var unknownID = regexp.MustCompile(`^unknown (deployment|workflow run|artifact|draft workspace|source|connection|workflow capability|auth record) ("(?:[^"\\]|\\.)*")`)

// suggesting wraps every method of table so that a KeyError about an
// unknown id says which existing id is nearest ("did you mean"), whichever
// handler or package raised it.
func (s *Service) suggesting(table map[string]rpc.Method) {
	for name, m := range table {
		h := m.Handler
		m.Handler = func(ctx context.Context, raw json.RawMessage) (any, error) {
			res, err := h(ctx, raw)
			if err != nil {
				err = s.withSuggestion(ctx, err)
			}
			return res, err
		}
		table[name] = m
	}
}

// withSuggestion adds the nearest existing id to a KeyError about an
// unknown one; any other error is returned as it is.
func (s *Service) withSuggestion(ctx context.Context, err error) error {
	e, ok := errors.AsType[*jsonrpc.Error](err)
	if !ok || e.Code != jsonrpc.OperationFailed {
		return err
	}
	d, ok := e.Data.(jsonrpc.ErrorData)
	if !ok || d.Code != codeNotFound {
		return err
	}
	m := unknownID.FindStringSubmatch(d.Message)
	if m == nil {
		return err
	}
	id, qerr := strconv.Unquote(m[2])
	if qerr != nil {
		return err
	}
	hint := suggest.DidYouMean(id, s.knownIDs(ctx, m[1]))
	if hint == "" {
		return err
	}
	return jsonrpc.Failed(codeNotFound, d.Message+hint)
}

// knownIDs are the ids of what exists of a kind, for a suggestion; nil
// when they cannot be read.
func (s *Service) knownIDs(ctx context.Context, kind string) []string {
	var ids []string
	switch kind {
	case "deployment":
		ds, _ := s.Store.ListDeployments(ctx)
		for _, d := range ds {
			ids = append(ids, d.ID)
		}
	case "workflow run":
		runs, _, _ := s.Store.ListRuns(ctx, store.RunQuery{Limit: suggestLimit})
		for _, r := range runs {
			ids = append(ids, r.ID)
		}
	case "artifact":
		as, _, _ := s.Store.ListArtifacts(ctx, store.ArtifactQuery{Limit: suggestLimit})
		for _, a := range as {
			ids = append(ids, a.ID)
		}
	case "draft workspace":
		ws, _ := s.Store.ListWorkspaces(ctx)
		for _, w := range ws {
			ids = append(ids, w.ID)
		}
	case "source":
		for _, src := range s.sources() {
			ids = append(ids, src.status.ID)
		}
	case "connection":
		for _, c := range s.connections() {
			ids = append(ids, c.ID)
		}
	case "workflow capability":
		for _, c := range s.capabilities().Matching("", "") {
			ids = append(ids, c.Name)
		}
	case "auth record":
		recs, _ := s.Store.ListAuth(ctx)
		for _, r := range recs {
			ids = append(ids, r.ID)
		}
	}
	return ids
}
