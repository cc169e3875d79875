package main

import (
	"errors"
	"slices"
	"strings"

	"github.com/mldf/convert/recipe"
)

// parseDedup turns --dedup FIELD[,FIELD...][:MODE] into the recipe's dedup key.
func parseDedup(s string) *recipe.Dedup {
	fields, mode, _ := strings.Cut(s, ":")
	return &recipe.Dedup{Fields: strings.Split(fields, ","), Mode: mode}
}

// checkDedup checks the form of --dedup (the fields are checked against the recipe's).
func checkDedup(s string) error {
	d := parseDedup(s)
	if slices.Contains(d.Fields, "") {
		return errors.New("want FIELD[,FIELD...][:drop|report], such as image or image,label:report")
	}
	if d.Mode != "" && !slices.Contains(recipe.DedupModes, d.Mode) {
		return errors.New("the mode after ':' is drop or report")
	}
	return nil
}
