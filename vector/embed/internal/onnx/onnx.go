// Package onnx reads the float32 weights and the graph's node list of an
// ONNX model, so that Cairn's pure-Go encoders can run a BERT exported by
// Hugging Face Optimum or transformers.js (bge-small-en-v1.5.onnx, for
// one) without cgo or an ONNX runtime.
//
// It decodes the protobuf wire format of onnx.proto3 directly with
// protowire, keeping only what an encoder needs: the float32 initializers
// and, for each node, its operator and the names of its inputs and
// outputs. Everything else (attributes, value infos, opsets, metadata) is
// skipped. The input is untrusted: malformed or hostile bytes yield an
// error, never a panic.
package onnx

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
)

// Field numbers of onnx.proto3 that Read decodes.
const (
	modelGraph = 7 // ModelProto.graph

	graphNode        = 1 // GraphProto.node
	graphInitializer = 5 // GraphProto.initializer

	nodeInput  = 1 // NodeProto.input
	nodeOutput = 2 // NodeProto.output
	nodeOpType = 4 // NodeProto.op_type

	tensorDims         = 1  // TensorProto.dims
	tensorDataType     = 2  // TensorProto.data_type
	tensorFloatData    = 4  // TensorProto.float_data
	tensorName         = 8  // TensorProto.name
	tensorRawData      = 9  // TensorProto.raw_data
	tensorDataLocation = 14 // TensorProto.data_location
)

// Enumeration values of onnx.proto3 that Read checks.
const (
	dataTypeFloat    = 1 // TensorProto.DataType.FLOAT
	locationExternal = 1 // TensorProto.DataLocation.EXTERNAL
)

// anonymousPrefix starts the names that the PyTorch exporter gives to the
// initializers it creates itself, such as the transposed weight of an
// nn.Linear ("onnx::MatMul_1234").
const anonymousPrefix = "onnx::"

// Tensor is one float32 initializer: its dimensions and values, row-major.
type Tensor struct {
	Shape []int
	Data  []float32
}

// Node is one node of the graph: its operator and the names of its inputs and outputs.
type Node struct {
	Op      string
	Inputs  []string
	Outputs []string
}

// Model is what Read keeps of an ONNX model: its float32 initializers by name, and its nodes in order.
type Model struct {
	Initializers map[string]Tensor
	Nodes        []Node
}

// Read parses an ONNX ModelProto. Initializers of other data types (int64 position ids, etc.) are skipped; a float32 initializer stored outside the file (data_location EXTERNAL) is an error.
//
// The model must have a graph, and no two float32 initializers may share
// a name. Each initializer's values must be as many as the product of its
// dimensions. The values are copied out of data (one float32 per four
// bytes of raw_data, decoded little-endian whatever the host), so data
// may be released once Read returns.
func Read(data []byte) (*Model, error) {
	return ReadAt(bytes.NewReader(data), int64(len(data)))
}

