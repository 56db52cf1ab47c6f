package a2a

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
)

// Decode is CheckJSON, CheckFields and json.Unmarshal in one pass over
// b: it checks b as CheckJSON does (one JSON value, well-formed, valid
// UTF-8, at most MaxJSONDepth deep, no two keys of an object that fold
// alike), refuses a key that names a field of v other than exactly, as
// CheckFields does, and decodes b into v (a non-nil pointer) as
// json.Unmarshal would. A request body was read three times before
// (issue 32): the checks, the field names, then encoding/json, which
// scans every value it hands to a type's UnmarshalJSON again.
//
// Its errors are theirs, in their order: a *SyntaxError or *ShapeError
// anywhere in b first, then the first *FieldError, then the first value
// that does not fit its field, as a *json.UnmarshalTypeError whose Field
// is the value's path in b (message.parts[0].text), or the error of a
// type's own UnmarshalJSON. Types whose pointer has a jsonShape (Message,
// Part, ...) are decoded into their shape, in the same pass; other
// json.Unmarshaler types get the bytes of their value, checked.
func Decode(b []byte, v any) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return &json.InvalidUnmarshalError{Type: reflect.TypeOf(v)}
	}
	d := decoder{checker: checker{b: b}}
	d.ws()
	if d.i >= len(b) {
		return &SyntaxError{Offset: d.i, Msg: "empty body, expected a JSON value"}
	}
	if err := d.value(rv.Elem(), 0, ""); err != nil {
		return err
	}
	d.ws()
	if d.i != len(b) {
		return &SyntaxError{Offset: d.i, Msg: "unexpected data after the JSON value"}
	}
	if d.fieldErr != nil {
		return d.fieldErr
	}
	return d.valueErr
}

// decoder is one Decode: the checker's scan, and the first errors of the
// kinds that wait for the whole body to be checked.
type decoder struct {
	checker
	fieldErr error // the first key that names a field other than exactly
	valueErr error // the first value that does not fit
}

// typeErr keeps the first value that does not fit t.
func (d *decoder) typeErr(what string, t reflect.Type, path string) {
	if d.valueErr == nil {
		d.valueErr = &json.UnmarshalTypeError{Value: what, Type: t, Offset: int64(d.i), Field: path}
	}
}

// shapeSetter is a type decoded into its jsonShape, then set from it.
type shapeSetter interface {
	jsonShaper
	setFromShape(shape any)
}

var (
	shapeSetterType = reflect.TypeFor[shapeSetter]()
	rawMessageType  = reflect.TypeFor[json.RawMessage]()
	numberType      = reflect.TypeFor[json.Number]()
)

// value decodes the JSON value at d.i into v (a settable value, or the
// zero Value to check only), depth levels deep, at path. Its error is a
// syntax or shape error: the others wait in d.
func (d *decoder) value(v reflect.Value, depth int, path string) error {
	if d.i >= len(d.b) {
		return d.syntax("unexpected end of JSON")
	}
	if !v.IsValid() {
		return d.checker.value(depth)
	}
	ch := d.b[d.i]
	if ch == 'n' {
		if err := d.lit("null"); err != nil {
			return err
		}
		d.setNull(v)
		return nil
	}
	// Through pointers, allocating; then a shape, an Unmarshaler of
	// its own, or the value itself.
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		if v.Type().Implements(shapeSetterType) {
			return d.shaped(v, depth, path)
		}
		v = v.Elem()
	}
	if v.Type() == rawMessageType {
		start := d.i
		if err := d.checker.value(depth); err != nil {
			return err
		}
		v.SetBytes(append([]byte(nil), d.b[start:d.i]...))
		return nil
	}
	if pv := v.Addr(); pv.Type().Implements(shapeSetterType) {
		return d.shaped(pv, depth, path)
	} else if u, ok := pv.Interface().(json.Unmarshaler); ok {
		start := d.i
		if err := d.checker.value(depth); err != nil {
			return err
		}
		if err := u.UnmarshalJSON(d.b[start:d.i]); err != nil && d.valueErr == nil {
			d.valueErr = err
		}
		return nil
	} else if u, ok := pv.Interface().(encoding.TextUnmarshaler); ok && ch == '"' {
		s, err := d.str()
		if err != nil {
			return err
		}
		if err := u.UnmarshalText(s); err != nil && d.valueErr == nil {
			d.valueErr = err
		}
		return nil
	}
	switch {
	case ch == '{':
		return d.object(v, depth+1, path)
	case ch == '[':
		return d.array(v, depth+1, path)
	case ch == '"':
		return d.string(v, path)
	case ch == 't' || ch == 'f':
		return d.bool(v, ch == 't', path)
	case ch == '-' || ch >= '0' && ch <= '9':
		return d.number(v, path)
	}
	return d.syntax(fmt.Sprintf("invalid character %q looking for a value", rune(ch)))
}

