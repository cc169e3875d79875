package export

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/mldf/convert/internal/quote"

	"github.com/mldf/convert/format/mldf"
)

// FolderOptions configure Folder.
type FolderOptions struct {
	// Image is the image field; "" means the field called "image", else the only image field.
	Image string
	// Label is the INT label field; "" means the field called "label", else the only INT field.
	Label string
	// Classes are class names by field name, for a file that does not hold its own (those of
	// FILE.classes.json beside a file written before names went into the file).
	Classes map[string][]string
}

// Folder writes r's samples to dir as an ImageFolder: dir/<class>/<index>.<ext>. The class
// folder is the label's class name when the label field has class names (reader.ClassNames,
// else FolderOptions.Classes) that can all be folder names, else the label number
// zero-padded to at least 4 digits; the file name is the sample index zero-padded to at least 6 digits, so sorted names keep
// the file's order and `convert images dir` reads the samples back in the same order. JPEG
// and PNG payloads are written as stored; raw images are encoded to PNG.
//
// dir must be absent or empty. Samples without an image payload are skipped (Result.Skipped);
// fields other than the image and the label are not written (Result.Ignored). Each image file
// appears atomically; an error leaves the files written before it.
func Folder(ctx context.Context, r *mldf.Reader, dir string, o FolderOptions) (Result, error) {
	var res Result
	img, err := pickField(r, o.Image, "image", "image", "--field", isImage)
	if err != nil {
		return res, err
	}
	lab, err := pickField(r, o.Label, "label", "INT label", "--label", func(t mldf.TypeID) bool { return t == mldf.TypeInt })
	if err != nil {
		return res, err
	}
	for k, fd := range r.Fields() {
		if k != img && k != lab {
			res.Ignored = append(res.Ignored, fd.Name)
		}
	}
	n := r.NumSamples()
	// One pass over the metadata for the label width; labels must be folder names.
	maxLabel := int64(0)
	for i := range n {
		v, err := r.Int(i, lab)
		if err != nil {
			return res, err
		}
		if v < 0 {
			return res, fmt.Errorf("%s: %w: label %d is negative (no class folder for it)", where(r, i, lab), ErrValue, v)
		}
		maxLabel = max(maxLabel, v)
	}
	labelWidth := max(4, len(strconv.FormatInt(maxLabel, 10)))
	classDir := func(label int64) string { return fmt.Sprintf("%0*d", labelWidth, label) }
	names, err := r.ClassNames(lab)
	if err != nil {
		return res, err
	}
	if names == nil {
		names = o.Classes[r.Fields()[lab].Name]
	}
	if names != nil && int64(len(names)) > maxLabel {
		if bad := unsafeFolderName(names); bad != "" {
			res.Notes = append(res.Notes, fmt.Sprintf("class folders are numbered: the class name %s cannot be a folder name", quote.Q(bad)))
		} else {
			classDir = func(label int64) string { return names[label] }
			if !slices.IsSorted(names) {
				res.Notes = append(res.Notes, "the class names are not in sorted order: an ImageFolder reader (convert images, torchvision) numbers the classes by sorted name, so the labels it reads differ from the file's")
			}
		}
	}
	indexWidth := max(6, len(strconv.Itoa(max(n-1, 0))))
	if err := prepareDir(dir); err != nil {
		return res, err
	}
	made := map[int64]bool{}
	for i := range n {
		if err := checkCtx(ctx, i); err != nil {
			return res, err
		}
		m, p, err := r.Image(i, img)
		if err != nil {
			return res, err
		}
		if len(p) == 0 {
			res.Skipped++
			continue
		}
		b, ext, err := imageFile(m, p)
		if err != nil {
			return res, fmt.Errorf("%s: %w", where(r, i, img), err)
		}
		label, _ := r.Int(i, lab)
		sub := filepath.Join(dir, classDir(label))
		if !made[label] {
			if err := os.MkdirAll(sub, 0o755); err != nil {
				return res, fmt.Errorf("export: %w", err)
			}
			made[label] = true
		}
		path := filepath.Join(sub, fmt.Sprintf("%0*d.%s", indexWidth, i, ext))
		if err := writeFileAtomic(path, b); err != nil {
			return res, fmt.Errorf("%s: %w", where(r, i, img), err)
		}
		res.Samples++
		res.Files++
		res.Bytes += int64(len(b))
	}
	return res, nil
}

// unsafeFolderName returns the first name that cannot be a folder name on its own ("", ".",
// "..", a name with a slash, backslash or NUL), or "".
func unsafeFolderName(names []string) string {
	for _, n := range names {
		if n == "" || n == "." || n == ".." || strings.ContainsAny(n, "/\\\x00") {
			return n
		}
	}
	return ""
}
