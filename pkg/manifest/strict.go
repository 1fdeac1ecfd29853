package manifest

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// unmarshalerType is json.Unmarshaler: types with their own decoding (resource.Quantity,
// metav1.Time, intstr.IntOrString) are checked by decoding the node with it.
var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// checkStrict walks v against Go type t and reports, with the exact path and line of the
// offending node, every unknown field and every value of the wrong type. It reports all
// problems of the object rather than stopping at the first, which encoding/json cannot
// do (and its unknown-field errors carry no path).
func checkStrict(v *value, t reflect.Type, path string, c errs) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if v == nil || v.kind == kindNull {
		return true // null leaves the zero value, as in encoding/json
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		return checkUnmarshaler(v, t, path, c)
	}
	switch t.Kind() {
	case reflect.Struct:
		return checkStruct(v, t, path, c)
	case reflect.Map:
		if !expect(v, kindObject, "an object", path, c) {
			return false
		}
		ok := true
		for _, k := range v.keys {
			ok = checkStrict(v.fields[k], t.Elem(), joinKey(path, k), c) && ok
		}
		return ok
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return expectScalar(v, "a base64 string", path, c, func(s any) bool { _, ok := s.(string); return ok })
		}
		if !expect(v, kindArray, "a list", path, c) {
			return false
		}
		ok := true
		for i, it := range v.items {
			ok = checkStrict(it, t.Elem(), joinIndex(path, i), c) && ok
		}
		return ok
	case reflect.String:
		return expectScalar(v, "a string", path, c, func(s any) bool { _, ok := s.(string); return ok })
	case reflect.Bool:
		return expectScalar(v, "true or false", path, c, func(s any) bool { _, ok := s.(bool); return ok })
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return checkInteger(v, path, c, "an integer", func(n string) error {
			_, err := strconv.ParseInt(n, 10, t.Bits())
			return err
		}, intRange(t.Bits()))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return checkInteger(v, path, c, "a non-negative integer", func(n string) error {
			_, err := strconv.ParseUint(n, 10, t.Bits())
			return err
		}, fmt.Sprintf("0 to %d", uint64(1)<<t.Bits()-1))
	case reflect.Float32, reflect.Float64:
		return expectScalar(v, "a number", path, c, func(s any) bool { _, ok := s.(json.Number); return ok })
	case reflect.Interface:
		return true
	}
	c.add(path, "cannot be decoded (unsupported type %s)", t)
	return false
}

func expect(v *value, k valueKind, want, path string, c errs) bool {
	if v.kind == k {
		return true
	}
	c.addAt(v.line, path, "wrong type: expected %s, got %s", want, v.describe())
	return false
}

func expectScalar(v *value, want, path string, c errs, ok func(any) bool) bool {
	if v.kind == kindScalar && ok(v.scalar) {
		return true
	}
	c.addAt(v.line, path, "wrong type: expected %s, got %s", want, v.describe())
	return false
}

// checkInteger accepts a whole number that parse takes. A whole number too large or too
// small for the field is out of range, not of the wrong type: the message says so and
// gives the field's range (span, e.g. "-2147483648 to 2147483647"), so a user who wrote
// 2147483648 is not told to write an integer.
func checkInteger(v *value, path string, c errs, want string, parse func(string) error, span string) bool {
	n, isNum := v.scalar.(json.Number)
	if v.kind != kindScalar || !isNum {
		c.addAt(v.line, path, "wrong type: expected %s, got %s", want, v.describe())
		return false
	}
	err := parse(string(n))
	if err == nil {
		return true
	}
	if errors.Is(err, strconv.ErrRange) {
		c.addAt(v.line, path, "number %s is out of range: this field holds an integer from %s", n, span)
		return false
	}
	c.addAt(v.line, path, "wrong type: expected %s, got %s", want, v.describe())
	return false
}

// intRange is the range of a signed integer of the given bits, for messages.
func intRange(bits int) string {
	most := int64(1)<<(bits-1) - 1
	return fmt.Sprintf("%d to %d", -most-1, most)
}

// checkUnmarshaler decodes the node with the type's own decoder and reports its error.
func checkUnmarshaler(v *value, t reflect.Type, path string, c errs) bool {
	raw, err := json.Marshal(v.toJSON())
	if err == nil {
		err = json.Unmarshal(raw, reflect.New(t).Interface())
	}
	if err != nil {
		c.addAt(v.line, path, "invalid value %s: %s", v.describe(), cleanJSONError(err))
		return false
	}
	return true
}

// cleanJSONError drops encoding/json's Go type names, which mean nothing to users.
func cleanJSONError(err error) string {
	s := err.Error()
	s = strings.TrimPrefix(s, "json: ")
	if i := strings.Index(s, "cannot unmarshal"); i >= 0 {
		return "wrong type"
	}
	return s
}

func checkStruct(v *value, t reflect.Type, path string, c errs) bool {
	if !expect(v, kindObject, "an object", path, c) {
		return false
	}
	fields := jsonFields(t)
	ok := true
	for _, k := range v.keys {
		ft, known := fields[k]
		if !known && c.unknownOK {
			continue
		}
		if !known {
			// Reported, but not fatal: decoding ignores the field, so the object's
			// other problems are still found and reported in the same run.
			c.addAt(v.fields[k].line, joinKey(path, k), "unknown field %q", k)
			continue
		}
		ok = checkStrict(v.fields[k], ft, joinKey(path, k), c) && ok
	}
	return ok
}

// jsonFields maps the json names of t's fields (inline embedded structs flattened, as
// encoding/json does) to their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" && opts == "" {
			continue
		}
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if f.Anonymous && name == "" && ft.Kind() == reflect.Struct {
			for k, sub := range jsonFields(ft) {
				if _, taken := out[k]; !taken {
					out[k] = sub
				}
			}
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}
