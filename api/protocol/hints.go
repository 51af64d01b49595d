package protocol

// Hints are the manifest's WrapperAuthoringHintsPayload: how confidently a
// capability could be wrapped, and what the author still has to decide.
type Hints struct {
	CapabilityName           string             `json:"capability_name"`
	Confidence               string             `json:"confidence"`
	DeclaredOutcomes         []string           `json:"declared_outcomes"`
	SuggestedWrapperOutcomes []string           `json:"suggested_wrapper_outcomes"`
	OutcomePolicy            string             `json:"outcome_policy"`
	InputSchema              Object             `json:"input_schema"`
	StateSchema              Object             `json:"state_schema"`
	OutputSchema             Object             `json:"output_schema"`
	InputMap                 map[string]string  `json:"input_map"`
	OutputMap                map[string]string  `json:"output_map"`
	OutcomeCandidates        []OutcomeCandidate `json:"outcome_candidates"`
	MissingDecisions         []MissingDecision  `json:"missing_decisions"`
	Notes                    []string           `json:"notes"`
}

// OutcomeCandidate is a boolean output field that might become an outcome.
type OutcomeCandidate struct {
	Kind              string   `json:"kind"`
	Source            string   `json:"source"`
	CandidateOutcomes []string `json:"candidate_outcomes"`
	Confidence        string   `json:"confidence"`
	Automatic         bool     `json:"automatic"`
	Reason            string   `json:"reason"`
}

// MissingDecision is one choice the author still has to make.
type MissingDecision struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
}