// ReadAt is Read on the size bytes of r, read a field at a time: it holds
// one node or initializer's encoding at once (the largest, a model's word
// embeddings, some 47 MB for bge-small-en-v1.5), never the whole file, so
// that loading a model costs little more memory than its weights.
func ReadAt(r io.ReaderAt, size int64) (*Model, error) {
	m := &Model{Initializers: make(map[string]Tensor)}
	sr := &sectionReader{r: r}
	found := false
	err := sr.walk(0, size, func(num protowire.Number, typ protowire.Type, off, n int64) error {
		if num != modelGraph {
			return nil
		}
		if typ != protowire.BytesType {
			return wireTypeError(num, typ)
		}
		found = true
		return sr.walk(off, off+n, func(num protowire.Number, typ protowire.Type, off, n int64) error {
			if (num == graphNode || num == graphInitializer) && typ != protowire.BytesType {
				return wireTypeError(num, typ)
			}
			switch num {
			case graphNode:
				msg, err := sr.read(off, n)
				if err != nil {
					return err
				}
				node, err := readNode(msg)
				if err != nil {
					return fmt.Errorf("node %d: %w", len(m.Nodes), err)
				}
				m.Nodes = append(m.Nodes, node)
			case graphInitializer:
				msg, err := sr.read(off, n)
				if err != nil {
					return err
				}
				return m.addInitializer(msg)
			}
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("onnx: reading model: %w", err)
	}
	if !found {
		return nil, errors.New("onnx: reading model: no graph")
	}
	return m, nil
}

// sectionReader reads the fields of messages in r. Its buffer holds the
// last field read and is reused by the next: what a caller keeps of it
// must be copied (readNode and addInitializer copy what they keep).
type sectionReader struct {
	r   io.ReaderAt
	buf []byte
}

// read returns the n bytes at off.
func (sr *sectionReader) read(off, n int64) ([]byte, error) {
	if n < 0 || n > math.MaxInt32 {
		return nil, fmt.Errorf("field of %d bytes", n)
	}
	if int64(cap(sr.buf)) < n {
		sr.buf = make([]byte, n)
	}
	b := sr.buf[:n]
	if _, err := sr.r.ReadAt(b, off); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return b, nil
}

// walk calls fn with the number and wire type of each field of the
// message in [off, end), and the offset and length of its value (of a
// length-delimited field, its contents); groups, a truncated field or one
// that runs past end are errors.
func (sr *sectionReader) walk(off, end int64, fn func(num protowire.Number, typ protowire.Type, off, n int64) error) error {
	var head [2 * binary.MaxVarintLen64]byte
	for off < end {
		h := head[:min(int64(len(head)), end-off)]
		if _, err := sr.r.ReadAt(h, off); err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		num, typ, n := protowire.ConsumeTag(h)
		if n < 0 {
			return fmt.Errorf("field tag: %w", protowire.ParseError(n))
		}
		off += int64(n)
		h = h[n:]
		var size int64
		switch typ {
		case protowire.VarintType:
			n = protowire.ConsumeFieldValue(num, typ, h)
			size = int64(n)
			n = 0
		case protowire.Fixed32Type:
			size = 4
			n = 0
		case protowire.Fixed64Type:
			size = 8
			n = 0
		case protowire.BytesType:
			var l uint64
			l, n = protowire.ConsumeVarint(h)
			if n >= 0 && l > uint64(end-off-int64(n)) {
				return fmt.Errorf("field %d: %w", num, io.ErrUnexpectedEOF)
			}
			size = int64(l)
		default:
			return fmt.Errorf("field %d: unexpected wire type %d", num, typ)
		}
		if n < 0 || size < 0 {
			return fmt.Errorf("field %d: %w", num, protowire.ParseError(min(n, int(size))))
		}
		off += int64(n) // the length of a length-delimited field
		if size > end-off {
			return fmt.Errorf("field %d: %w", num, io.ErrUnexpectedEOF)
		}
		if err := fn(num, typ, off, size); err != nil {
			return err
		}
		off += size
	}
	return nil
}

// addInitializer decodes the TensorProto b and, if it holds float32
// values, adds it to m's initializers.
func (m *Model) addInitializer(b []byte) error {
	p, err := readTensorProto(b)
	if err != nil {
		return fmt.Errorf("initializer %q: %w", p.name, err)
	}
	if p.dataType != dataTypeFloat {
		return nil
	}
	t, err := p.tensor()
	if err != nil {
		return fmt.Errorf("initializer %q: %w", p.name, err)
	}
	if _, dup := m.Initializers[p.name]; dup {
		return fmt.Errorf("initializer %q: duplicate name", p.name)
	}
	m.Initializers[p.name] = t
	return nil
}

// readNode decodes the NodeProto b.
func readNode(b []byte) (Node, error) {
	var n Node
	err := walk(b, func(num protowire.Number, typ protowire.Type, v []byte) error {
		var dst *[]string
		switch num {
		case nodeInput:
			dst = &n.Inputs
		case nodeOutput:
			dst = &n.Outputs
		case nodeOpType:
			s, err := bytesValue(num, typ, v)
			n.Op = string(s)
			return err
		default:
			return nil
		}
		s, err := bytesValue(num, typ, v)
		*dst = append(*dst, string(s))
		return err
	})
	return n, err
}

// tensorProto is what readTensorProto keeps of a TensorProto, before its
// values are checked against its dimensions and decoded.
type tensorProto struct {
	name     string
	dims     []int64
	dataType uint64
	location uint64
	raw      []byte // raw_data, aliasing the input
	hasRaw   bool
	floats   []float32 // float_data
}

// readTensorProto decodes the fields of the TensorProto b that Read uses.
// It returns the name decoded so far along with any error.
func readTensorProto(b []byte) (tensorProto, error) {
	var p tensorProto
	err := walk(b, func(num protowire.Number, typ protowire.Type, v []byte) error {
		var err error
		switch num {
		case tensorDims:
			p.dims, err = appendVarints(p.dims, num, typ, v)
		case tensorDataType:
			p.dataType, err = varintValue(num, typ, v)
		case tensorFloatData:
			p.floats, err = appendFloats(p.floats, num, typ, v)
		case tensorName:
			var s []byte
			s, err = bytesValue(num, typ, v)
			p.name = string(s)
		case tensorRawData:
			p.raw, err = bytesValue(num, typ, v)
			p.hasRaw = true
		case tensorDataLocation:
			p.location, err = varintValue(num, typ, v)
		}
		return err
	})
	return p, err
}

// tensor checks p, a float32 TensorProto, and returns its values.
func (p *tensorProto) tensor() (Tensor, error) {
	if p.location == locationExternal {
		return Tensor{}, errors.New("data stored outside the file (data_location EXTERNAL) is not supported")
	}
	count, err := elementCount(p.dims)
	if err != nil {
		return Tensor{}, err
	}
	shape := make([]int, len(p.dims))
	for i, d := range p.dims {
		shape[i] = int(d) // in range: elementCount checked it
	}
	switch {
	case p.hasRaw && len(p.floats) > 0:
		return Tensor{}, errors.New("both raw_data and float_data are set")
	case p.hasRaw:
		data, err := decodeRaw(p.raw, count)
		return Tensor{Shape: shape, Data: data}, err
	case len(p.floats) != count:
		return Tensor{}, fmt.Errorf("%d values in float_data, want %d for shape %v", len(p.floats), count, p.dims)
	default:
		return Tensor{Shape: shape, Data: p.floats}, nil
	}
}

// elementCount returns the product of dims, checking that each is
// non-negative and that the product fits in an int.
func elementCount(dims []int64) (int, error) {
	for _, d := range dims {
		if d < 0 {
			return 0, fmt.Errorf("negative dimension in shape %v", dims)
		}
		if d == 0 {
			return 0, nil
		}
	}
	count := 1
	for _, d := range dims {
		if d > math.MaxInt || count > math.MaxInt/int(d) {
			return 0, fmt.Errorf("shape %v has too many elements", dims)
		}
		count *= int(d)
	}
	return count, nil
}

// decodeRaw decodes raw, the raw_data of a float32 tensor of count
// elements: little-endian IEEE 754 values, four bytes each.
func decodeRaw(raw []byte, count int) ([]float32, error) {
	if len(raw)%4 != 0 || len(raw)/4 != count {
		return nil, fmt.Errorf("raw_data holds %d bytes, want 4 × %d", len(raw), count)
	}
	data := make([]float32, count)
	for i := range data {
		data[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return data, nil
}

// walk calls fn with the number, wire type and encoded value of each field
// of the message b in turn, stopping at the first error. It checks that
// each field is well-formed, so that fn may decode v without bounds
// checks of its own; fields fn does not know it simply ignores.
func walk(b []byte, fn func(num protowire.Number, typ protowire.Type, v []byte) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return fmt.Errorf("field tag: %w", protowire.ParseError(n))
		}
		b = b[n:]
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return fmt.Errorf("field %d: %w", num, protowire.ParseError(n))
		}
		if err := fn(num, typ, b[:n]); err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

// wireTypeError reports a field of a known number but an unexpected wire
// type.
func wireTypeError(num protowire.Number, typ protowire.Type) error {
	return fmt.Errorf("field %d: unexpected wire type %d", num, typ)
}

// bytesValue returns the contents of v, the value of a length-delimited
// field (string, bytes or message) as walk passes it.
func bytesValue(num protowire.Number, typ protowire.Type, v []byte) ([]byte, error) {
	if typ != protowire.BytesType {
		return nil, wireTypeError(num, typ)
	}
	s, n := protowire.ConsumeBytes(v)
	if n < 0 {
		return nil, fmt.Errorf("field %d: %w", num, protowire.ParseError(n))
	}
	return s, nil
}

// varintValue returns v, the value of a varint field as walk passes it.
func varintValue(num protowire.Number, typ protowire.Type, v []byte) (uint64, error) {
	if typ != protowire.VarintType {
		return 0, wireTypeError(num, typ)
	}
	x, n := protowire.ConsumeVarint(v)
	if n < 0 {
		return 0, fmt.Errorf("field %d: %w", num, protowire.ParseError(n))
	}
	return x, nil
}

// appendVarints appends to dst the int64 values of v, one element of a
// repeated int64 field, unpacked (one varint) or packed (a
// length-delimited run of varints).
func appendVarints(dst []int64, num protowire.Number, typ protowire.Type, v []byte) ([]int64, error) {
	if typ == protowire.VarintType {
		x, err := varintValue(num, typ, v)
		return append(dst, int64(x)), err
	}
	packed, err := bytesValue(num, typ, v)
	if err != nil {
		return dst, err
	}
	for len(packed) > 0 {
		x, n := protowire.ConsumeVarint(packed)
		if n < 0 {
			return dst, fmt.Errorf("field %d: packed varint: %w", num, protowire.ParseError(n))
		}
		dst = append(dst, int64(x))
		packed = packed[n:]
	}
	return dst, nil
}

// appendFloats appends to dst the float32 values of v, one element of a
// repeated float field, unpacked (one fixed32) or packed (a
// length-delimited run of them).
func appendFloats(dst []float32, num protowire.Number, typ protowire.Type, v []byte) ([]float32, error) {
	if typ == protowire.Fixed32Type {
		x, n := protowire.ConsumeFixed32(v)
		if n < 0 {
			return dst, fmt.Errorf("field %d: %w", num, protowire.ParseError(n))
		}
		return append(dst, math.Float32frombits(x)), nil
	}
	packed, err := bytesValue(num, typ, v)
	if err != nil {
		return dst, err
	}
	if len(packed)%4 != 0 {
		return dst, fmt.Errorf("field %d: packed floats: %d bytes, not a multiple of 4", num, len(packed))
	}
	dst = slices.Grow(dst, len(packed)/4)
	for i := 0; i < len(packed); i += 4 {
		dst = append(dst, math.Float32frombits(binary.LittleEndian.Uint32(packed[i:])))
	}
	return dst, nil
}

// TorchLinears returns the model's weights named and shaped as PyTorch's state dict of the same BERT would be: every initializer whose name does not start with "onnx::", unchanged, plus the weight of each nn.Linear.
//
// The exporter turns an nn.Linear into a MatMul node whose second input is
// an anonymous initializer ("onnx::MatMul_1234") of shape [in, out],
// followed by an Add node of the MatMul's output and the layer's named
// bias ("encoder.layer.0.attention.self.query.bias", as either input).
// For each such pair the weight appears under the bias's name with the
// suffix "bias" replaced by "weight", transposed to PyTorch's [out, in].
// An anonymous MatMul initializer not followed by such an Add is an
// error, and so are two tensors under one name.
//
// TorchLinears does not modify m; the tensors it returns unchanged share
// their storage with m's.
func (m *Model) TorchLinears() (map[string]Tensor, error) {
	out := make(map[string]Tensor, len(m.Initializers))
	for name, t := range m.Initializers {
		if !strings.HasPrefix(name, anonymousPrefix) {
			out[name] = t
		}
	}
	consumers := m.consumers()
	for _, node := range m.Nodes {
		if node.Op != "MatMul" || len(node.Inputs) < 2 {
			continue
		}
		wname := node.Inputs[1]
		w, ok := m.Initializers[wname]
		if !ok || !strings.HasPrefix(wname, anonymousPrefix) {
			continue
		}
		name, weight, err := m.linearWeight(node, w, consumers)
		if err != nil {
			return nil, fmt.Errorf("onnx: MatMul weight %q: %w", wname, err)
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("onnx: MatMul weight %q: another tensor is already named %q", wname, name)
		}
		out[name] = weight
	}
	return out, nil
}

// consumers returns, for each tensor name, the indices of the nodes that
// take it as an input.
func (m *Model) consumers() map[string][]int {
	c := make(map[string][]int)
	for i, node := range m.Nodes {
		for _, in := range node.Inputs {
			if in != "" {
				c[in] = append(c[in], i)
			}
		}
	}
	return c
}

// linearWeight returns the PyTorch name and the transposed value of w, the
// anonymous weight initializer of the MatMul node mm.
func (m *Model) linearWeight(mm Node, w Tensor, consumers map[string][]int) (string, Tensor, error) {
	bname, err := m.biasAfter(mm, consumers)
	if err != nil {
		return "", Tensor{}, err
	}
	if !isMatrix(w) {
		return "", Tensor{}, fmt.Errorf("shape %v with %d values is not a matrix", w.Shape, len(w.Data))
	}
	if b := m.Initializers[bname]; len(b.Shape) != 1 || b.Shape[0] != w.Shape[1] {
		return "", Tensor{}, fmt.Errorf("bias %q of shape %v does not fit weight of shape %v", bname, b.Shape, w.Shape)
	}
	return strings.TrimSuffix(bname, "bias") + "weight", transpose(w), nil
}

// biasAfter returns the name of the bias initializer that an Add node adds
// to the output of the MatMul node mm.
func (m *Model) biasAfter(mm Node, consumers map[string][]int) (string, error) {
	if len(mm.Outputs) == 0 || mm.Outputs[0] == "" {
		return "", errors.New("MatMul has no output")
	}
	product := mm.Outputs[0]
	var biases []string
	for _, i := range consumers[product] {
		add := m.Nodes[i]
		if add.Op != "Add" || len(add.Inputs) != 2 {
			continue
		}
		other := add.Inputs[0]
		if other == product {
			other = add.Inputs[1]
		}
		if m.isBias(other) {
			biases = append(biases, other)
		}
	}
	switch len(biases) {
	case 0:
		return "", fmt.Errorf("MatMul output %q is not followed by an Add with a named bias initializer", product)
	case 1:
		return biases[0], nil
	default:
		return "", fmt.Errorf("MatMul output %q is followed by several Adds of bias initializers %q", product, biases)
	}
}

// isBias reports whether name is that of a named (not anonymous) float32
// initializer whose name ends in "bias".
func (m *Model) isBias(name string) bool {
	_, ok := m.Initializers[name]
	return ok && strings.HasSuffix(name, "bias") && !strings.HasPrefix(name, anonymousPrefix)
}

// isMatrix reports whether t is two-dimensional and holds as many values
// as its shape says, so that transpose may index it.
func isMatrix(t Tensor) bool {
	if len(t.Shape) != 2 || t.Shape[0] < 0 || t.Shape[1] < 0 {
		return false
	}
	rows, cols := t.Shape[0], t.Shape[1]
	if cols == 0 {
		return len(t.Data) == 0
	}
	return len(t.Data)%cols == 0 && len(t.Data)/cols == rows
}

// transpose returns the transpose of the matrix t, in new storage.
func transpose(t Tensor) Tensor {
	rows, cols := t.Shape[0], t.Shape[1]
	data := make([]float32, len(t.Data))
	if len(data) == 0 {
		return Tensor{Shape: []int{cols, rows}, Data: data} // rows may be huge if cols is 0
	}
	for i := range rows {
		for j, v := range t.Data[i*cols : (i+1)*cols] {
			data[j*rows+i] = v
		}
	}
	return Tensor{Shape: []int{cols, rows}, Data: data}
}
