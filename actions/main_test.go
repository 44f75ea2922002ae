package actions_test

import (
	"testing"

	"github.com/wmcon/wmcon/testsupport/actiontest"
)

func TestMain(m *testing.M) { actiontest.Main(m) }
