package rag

import "errors"

// NewQdrant connects to Qdrant over gRPC (placeholder until the backend lands).
func NewQdrant(addr, apiKey string) (Backend, error) {
	return nil, errors.New("backend qdrant: not available in this build")
}
