package uselite

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf16"

	"golang.org/x/text/unicode/norm"
)

// reservedPieces is the number of vocabulary entries the tokenizer never
// produces from text (0 "unknown", <s>, </s> and three spare ids); id 0 is
// still emitted for a symbol no piece covers.
const reservedPieces = 6

// separator replaces every ASCII space and starts every text, as in
// sentencepiece.
const separator = '\u2581'

// piece is one vocabulary entry.
type piece struct {
	score float64
	// jump is the length of the piece in UTF-16 code units: the reference
	// tokenizer steps back by it when it reads the best path, although the
	// path is built over code points (see Tokenizer.Encode).
	jump int
}

// trieNode is a node of the prefix tree over the pieces' code points.
type trieNode struct {
	children map[rune]int32
	end      bool
	id       int32
}

// Tokenizer reproduces the tokenizer of @energetic-ai/embeddings 0.2.0
// (itself the one of TensorFlow.js's universal-sentence-encoder model):
// NFKC normalisation, ASCII spaces to "▁" with one "▁" in front, then a
// Viterbi segmentation over the pieces' scores with a prefix tree. Its
// quirks are kept, since the model was run with them: only U+0020 becomes
// a separator (tabs and newlines stay and are unknown symbols), a symbol no
// piece starts with becomes id 0 and consecutive id 0s merge into one, ties
// go to the later, longer candidate, a position no path reaches scores 0,
// and the best path is read back in UTF-16 code units.
type Tokenizer struct {
	pieces []piece
	nodes  []trieNode
}

// NewTokenizer builds a tokenizer from vocab.json: a JSON array of
// [piece, score] pairs whose index is the token id.
func NewTokenizer(vocabJSON []byte) (*Tokenizer, error) {
	var raw [][2]json.RawMessage
	if err := json.Unmarshal(vocabJSON, &raw); err != nil {
		return nil, fmt.Errorf("uselite: vocabulary: %w", err)
	}
	if len(raw) <= reservedPieces {
		return nil, fmt.Errorf("uselite: vocabulary has %d entries", len(raw))
	}
	t := &Tokenizer{pieces: make([]piece, len(raw)), nodes: []trieNode{{}}}
	for i, r := range raw {
		var s string
		var score float64
		if err := json.Unmarshal(r[0], &s); err != nil {
			return nil, fmt.Errorf("uselite: vocabulary entry %d: %w", i, err)
		}
		if err := json.Unmarshal(r[1], &score); err != nil {
			return nil, fmt.Errorf("uselite: vocabulary entry %d: %w", i, err)
		}
		t.pieces[i] = piece{score: score, jump: len(utf16.Encode([]rune(s)))}
		if i >= reservedPieces {
			t.insert(s, int32(i))
		}
	}
	return t, nil
}

func (t *Tokenizer) insert(s string, id int32) {
	n := int32(0)
	for _, r := range s {
		c, ok := t.nodes[n].children[r]
		if !ok {
			if t.nodes[n].children == nil {
				t.nodes[n].children = make(map[rune]int32)
			}
			c = int32(len(t.nodes))
			t.nodes = append(t.nodes, trieNode{})
			t.nodes[n].children[r] = c
		}
		n = c
	}
	if n != 0 {
		// A later duplicate replaces an earlier one, as in the reference.
		t.nodes[n].end = true
		t.nodes[n].id = id
	}
}

// VocabularySize is the number of token ids.
func (t *Tokenizer) VocabularySize() int { return len(t.pieces) }

// candidate is one piece that starts at some position.
type candidate struct {
	start, length int // in code points
	id            int32
}

// Encode returns the token ids of text, exactly as the reference tokenizer
// does; the empty text has none.
func (t *Tokenizer) Encode(text string) []int32 {
	normalized := norm.NFKC.String(text)
	if normalized == "" {
		return nil
	}
	symbols := []rune(string(separator) + strings.ReplaceAll(normalized, " ", string(separator)))
	n := len(symbols)
	// All candidates by ascending start, then grouped by end with a stable
	// counting sort, so that each end sees its candidates by ascending
	// start, as the reference's object keys are visited.
	cands := make([]candidate, 0, 2*n)
	perEnd := make([]int, n+2)
	for i := range n {
		found := false
		node := t.nodes[0]
		for j := i; j < n; j++ {
			c, ok := node.children[symbols[j]]
			if !ok {
				break
			}
			node = t.nodes[c]
			if node.end {
				cands = append(cands, candidate{start: i, length: j + 1 - i, id: node.id})
				perEnd[j+2]++
				found = true
			}
		}
		if !found {
			cands = append(cands, candidate{start: i, length: 1, id: 0})
			perEnd[i+2]++
		}
	}
	for e := 1; e < len(perEnd); e++ {
		perEnd[e] += perEnd[e-1]
	}
	// perEnd[e] is now the number of candidates that end before e: where
	// those that end at e begin.
	byEnd := make([]candidate, len(cands))
	next := perEnd
	for _, c := range cands {
		e := c.start + c.length
		byEnd[next[e]] = c
		next[e]++
	}
	best := make([]float64, n+1)
	words := make([]int32, n+1)
	for _, c := range byEnd {
		e := c.start + c.length
		// An unknown symbol scores 0, as the "unknown" entry does.
		score := t.pieces[c.id].score + best[c.start]
		if best[e] == 0 || score >= best[e] {
			best[e] = score
			words[e] = c.id
		}
	}
	var reversed []int32
	for i := n; i > 0; i -= t.pieces[words[i]].jump {
		reversed = append(reversed, words[i])
	}
	ids := make([]int32, 0, len(reversed))
	previousUnknown := false
	for _, id := range reversed {
		if !(previousUnknown && id == 0) {
			ids = append(ids, id)
		}
		previousUnknown = id == 0
	}
	for i, j := 0, len(ids)-1; i < j; i, j = i+1, j-1 {
		ids[i], ids[j] = ids[j], ids[i]
	}
	return ids
}
