package a2a

import (
	"encoding"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// encoding/json matches an object key to a struct field without regard to
// case, Unicode folding included: "MESSAGEID" and "meſſageId" (long s)
// both set messageId, and of two that fold alike the last one wins. The
// checks here refuse that before decoding, so that what a client meant and
// what kfa read cannot differ: CheckJSON refuses two keys of one object
// that fold alike, and CheckFields a key that names a field of the target
// type other than exactly.

// foldKey is the key as encoding/json compares it: each rune replaced by
// the smallest rune of its case-folding orbit (so "k", "K" and the Kelvin
// sign fold alike, and "s", "S" and the long s).
func foldKey(key []byte) string {
	ascii := true
	for _, ch := range key {
		if ch >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		b := make([]byte, len(key))
		for i, ch := range key {
			if 'a' <= ch && ch <= 'z' {
				ch -= 'a' - 'A'
			}
			b[i] = ch
		}
		return string(b)
	}
	return strings.Map(foldRune, string(key))
}

func foldRune(r rune) rune {
	for {
		next := unicode.SimpleFold(r)
		if next <= r {
			return next
		}
		r = next
	}
}

// FieldError is an object key that names a field of the type being decoded
// other than exactly.
type FieldError struct {
	Path  string // where the key is, as message.parts[0].TEXT
	Field string // the field it would have set
}

func (e *FieldError) Error() string { return e.Path + ": " + e.description() }

func (e *FieldError) description() string {
	return "is not a field name: field names are matched exactly, and this one differs from " +
		strconv.Quote(e.Field) + " only in case"
}

// Param is e as the InvalidParams error that names the key, its path
// prefixed with where the checked JSON sits in the request ("params.").
func (e *FieldError) Param(prefix string) *Error {
	return BadParam(prefix+e.Path, "%s", e.description())
}

// AsParam turns a *FieldError in err into the InvalidParams error that
// names the key (prefixed as Param does); any other error is returned as
// it is.
func AsParam(err error, prefix string) error {
	var fe *FieldError
	if errors.As(err, &fe) {
		return fe.Param(prefix)
	}
	return err
}

// jsonShaper is implemented by the types whose UnmarshalJSON decodes into
// another struct (their fields plus ProtoJSON's snake_case names):
// jsonShape returns a nil pointer of that struct, whose fields CheckFields
// then knows.
type jsonShaper interface{ jsonShape() any }

// CheckFields walks b, which CheckJSON accepted, along the Go type of v
// (what json.Unmarshal(b, v) would fill) and returns a *FieldError for the
// first object key that names a struct field other than exactly. Keys that
// name no field are left to the decoder, which ignores them; the contents
// of maps, json.RawMessage and other types that decode themselves are not
// struct fields and are not looked at.
func CheckFields(b []byte, v any) error {
	w := walker{checker: checker{b: b}}
	w.ws()
	return w.walk(reflect.TypeOf(v), "")
}

// Unmarshal is json.Unmarshal for untrusted JSON that CheckJSON accepted:
// it refuses a key that names a field of v other than exactly first.
func Unmarshal(b []byte, v any) error {
	if err := CheckFields(b, v); err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

type walker struct{ checker }

var (
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	shaperType          = reflect.TypeFor[jsonShaper]()
)

// target is what a JSON value decodes into, seen through pointers and
// shapes: a struct, map, slice or array to walk, or nil for a value whose
// contents are no struct fields.
func target(t reflect.Type) reflect.Type {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil {
		return nil
	}
	pt := reflect.PointerTo(t)
	if pt.Implements(shaperType) {
		return reflect.TypeOf(reflect.New(t).Interface().(jsonShaper).jsonShape()).Elem()
	}
	if pt.Implements(unmarshalerType) || pt.Implements(textUnmarshalerType) {
		return nil
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map, reflect.Slice, reflect.Array:
		return t
	}
	return nil
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// walk scans one value, the JSON of a t.
func (w *walker) walk(t reflect.Type, path string) error {
	t = target(t)
	if t == nil || w.i >= len(w.b) {
		return w.value(0)
	}
	switch ch := w.b[w.i]; {
	case ch == '{' && t.Kind() == reflect.Struct:
		fields := fieldsOf(t)
		return w.members(func(key string) error {
			if f, ok := fields.exact[key]; ok {
				return w.walk(f.typ, join(path, key))
			}
			if name, ok := fields.folded[foldKey([]byte(key))]; ok {
				return &FieldError{Path: join(path, key), Field: name}
			}
			return w.value(0)
		})
	case ch == '{' && t.Kind() == reflect.Map:
		return w.members(func(key string) error { return w.walk(t.Elem(), join(path, key)) })
	case ch == '[' && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) && t.Elem().Kind() != reflect.Uint8:
		n := 0
		return w.elements(func() error {
			err := w.walk(t.Elem(), path+"["+strconv.Itoa(n)+"]")
			n++
			return err
		})
	}
	return w.value(0)
}

// members scans an object, calling member with each key once the scan is
// at its value.
func (w *walker) members(member func(key string) error) error {
	w.i++ // {
	for {
		w.ws()
		if w.b[w.i] == '}' {
			w.i++
			return nil
		}
		if w.b[w.i] == ',' {
			w.i++
			w.ws()
		}
		key, err := w.str()
		if err != nil {
			return err
		}
		w.ws()
		w.i++ // :
		w.ws()
		if err := member(string(key)); err != nil {
			return err
		}
	}
}

// elements scans an array, calling element at each element.
func (w *walker) elements(element func() error) error {
	w.i++ // [
	for {
		w.ws()
		if w.b[w.i] == ']' {
			w.i++
			return nil
		}
		if w.b[w.i] == ',' {
			w.i++
			w.ws()
		}
		if err := element(); err != nil {
			return err
		}
	}
}

// fieldSet is what encoding/json decodes into a struct: its fields by
// exact JSON name, and those names by folded name.
type fieldSet struct {
	exact  map[string]field
	folded map[string]string
}

// field is a struct field as encoding/json decodes into it: its type and
// its index (through embedded structs).
type field struct {
	typ   reflect.Type
	index []int
}

// fieldSets caches fieldsOf, as encoding/json caches its own: the fields
// of a type never change.
var fieldSets sync.Map // reflect.Type -> fieldSet

// fieldsOf lists the fields encoding/json would decode into t: exported
// fields by their JSON name (tag or Go name), those of embedded structs
// promoted unless a shallower field has the name.
func fieldsOf(t reflect.Type) fieldSet {
	if fs, ok := fieldSets.Load(t); ok {
		return fs.(fieldSet)
	}
	fs := fieldSet{exact: map[string]field{}, folded: map[string]string{}}
	type embedded struct {
		t     reflect.Type
		index []int
	}
	level := []embedded{{t: t}}
	seen := map[reflect.Type]bool{}
	for len(level) > 0 {
		var next []embedded
		names := map[string]field{}
		for _, st := range level {
			if seen[st.t] {
				continue
			}
			seen[st.t] = true
			for i := range st.t.NumField() {
				f := st.t.Field(i)
				tag := f.Tag.Get("json")
				if tag == "-" {
					continue
				}
				index := append(append([]int{}, st.index...), i)
				name, _, _ := strings.Cut(tag, ",")
				if f.Anonymous && name == "" {
					et := f.Type
					if et.Kind() == reflect.Pointer {
						et = et.Elem()
					}
					if et.Kind() == reflect.Struct {
						next = append(next, embedded{t: et, index: index})
						continue
					}
				}
				if !f.IsExported() {
					continue
				}
				if name == "" {
					name = f.Name
				}
				if _, shallower := fs.exact[name]; !shallower {
					names[name] = field{typ: f.Type, index: index}
				}
			}
		}
		for name, f := range names {
			fs.exact[name] = f
			fs.folded[foldKey([]byte(name))] = name
		}
		level = next
	}
	fieldSets.Store(t, fs)
	return fs
}
