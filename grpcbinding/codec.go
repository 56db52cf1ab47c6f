package grpcbinding

import (
	"fmt"
	"sync"

	"google.golang.org/grpc/encoding"
	grpcproto "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/kfa-project/kfa/a2a"
)

// maxDepth bounds the nesting of a request message. A JSON level of a
// Struct or Value is three messages deep (Value, Struct, its map entry),
// so this admits the a2a.MaxJSONDepth levels the HTTP bindings admit (the
// converter refuses deeper ones as the field they are in) and refuses
// anything much deeper before it is built.
const maxDepth = 3*a2a.MaxJSONDepth + 64

// codec is gRPC's proto codec with a bound on the nesting of what it
// reads (protobuf's own default is 10,000 levels), and a way to answer a
// request message that cannot be decoded as the client's mistake: gRPC
// answers a codec's error itself, as INTERNAL (the server's fault), before
// the handler can say otherwise. So an A2A request that cannot be decoded
// decodes as empty, and why is kept for the call's decoder (call.go),
// which refuses it; the messages of the other services (health,
// reflection) fail as gRPC fails them.
type codec struct {
	undecoded sync.Map // proto.Message -> error, until the call's decoder takes it
}

func (*codec) Name() string { return grpcproto.Name }

func (*codec) Marshal(v any) (mem.BufferSlice, error) {
	return encoding.GetCodecV2(grpcproto.Name).Marshal(v)
}

func (c *codec) Unmarshal(data mem.BufferSlice, v any) error {
	m, ok := v.(proto.Message)
	if !ok {
		return fmt.Errorf("grpcbinding: cannot decode into %T", v)
	}
	buf := data.MaterializeToBuffer(mem.DefaultBufferPool())
	defer buf.Free()
	err := proto.UnmarshalOptions{RecursionLimit: maxDepth}.Unmarshal(buf.ReadOnlyData(), m)
	if err != nil && m.ProtoReflect().Descriptor().ParentFile().Package() == a2aPackage {
		proto.Reset(m)
		c.undecoded.Store(m, err)
		return nil
	}
	return err
}

// a2aPackage is the proto package of the A2A service's messages.
const a2aPackage = "lf.a2a.v1"

// decodeFailure takes why m could not be decoded, if it could not.
func (c *codec) decodeFailure(m proto.Message) error {
	err, ok := c.undecoded.LoadAndDelete(m)
	if !ok {
		return nil
	}
	return a2a.Errorf(a2a.ParseError, "the request is not a valid %s message: %v", m.ProtoReflect().Descriptor().FullName(), err)
}

// checkWireTypes refuses a field of m's type that arrived with a wire
// type other than its own (a string sent as a number, say). Protobuf
// keeps such a field as an unknown one and reads the message as if it
// were absent; the caller meant something, so it is told. Field numbers
// the message does not have are ignored, as the spec asks of unknown
// fields (a newer client's additions).
func checkWireTypes(m protoreflect.Message, path string) error {
	fields := m.Descriptor().Fields()
	for b := m.GetUnknown(); len(b) > 0; {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil // proto.Unmarshal already accepted it; nothing to say
		}
		if fd := fields.ByNumber(num); fd != nil {
			return a2a.BadParam(join(path, fd.JSONName()), "has the wrong type: wire type %d for a field of type %s", typ, kindName(fd))
		}
		l := protowire.ConsumeFieldValue(num, typ, b[n:])
		if l < 0 {
			return nil
		}
		b = b[n+l:]
	}
	var err error
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		p := join(path, fd.JSONName())
		switch {
		case fd.IsList() && fd.Message() != nil:
			l := v.List()
			for i := 0; i < l.Len() && err == nil; i++ {
				err = checkWireTypes(l.Get(i).Message(), fmt.Sprintf("%s[%d]", p, i))
			}
		case fd.IsMap() && fd.MapValue().Message() != nil:
			v.Map().Range(func(k protoreflect.MapKey, mv protoreflect.Value) bool {
				err = checkWireTypes(mv.Message(), p+"."+k.String())
				return err == nil
			})
		case fd.Message() != nil && !fd.IsList() && !fd.IsMap():
			err = checkWireTypes(v.Message(), p)
		}
		return err == nil
	})
	return err
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func kindName(fd protoreflect.FieldDescriptor) string {
	if fd.Message() != nil {
		return string(fd.Message().FullName())
	}
	return fd.Kind().String()
}
