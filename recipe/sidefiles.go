package recipe

// WritesClasses reports whether the run writes a class-names file (OUTPUT.classes.json) beside
// its output: a Parquet source with string class labels. The file is written only beside a
// local output; the command refuses a bucket output for such a plan before any work.
func (p *Plan) WritesClasses() bool { return len(p.classes) > 0 }