// setNull is what json.Unmarshal does with null: pointers, interfaces,
// maps and slices become nil, a json.RawMessage holds "null", the rest
// is left as it is.
func (d *decoder) setNull(v reflect.Value) {
	switch {
	case v.Type() == rawMessageType:
		v.SetBytes([]byte("null"))
	case v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface || v.Kind() == reflect.Map || v.Kind() == reflect.Slice:
		v.SetZero()
	}
}

// shaped decodes into the jsonShape of pv's type, then sets pv from it.
func (d *decoder) shaped(pv reflect.Value, depth int, path string) error {
	s := pv.Interface().(shapeSetter)
	shape := reflect.New(reflect.TypeOf(s.jsonShape()).Elem())
	if err := d.value(shape, depth, path); err != nil {
		return err
	}
	s.setFromShape(shape.Interface())
	return nil
}

// object decodes an object into a struct, a map with string keys or an
// interface, checking its keys as CheckJSON and CheckFields do.
func (d *decoder) object(v reflect.Value, depth int, path string) error {
	if depth > MaxJSONDepth {
		return &ShapeError{Offset: d.i, Msg: fmt.Sprintf("JSON nested deeper than %d levels", MaxJSONDepth)}
	}
	var (
		fields fieldSet
		m      map[string]any // for an interface
	)
	switch {
	case v.Kind() == reflect.Struct:
		fields = fieldsOf(v.Type())
	case v.Kind() == reflect.Map && v.Type().Key().Kind() == reflect.String:
		if v.IsNil() {
			v.Set(reflect.MakeMap(v.Type()))
		}
	case v.Kind() == reflect.Interface && v.NumMethod() == 0:
		m = map[string]any{}
	default:
		d.typeErr("object", v.Type(), path)
		v = reflect.Value{}
	}
	d.i++ // {
	d.ws()
	if d.i < len(d.b) && d.b[d.i] == '}' {
		d.i++
		if m != nil {
			v.Set(reflect.ValueOf(m))
		}
		return nil
	}
	var seen foldedKeys
	for {
		d.ws()
		if d.i >= len(d.b) || d.b[d.i] != '"' {
			return d.syntax("expected a string key in object")
		}
		keyAt := d.i
		raw, err := d.str()
		if err != nil {
			return err
		}
		key := string(raw)
		if err := seen.add(key, keyAt); err != nil {
			return err
		}
		d.ws()
		if d.i >= len(d.b) || d.b[d.i] != ':' {
			return d.syntax("expected ':' after object key")
		}
		d.i++
		d.ws()
		if err := d.member(v, fields, m, key, depth, path); err != nil {
			return err
		}
		d.ws()
		if d.i >= len(d.b) {
			return d.syntax("unexpected end of JSON in object")
		}
		switch d.b[d.i] {
		case ',':
			d.i++
		case '}':
			d.i++
			if m != nil {
				v.Set(reflect.ValueOf(m))
			}
			return nil
		default:
			return d.syntax("expected ',' or '}' in object")
		}
	}
}

// member decodes the value of key into the object v decodes into.
func (d *decoder) member(v reflect.Value, fields fieldSet, m map[string]any, key string, depth int, path string) error {
	at := join(path, key)
	switch {
	case !v.IsValid():
		return d.checker.value(depth)
	case m != nil:
		var x any
		err := d.value(reflect.ValueOf(&x).Elem(), depth, at)
		m[key] = x
		return err
	case v.Kind() == reflect.Map:
		e := reflect.New(v.Type().Elem()).Elem()
		if err := d.value(e, depth, at); err != nil {
			return err
		}
		v.SetMapIndex(reflect.ValueOf(key).Convert(v.Type().Key()), e)
		return nil
	}
	if f, ok := fields.exact[key]; ok {
		return d.value(fieldByIndex(v, f.index), depth, at)
	}
	if name, ok := fields.folded[foldKey([]byte(key))]; ok && d.fieldErr == nil {
		d.fieldErr = &FieldError{Path: at, Field: name}
	}
	return d.checker.value(depth) // a field of no name: ignored
}

// fieldByIndex is the field at index of struct v, allocating the
// embedded pointers on the way.
func fieldByIndex(v reflect.Value, index []int) reflect.Value {
	for i, x := range index {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				v.Set(reflect.New(v.Type().Elem()))
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	return v
}
