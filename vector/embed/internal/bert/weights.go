package bert

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"math"
	"unsafe"
)

// littleEndian is set on hosts that store a float32 as safetensors does,
// which can then copy a tensor's bytes as they are.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// Tensor is one float32 weight: its dimensions and values, row-major.
type Tensor struct {
	Shape []int
	Data  []float32
}

// ReadSafetensors reads the float32 tensors of a safetensors file: an
// 8-byte little-endian header length, a JSON header naming each tensor's
// dtype, shape and byte range, then the data. Tensors of other dtypes
// (the int64 position ids) are skipped. Each tensor is read on its own, so
// that the file's 90 MB are not held twice.
func ReadSafetensors(fsys fs.FS, name string) (map[string]Tensor, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, ok := f.(io.ReaderAt)
	if !ok {
		raw, err := io.ReadAll(f)
		if err != nil {
			return nil, err
		}
		r = bytes.NewReader(raw)
	}
	var size [8]byte
	if _, err := r.ReadAt(size[:], 0); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	n := binary.LittleEndian.Uint64(size[:])
	if n > 1<<24 {
		return nil, fmt.Errorf("%s: header of %d bytes", name, n)
	}
	head := make([]byte, n)
	if _, err := r.ReadAt(head, 8); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var entries map[string]json.RawMessage
	if err := json.Unmarshal(head, &entries); err != nil {
		return nil, fmt.Errorf("%s: header: %w", name, err)
	}
	out := make(map[string]Tensor, len(entries))
	var buf []byte
	for key, raw := range entries {
		if key == "__metadata__" {
			continue
		}
		var e struct {
			Dtype   string   `json:"dtype"`
			Shape   []int    `json:"shape"`
			Offsets [2]int64 `json:"data_offsets"`
		}
		if err := json.Unmarshal(raw, &e); err != nil {
			return nil, fmt.Errorf("%s: tensor %s: %w", name, key, err)
		}
		if e.Dtype != "F32" {
			continue
		}
		count := 1
		for _, d := range e.Shape {
			count *= d
		}
		if e.Offsets[1]-e.Offsets[0] != 4*int64(count) {
			return nil, fmt.Errorf("%s: tensor %s: %d bytes for shape %v", name, key, e.Offsets[1]-e.Offsets[0], e.Shape)
		}
		if cap(buf) < 4*count {
			buf = make([]byte, 4*count)
		}
		buf = buf[:4*count]
		if _, err := r.ReadAt(buf, 8+int64(n)+e.Offsets[0]); err != nil {
			return nil, fmt.Errorf("%s: tensor %s: %w", name, key, err)
		}
		data := make([]float32, count)
		if littleEndian {
			copy(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(data))), 4*count), buf)
		} else {
			for i := range data {
				data[i] = math.Float32frombits(binary.LittleEndian.Uint32(buf[4*i:]))
			}
		}
		out[key] = Tensor{Shape: e.Shape, Data: data}
	}
	return out, nil
}
