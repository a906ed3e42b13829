package app

import "testing"

func TestControlTableIsValid(t *testing.T) {
	if err := ValidateControls(); err != nil {
		t.Fatal(err)
	}
}
