package authserver

import "time"

// GrantInfo is one grant as Settings lists it: no token, no hash.
type GrantInfo struct {
	ID         string    `json:"id"`
	ClientID   string    `json:"clientId"`
	ClientName string    `json:"clientName"`
	Device     string    `json:"device"`
	Scopes     []string  `json:"scopes"`
	CreatedAt  time.Time `json:"createdAt"`
	LastUsed   time.Time `json:"lastUsed,omitzero"`
}
