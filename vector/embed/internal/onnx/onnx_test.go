package onnx

import (
	"encoding/binary"
	"math"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// testTensor describes a TensorProto for the test encoder.
type testTensor struct {
	name         string
	dims         []int64
	unpackedDims bool
	dataType     int32     // 1 FLOAT, 7 INT64
	raw          []float32 // encoded as raw_data if not nil
	floats       []float32 // encoded as float_data if not nil
	unpacked     bool      // float_data unpacked (one fixed32 field each)
	int64s       []int64   // int64_data (field 7), packed
	external     bool      // data_location EXTERNAL
}

// testNode describes a NodeProto for the test encoder.
type testNode struct {
	op      string
	inputs  []string
	outputs []string
}

func appendString(b []byte, num protowire.Number, s string) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

func appendMessage(b []byte, num protowire.Number, msg []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, msg)
}

func appendVarintField(b []byte, num protowire.Number, v uint64) []byte {
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

// rawFloats returns vals as little-endian bytes, as in raw_data.
func rawFloats(vals []float32) []byte {
	var b []byte
	for _, v := range vals {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
	}
	return b
}

func (t testTensor) encode() []byte {
	var b []byte
	if t.unpackedDims {
		for _, d := range t.dims {
			b = appendVarintField(b, 1, uint64(d))
		}
	} else if len(t.dims) > 0 {
		var packed []byte
		for _, d := range t.dims {
			packed = protowire.AppendVarint(packed, uint64(d))
		}
		b = appendMessage(b, 1, packed)
	}
	b = appendVarintField(b, 2, uint64(t.dataType))
	if t.floats != nil {
		if t.unpacked {
			for _, v := range t.floats {
				b = protowire.AppendTag(b, 4, protowire.Fixed32Type)
				b = protowire.AppendFixed32(b, math.Float32bits(v))
			}
		} else {
			b = appendMessage(b, 4, rawFloats(t.floats))
		}
	}
	if t.int64s != nil {
		var packed []byte
		for _, v := range t.int64s {
			packed = protowire.AppendVarint(packed, uint64(v))
		}
		b = appendMessage(b, 7, packed)
	}
	b = appendString(b, 8, t.name)
	if t.raw != nil {
		b = appendMessage(b, 9, rawFloats(t.raw))
	}
	if t.external {
		b = appendVarintField(b, 14, 1)
	}
	return b
}

func (n testNode) encode() []byte {
	var b []byte
	for _, in := range n.inputs {
		b = appendString(b, 1, in)
	}
	for _, out := range n.outputs {
		b = appendString(b, 2, out)
	}
	b = appendString(b, 3, "/"+n.op+"_node")
	b = appendString(b, 4, n.op)
	// An attribute (field 5), which Read skips.
	b = appendMessage(b, 5, appendString(nil, 1, "axis"))
	return b
}

// encodeModel returns a ModelProto with the given nodes and initializers,
// along with fields Read skips. The graph is its last field, so that every
// proper prefix of it is invalid.
func encodeModel(nodes []testNode, inits []testTensor) []byte {
	var g []byte
	for _, n := range nodes {
		g = appendMessage(g, 1, n.encode())
	}
	g = appendString(g, 2, "main_graph")
	for _, t := range inits {
		g = appendMessage(g, 5, t.encode())
	}
	// Unknown fields of each fixed-size wire type.
	g = protowire.AppendTag(g, 1000, protowire.Fixed64Type)
	g = protowire.AppendFixed64(g, 42)
	g = protowire.AppendTag(g, 1001, protowire.Fixed32Type)
	g = protowire.AppendFixed32(g, 42)

	var m []byte
	m = appendVarintField(m, 1, 8) // ir_version
	m = appendString(m, 2, "pytorch")
	m = appendMessage(m, 8, appendVarintField(nil, 2, 14)) // opset_import
	return appendMessage(m, 7, g)
}

// linearModel returns a model holding one nn.Linear from 2 inputs to 3
// outputs (weight w, [in, out]) whose bias is the Add's input biasInput,
// plus a named LayerNorm weight, an anonymous scalar and int64 position ids.
func linearModel(biasInput int) []byte {
	add := testNode{op: "Add", inputs: []string{"/query/MatMul_output_0", "encoder.layer.0.attention.self.query.bias"}, outputs: []string{"/query/Add_output_0"}}
	if biasInput == 0 {
		add.inputs[0], add.inputs[1] = add.inputs[1], add.inputs[0]
	}
	nodes := []testNode{
		{op: "MatMul", inputs: []string{"input", "onnx::MatMul_1234"}, outputs: []string{"/query/MatMul_output_0"}},
		add,
		{op: "Div", inputs: []string{"/query/Add_output_0", "onnx::Div_7"}, outputs: []string{"output"}},
	}
	inits := []testTensor{
		{name: "onnx::MatMul_1234", dims: []int64{2, 3}, dataType: 1, raw: []float32{1, 2, 3, 4, 5, 6}},
		{name: "encoder.layer.0.attention.self.query.bias", dims: []int64{3}, dataType: 1, raw: []float32{0.1, 0.2, 0.3}},
		{name: "embeddings.LayerNorm.weight", dims: []int64{2}, dataType: 1, floats: []float32{1, 1}},
		{name: "onnx::Div_7", dataType: 1, raw: []float32{8}},
		{name: "embeddings.position_ids", dims: []int64{1, 4}, dataType: 7, int64s: []int64{0, 1, 2, 3}},
	}
	return encodeModel(nodes, inits)
}

func TestRead(t *testing.T) {
	nodes := []testNode{
		{op: "MatMul", inputs: []string{"x", "a"}, outputs: []string{"y"}},
		{op: "Add", inputs: []string{"y", "b"}, outputs: []string{"z"}},
	}
	inits := []testTensor{
		{name: "raw", dims: []int64{2, 3}, dataType: 1, raw: []float32{1, 2, 3, 4, 5, -6.5}},
		{name: "packed", dims: []int64{3, 1}, unpackedDims: true, dataType: 1, floats: []float32{7, 8, 9}},
		{name: "unpacked", dims: []int64{2}, dataType: 1, floats: []float32{10, 11}, unpacked: true},
		{name: "scalar", dataType: 1, raw: []float32{12}},
		{name: "empty", dims: []int64{0, 5}, dataType: 1, raw: []float32{}},
		{name: "ids", dims: []int64{1, 3}, dataType: 7, int64s: []int64{0, 1, 2}},
		{name: "ext_ids", dims: []int64{3}, dataType: 7, external: true},
	}
	m, err := Read(encodeModel(nodes, inits))
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	want := &Model{
		Initializers: map[string]Tensor{
			"raw":      {Shape: []int{2, 3}, Data: []float32{1, 2, 3, 4, 5, -6.5}},
			"packed":   {Shape: []int{3, 1}, Data: []float32{7, 8, 9}},
			"unpacked": {Shape: []int{2}, Data: []float32{10, 11}},
			"scalar":   {Shape: []int{}, Data: []float32{12}},
			"empty":    {Shape: []int{0, 5}, Data: []float32{}},
		},
		Nodes: []Node{
			{Op: "MatMul", Inputs: []string{"x", "a"}, Outputs: []string{"y"}},
			{Op: "Add", Inputs: []string{"y", "b"}, Outputs: []string{"z"}},
		},
	}
	if !reflect.DeepEqual(m, want) {
		t.Errorf("Read =\n%+v\nwant\n%+v", m, want)
	}
}

func TestReadErrors(t *testing.T) {
	float := func(tt testTensor) []byte { return encodeModel(nil, []testTensor{tt}) }
	tests := []struct {
		name  string
		model []byte
		want  string // in the error
	}{
		{"empty", nil, "no graph"},
		{"no graph", appendVarintField(nil, 1, 8), "no graph"},
		{"external", float(testTensor{name: "w", dims: []int64{2}, dataType: 1, external: true}), `"w": data stored outside`},
		{"raw count", float(testTensor{name: "w", dims: []int64{2, 2}, dataType: 1, raw: []float32{1, 2, 3}}), "raw_data holds 12 bytes"},
		{"raw not multiple of 4", appendMessage(nil, 7, appendMessage(nil, 5,
			appendMessage(appendVarintField(nil, 2, 1), 9, []byte{1, 2, 3}))), "raw_data holds 3 bytes"},
		{"float_data count", float(testTensor{name: "w", dims: []int64{3}, dataType: 1, floats: []float32{1, 2}}), "2 values in float_data, want 3"},
		{"no data", float(testTensor{name: "w", dims: []int64{3}, dataType: 1}), "0 values in float_data"},
		{"both raw and float_data", float(testTensor{name: "w", dims: []int64{1}, dataType: 1, raw: []float32{1}, floats: []float32{1}}), "both"},
		{"negative dim", float(testTensor{name: "w", dims: []int64{-1, -2}, dataType: 1, raw: []float32{1, 2}}), "negative dimension"},
		{"huge dims", float(testTensor{name: "w", dims: []int64{1 << 32, 1 << 32}, dataType: 1, raw: []float32{1}}), "too many elements"},
		{"max dims", float(testTensor{name: "w", dims: []int64{math.MaxInt64, math.MaxInt64, 2}, unpackedDims: true, dataType: 1}), "too many elements"},
		{"duplicate", encodeModel(nil, []testTensor{
			{name: "w", dims: []int64{1}, dataType: 1, raw: []float32{1}},
			{name: "w", dims: []int64{1}, dataType: 1, raw: []float32{2}},
		}), `"w": duplicate name`},
		{"graph wire type", appendVarintField(nil, 7, 1), "field 7: unexpected wire type"},
		{"packed floats length", appendMessage(nil, 7, appendMessage(nil, 5,
			appendMessage(appendVarintField(nil, 2, 1), 4, []byte{1, 2, 3}))), "not a multiple of 4"},
		{"packed dims truncated", appendMessage(nil, 7, appendMessage(nil, 5,
			appendMessage(appendVarintField(nil, 2, 1), 1, []byte{0x80}))), "packed varint"},
		{"field number 0", []byte{0x00}, "field tag"},
		{"stray end group", []byte{0x0c}, "field 1"},
		{"length past end", []byte{0x3a, 0x05, 0x0a}, "field 7"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Read(tt.model)
			if err == nil {
				t.Fatalf("Read = %+v, want an error containing %q", m, tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Read error = %q, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestReadTruncated(t *testing.T) {
	model := linearModel(1)
	if _, err := Read(model); err != nil {
		t.Fatalf("Read(whole model): %v", err)
	}
	for n := range len(model) {
		if m, err := Read(model[:n]); err == nil {
			t.Errorf("Read(first %d of %d bytes) = %+v, want an error", n, len(model), m)
		}
	}
}

func TestTorchLinears(t *testing.T) {
	for _, biasInput := range []int{0, 1} {
		m, err := Read(linearModel(biasInput))
		if err != nil {
			t.Fatalf("bias as input %d: Read: %v", biasInput, err)
		}
		before := clone(m)
		got, err := m.TorchLinears()
		if err != nil {
			t.Fatalf("bias as input %d: TorchLinears: %v", biasInput, err)
		}
		want := map[string]Tensor{
			"encoder.layer.0.attention.self.query.weight": {Shape: []int{3, 2}, Data: []float32{1, 4, 2, 5, 3, 6}},
			"encoder.layer.0.attention.self.query.bias":   {Shape: []int{3}, Data: []float32{0.1, 0.2, 0.3}},
			"embeddings.LayerNorm.weight":                 {Shape: []int{2}, Data: []float32{1, 1}},
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("bias as input %d: TorchLinears =\n%v\nwant\n%v", biasInput, got, want)
		}
		if !reflect.DeepEqual(m, before) {
			t.Errorf("bias as input %d: TorchLinears modified the model", biasInput)
		}
	}
}

// clone returns a deep copy of m.
func clone(m *Model) *Model {
	c := &Model{Initializers: make(map[string]Tensor)}
	for name, t := range m.Initializers {
		c.Initializers[name] = Tensor{Shape: append([]int{}, t.Shape...), Data: append([]float32{}, t.Data...)}
	}
	for _, n := range m.Nodes {
		c.Nodes = append(c.Nodes, Node{Op: n.Op, Inputs: append([]string{}, n.Inputs...), Outputs: append([]string{}, n.Outputs...)})
	}
	return c
}

func TestTorchLinearsErrors(t *testing.T) {
	weight := Tensor{Shape: []int{2, 3}, Data: []float32{1, 2, 3, 4, 5, 6}}
	bias := Tensor{Shape: []int{3}, Data: []float32{1, 2, 3}}
	matmul := Node{Op: "MatMul", Inputs: []string{"x", "onnx::MatMul_1"}, Outputs: []string{"y"}}
	tests := []struct {
		name  string
		model Model
		want  string
	}{
		{
			name: "no Add",
			model: Model{
				Initializers: map[string]Tensor{"onnx::MatMul_1": weight},
				Nodes:        []Node{matmul, {Op: "Relu", Inputs: []string{"y"}, Outputs: []string{"z"}}},
			},
			want: `"onnx::MatMul_1": MatMul output "y" is not followed by an Add`,
		},
		{
			name: "anonymous bias",
			model: Model{
				Initializers: map[string]Tensor{"onnx::MatMul_1": weight, "onnx::Add_2": bias},
				Nodes:        []Node{matmul, {Op: "Add", Inputs: []string{"y", "onnx::Add_2"}, Outputs: []string{"z"}}},
			},
			want: `"onnx::MatMul_1"`,
		},
		{
			name: "not a bias",
			model: Model{
				Initializers: map[string]Tensor{"onnx::MatMul_1": weight, "dense.scale": bias},
				Nodes:        []Node{matmul, {Op: "Add", Inputs: []string{"y", "dense.scale"}, Outputs: []string{"z"}}},
			},
			want: `"onnx::MatMul_1"`,
		},
		{
			name: "bias shape",
			model: Model{
				Initializers: map[string]Tensor{"onnx::MatMul_1": weight, "dense.bias": {Shape: []int{2}, Data: []float32{1, 2}}},
				Nodes:        []Node{matmul, {Op: "Add", Inputs: []string{"y", "dense.bias"}, Outputs: []string{"z"}}},
			},
			want: "does not fit",
		},
		{
			name: "not a matrix",
			model: Model{
				Initializers: map[string]Tensor{"onnx::MatMul_1": {Shape: []int{6}, Data: weight.Data}, "dense.bias": bias},
				Nodes:        []Node{matmul, {Op: "Add", Inputs: []string{"y", "dense.bias"}, Outputs: []string{"z"}}},
			},
			want: "not a matrix",
		},
		{
			name: "same name twice",
			model: Model{
				Initializers: map[string]Tensor{"onnx::MatMul_1": weight, "onnx::MatMul_2": weight, "dense.bias": bias},
				Nodes: []Node{
					matmul,
					{Op: "Add", Inputs: []string{"y", "dense.bias"}, Outputs: []string{"z"}},
					{Op: "MatMul", Inputs: []string{"z", "onnx::MatMul_2"}, Outputs: []string{"y2"}},
					{Op: "Add", Inputs: []string{"dense.bias", "y2"}, Outputs: []string{"z2"}},
				},
			},
			want: `"onnx::MatMul_2": another tensor is already named "dense.weight"`,
		},
		{
			name: "named weight exists",
			model: Model{
				Initializers: map[string]Tensor{"onnx::MatMul_1": weight, "dense.bias": bias, "dense.weight": weight},
				Nodes:        []Node{matmul, {Op: "Add", Inputs: []string{"y", "dense.bias"}, Outputs: []string{"z"}}},
			},
			want: `already named "dense.weight"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.model.TorchLinears()
			if err == nil {
				t.Fatalf("TorchLinears = %v, want an error containing %q", got, tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("TorchLinears error = %q, want it to contain %q", err, tt.want)
			}
		})
	}
}

func FuzzRead(f *testing.F) {
	f.Add(linearModel(0))
	f.Add(linearModel(1))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Read(data)
		if err != nil {
			return
		}
		_, _ = m.TorchLinears()
	})
}
