package scdl

import (
	"errors"
	"testing"
)

// A member of an archive in a bucket is an object under the archive's prefix: a path that
// would leave the prefix is refused as locally (ErrMember), before any request.
func TestArchiveMemberURL(t *testing.T) {
	a := archive{dir: "s3://b/x.scdl"}
	for rel, want := range map[string]string{
		"header.sch":                            "s3://b/x.scdl/header.sch",
		"var_features/dataframe_0.parquet":      "s3://b/x.scdl/var_features/dataframe_0.parquet",
		"var_features/cumulative_sum_index.npy": "s3://b/x.scdl/var_features/cumulative_sum_index.npy",
	} {
		if got, err := a.url(rel); err != nil || got != want {
			t.Errorf("url(%q) = %q, %v, want %q", rel, got, err, want)
		}
	}
	for _, rel := range []string{"", "..", "../y.scdl/header.sch", "var_features/../../y", "/etc/passwd", "./header.sch", "a//b", "a/"} {
		if got, err := a.url(rel); !errors.Is(err, ErrMember) {
			t.Errorf("url(%q) = %q, %v, want ErrMember", rel, got, err)
		}
	}
}
