package loader

import (
	"context"
	"encoding/json"
	"testing"
)

// FuzzPlan compiles arbitrary plans against files with every kind of field (MLDF, and a
// .beton of every FFCV type) and runs those that compile on two samples: errors, never a
// panic.
func FuzzPlan(f *testing.F) {
	for _, s := range []string{scalarPlan, rrcPlan,
		`{"fields":[{"field":"arr","ops":[{"op":"NDArray","dtype":"<f4","shape":[2,3]}]}]}`,
		`{"fields":[{"field":"image","ops":[{"op":"CenterCrop","size":[3,5],"ratio":0.5},{"op":"Normalize","mean":[1e300],"std":[1e-300],"dtype":"float16"},{"op":"ToCHW"}]}]}`,
		`{"fields":[{"field":"image","ops":[{"op":"RandomResizedCrop","size":1,"scale":[1e-9,1e-9],"ratio":[1e-9,1e9]}]}]}`,
		`{"fields":[{"field":"image","ops":[{"op":"Resize","size":[16384,1]}]}]}`,
	} {
		f.Add(s)
	}
	for _, s := range betonPlans {
		f.Add(s)
	}
	img := imageFile(f, 2, 16, 12, 1)
	scal := scalarFile(f, 4)
	_, bet := convertBoth(f, 2)
	f.Fuzz(func(t *testing.T, plan string) {
		var spec PlanSpec
		if json.Unmarshal([]byte(plan), &spec) != nil {
			return
		}
		for _, path := range []string{img, scal, bet} {
			l, err := Open(context.Background(), path, Options{Threads: 2})
			if err != nil {
				t.Fatal(err)
			}
			p, err := l.NewPlan(spec)
			if err == nil {
				for _, o := range p.Outputs() {
					if o.ItemSize() > 1<<26 {
						l.Close()
						return
					}
				}
				_, _ = runT(t, p, []int64{0, 1}, 0)
			}
			l.Close()
		}
	})
}
