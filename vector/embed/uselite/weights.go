package uselite

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io/fs"
	"math"
	"path"
)

// The weights the encoder reads, by their names in the TF.js graph
// (model.json); enc is the common prefix of the encoder's own tensors.
const (
	enc         = "module_apply_default/Encoder_en/KonaTransformer/Encode/"
	wEmbeddings = "module/Embeddings_en"
	wTiming     = enc + "TransformerStack/Layer_0/AddTimingSignal/TimingSignal/ExpandDims_1"
	wTanh       = "module/Encoder_en/hidden_layers/tanh_layer_0/weights"
	wTanhBias   = "module/Encoder_en/hidden_layers/tanh_layer_0/bias"
)

// layerNames holds the graph names of one transformer layer's weights.
type layerNames struct {
	attnScale, attnBias            string // layer norm before attention
	qkv, qkvBias, out, outBias     string
	ffnScale, ffnBias              string // layer norm before the feed-forward block
	ffn1, ffn1Bias, ffn2, ffn2Bias string
	residual, residualBias         string // layer 0 only: 256 to 512
	qScale                         string
}

func names(layer string) layerNames {
	l := enc + layer + "/TransformerLayer/"
	s := enc + "TransformerStack/" + layer + "/TransformerLayer/"
	n := layerNames{
		attnScale: l + "layer_prepostprocess/layer_norm/layer_norm_scale/ConcatPartitions/concat",
		attnBias:  l + "layer_prepostprocess/layer_norm/layer_norm_bias/ConcatPartitions/concat",
		qkv:       "module/Encoder_en/KonaTransformer/Encode/" + layer + "/TransformerLayer/MultiheadAttention/qkv_transform_single/kernel/part_0",
		qkvBias:   l + "MultiheadAttention/qkv_transform_single/bias/ConcatPartitions/concat",
		out:       "module/Encoder_en/KonaTransformer/Encode/" + layer + "/TransformerLayer/MultiheadAttention/output_transform_single/kernel/part_0",
		outBias:   l + "MultiheadAttention/output_transform_single/bias/ConcatPartitions/concat",
		ffnScale:  l + "FFN/layer_prepostprocess/layer_norm/layer_norm_scale/ConcatPartitions/concat",
		ffnBias:   l + "FFN/layer_prepostprocess/layer_norm/layer_norm_bias/ConcatPartitions/concat",
		ffn1:      s + "FFN/conv1/Tensordot/Reshape_1",
		ffn1Bias:  l + "FFN/conv1/bias/ConcatPartitions/concat",
		ffn2:      s + "FFN/conv2/Tensordot/Reshape_1",
		ffn2Bias:  l + "FFN/conv2/bias/ConcatPartitions/concat",
		qScale:    s + "MultiheadAttention/mul/y",
	}
	if layer == "Layer_0" {
		n.residual = l + "dense/kernel/ConcatPartitions/concat"
		n.residualBias = l + "dense/bias/ConcatPartitions/concat"
	}
	return n
}

// tensor is one float32 weight of the graph.
type tensor struct {
	shape []int
	data  []float32
}

// manifest is the part of model.json that describes the weight files.
type manifest struct {
	WeightsManifest []struct {
		Paths   []string `json:"paths"`
		Weights []struct {
			Name  string `json:"name"`
			Shape []int  `json:"shape"`
			Dtype string `json:"dtype"`
		} `json:"weights"`
	} `json:"weightsManifest"`
}

// readWeights reads the float32 weights of model.json and its shards from
// dir in fsys; int32 constants (shapes, axes) are skipped, since the
// encoder has them built in.
func readWeights(fsys fs.FS, dir string) (map[string]tensor, error) {
	raw, err := fs.ReadFile(fsys, path.Join(dir, "model.json"))
	if err != nil {
		return nil, err
	}
	var m manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("model.json: %w", err)
	}
	out := make(map[string]tensor)
	for _, group := range m.WeightsManifest {
		var buf []byte
		for _, p := range group.Paths {
			b, err := fs.ReadFile(fsys, path.Join(dir, p))
			if err != nil {
				return nil, err
			}
			buf = append(buf, b...)
		}
		off := 0
		for _, w := range group.Weights {
			n := 1
			for _, d := range w.Shape {
				n *= d
			}
			if w.Dtype != "float32" && w.Dtype != "int32" {
				return nil, fmt.Errorf("model.json: weight %s has dtype %s", w.Name, w.Dtype)
			}
			if off+4*n > len(buf) {
				return nil, fmt.Errorf("model.json: weight %s runs past the end of its shards", w.Name)
			}
			if w.Dtype == "float32" {
				data := make([]float32, n)
				for i := range data {
					data[i] = math.Float32frombits(binary.LittleEndian.Uint32(buf[off+4*i:]))
				}
				out[w.Name] = tensor{shape: w.Shape, data: data}
			}
			off += 4 * n
		}
		if off != len(buf) {
			return nil, fmt.Errorf("model.json: the shards hold %d bytes, the manifest %d", len(buf), off)
		}
	}
	return out, nil
}
