package main

import (
	"testing"

	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/recipe"
)

// TestClassesSuffix: the side file inspect names (mldf.ClassesSuffix) is the one the
// recipe writes.
func TestClassesSuffix(t *testing.T) {
	if mldf.ClassesSuffix != recipe.ClassesSuffix {
		t.Errorf("mldf.ClassesSuffix %q, recipe.ClassesSuffix %q", mldf.ClassesSuffix, recipe.ClassesSuffix)
	}
}
