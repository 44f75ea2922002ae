package mirrors_test

import (
	"testing"

	"github.com/wmcon/wmcon/testsupport/actiontest"
)

// TestMain starts the real API server these tests share.
func TestMain(m *testing.M) { actiontest.Main(m) }
