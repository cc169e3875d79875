package recipe

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/mldf/convert/encoders"
	"github.com/mldf/convert/sample"
)

// The fields of a recipe are checked and built against the registered field types
// (encoders.Register): the option keys a type takes, their defaults and checks, and the
// constructor. The recipe knows no field type's options by name.

// fieldBaseKeys are the keys of every field; the others are options of some types.
var fieldBaseKeys = []string{"name", "type", "from", "required"}

// fieldOptionKeys returns the option keys of a field, in the order of the Field struct.
func fieldOptionKeys() []string {
	t := reflect.TypeFor[Field]()
	var keys []string
	for i := range t.NumField() {
		if key := yamlKey(t.Field(i)); key != "" && !slices.Contains(fieldBaseKeys, key) {
			keys = append(keys, key)
		}
	}
	return keys
}

func yamlKey(f reflect.StructField) string {
	key, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	if key == "-" {
		return ""
	}
	return key
}

// fieldOptions returns the options of field i of the recipe, as the field types take them.
func (r *Recipe) fieldOptions(i int) *encoders.Options {
	at := []string{"fields", "#" + strconv.Itoa(i)}
	values := map[string]any{}
	v := reflect.ValueOf(r.Fields[i])
	for j := range v.NumField() {
		key := yamlKey(v.Type().Field(j))
		f := v.Field(j)
		if key == "" || slices.Contains(fieldBaseKeys, key) || f.IsZero() {
			continue
		}
		if f.Kind() == reflect.Pointer {
			f = f.Elem()
		}
		switch f.Kind() {
		case reflect.Bool:
			values[key] = f.Bool()
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			values[key] = f.Int()
		case reflect.Float32, reflect.Float64:
			values[key] = f.Float()
		case reflect.String:
			values[key] = f.String()
		case reflect.Slice:
			values[key] = f.Interface()
		}
	}
	return encoders.NewOptions(values,
		func(key string) bool { return r.has(append(at, key)...) },
		func(key string) bool { return r.refused(append(at, key)...) })
}

// setFieldOptions writes options back into field i (its defaults filled in).
func (r *Recipe) setFieldOptions(i int, o *encoders.Options) {
	v := reflect.ValueOf(&r.Fields[i]).Elem()
	for j := range v.NumField() {
		key := yamlKey(v.Type().Field(j))
		val, ok := o.Lookup(key)
		if key == "" || slices.Contains(fieldBaseKeys, key) || !ok {
			continue
		}
		f := v.Field(j)
		if f.Kind() == reflect.Pointer {
			p := reflect.New(f.Type().Elem())
			f.Set(p)
			f = p.Elem()
		}
		switch x := val.(type) {
		case bool:
			f.SetBool(x)
		case int64:
			f.SetInt(x)
		case float64:
			f.SetFloat(x)
		case string:
			f.SetString(x)
		default:
			if rv := reflect.ValueOf(val); rv.Type().AssignableTo(f.Type()) {
				f.Set(rv)
			}
		}
	}
}

// fieldDefaults fills in the defaults of field i's options, by its type.
func (r *Recipe) fieldDefaults(i int) {
	spec, ok := encoders.Lookup(r.Fields[i].Type)
	if !ok || spec.Defaults == nil {
		return
	}
	o := r.fieldOptions(i)
	spec.Defaults(o)
	r.setFieldOptions(i, o)
}

// buildField builds field i of the recipe.
func (r *Recipe) buildField(i int) (encoders.Field, error) {
	f := r.Fields[i]
	spec, ok := encoders.Lookup(f.Type)
	if !ok {
		return nil, fmt.Errorf("unknown field type %q", f.Type)
	}
	return spec.New(f.Name, r.fieldOptions(i))
}

// readKind is how a value typed in the input (a JSON value) is read for field i.
func (r *Recipe) readKind(i int) sample.Kind {
	spec, ok := encoders.Lookup(r.Fields[i].Type)
	if !ok || spec.Read == nil {
		return sample.KindString
	}
	return spec.Read(r.fieldOptions(i))
}

// Applies reports whether the option key (a recipe key such as "max_resolution") applies to a
// field of type typ.
func Applies(typ, key string) bool {
	spec, ok := encoders.Lookup(typ)
	return ok && spec.Takes(key)
}
