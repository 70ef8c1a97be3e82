#!/usr/bin/env python3
"""Regenerate the built-in model tables of dtsim (sim/src/workload/preset_data.rs).

Plain Python 3, no third-party packages (no torch needed).

Usage:
    python3 docs/model_tables.py            # check totals, print per-layer and throughput tables
    python3 docs/model_tables.py --rust     # print the complete preset_data.rs to stdout
    python3 docs/model_tables.py --rust > sim/src/workload/preset_data.rs

Counting conventions (also in docs/models.md):
  * params: trainable dense parameters = conv/linear weights + biases + batch-norm
    gamma/beta. Batch-norm running mean/var (buffers) are NOT counted.
  * fwd_macs: multiply-accumulates of convolution and fully-connected layers for ONE
    sample. Batch-norm, ReLU, pooling, residual adds, bias adds and softmax are not
    counted (this is the convention of torchvision's "GFLOPS" column, which is in fact
    GMACs, and of fvcore/ptflops conv+linear counts).
  * activation_elems: elements of the tensor that the entry hands to the next entry,
    for ONE sample. Pooling / flatten / dropout that sit between two entries are
    attributed to the EARLIER entry (e.g. VGG conv1_2 includes pool1, ResNet conv1
    includes the 3x3 max-pool, the last residual block includes global avg-pool).

Every number the script prints is checked against the published totals below; the
script exits non-zero if any check fails.
"""

import sys

# --------------------------------------------------------------------------------------
# Layer arithmetic
# --------------------------------------------------------------------------------------


def _pair(x):
    return x if isinstance(x, tuple) else (x, x)


def conv_out(h, w, k, stride=1, pad=0):
    kh, kw = _pair(k)
    sh, sw = _pair(stride)
    ph, pw = _pair(pad)
    return (h + 2 * ph - kh) // sh + 1, (w + 2 * pw - kw) // sw + 1


class Conv:
    """A conv layer (optionally followed by batch norm) applied to a (c, h, w) input."""

    def __init__(self, cin, cout, h, w, k, stride=1, pad=0, bias=True, bn=False):
        kh, kw = _pair(k)
        self.ho, self.wo = conv_out(h, w, k, stride, pad)
        self.cout = cout
        weights = kh * kw * cin * cout
        self.params = weights + (cout if bias else 0) + (2 * cout if bn else 0)
        self.macs = weights * self.ho * self.wo


def linear(fin, fout):
    """(params, macs) of a fully-connected layer with bias."""
    return fin * fout + fout, fin * fout


def pool_out(h, w, k, stride, pad=0):
    return conv_out(h, w, k, stride, pad)


class Entry:
    def __init__(self, name, params, macs, act, emb=None, tok=None, pad=0.0):
        self.name, self.params, self.macs, self.act = name, params, macs, act
        # (vocab, dim) of the entry's embedding table (a sparse variable), or None
        self.emb = emb
        # the table's token model: (rows looked up per sample, rows per batch besides), a
        # row per token, duplicates included (docs/models.md §6.2)
        self.tok = tok
        # of a sample's tokens, those on the padding row (a sequence padded to a length)
        self.pad = pad


# --------------------------------------------------------------------------------------
# Models
# --------------------------------------------------------------------------------------


def resnet50():
    """torchvision resnet50 (ResNet-50 v1.5: stride 2 on the 3x3 conv of the bottleneck)."""
    out = []
    h = w = 224
    c1 = Conv(3, 64, h, w, 7, 2, 3, bias=False, bn=True)  # 112x112
    h, w = pool_out(c1.ho, c1.wo, 3, 2, 1)  # 56x56
    out.append(Entry("conv1", c1.params, c1.macs, 64 * h * w))
    inplanes = 64
    for li, (planes, blocks, stride) in enumerate([(64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)]):
        for b in range(blocks):
            s = stride if b == 0 else 1
            a = Conv(inplanes, planes, h, w, 1, 1, 0, bias=False, bn=True)
            bb = Conv(planes, planes, a.ho, a.wo, 3, s, 1, bias=False, bn=True)
            cc = Conv(planes, planes * 4, bb.ho, bb.wo, 1, 1, 0, bias=False, bn=True)
            params, macs = a.params + bb.params + cc.params, a.macs + bb.macs + cc.macs
            if b == 0:  # projection shortcut (downsample)
                d = Conv(inplanes, planes * 4, h, w, 1, s, 0, bias=False, bn=True)
                params += d.params
                macs += d.macs
            h, w, inplanes = cc.ho, cc.wo, planes * 4
            last = li == 3 and b == blocks - 1
            act = inplanes if last else inplanes * h * w  # last block absorbs global avg-pool
            out.append(Entry("layer%d.%d" % (li + 1, b), params, macs, act))
    p, m = linear(2048, 1000)
    out.append(Entry("fc", p, m, 1000))
    return out


def vgg16():
    """torchvision vgg16 (configuration D, no batch norm, 224x224)."""
    cfg = [
        ("conv1_1", 64), ("conv1_2", 64), "M",
        ("conv2_1", 128), ("conv2_2", 128), "M",
        ("conv3_1", 256), ("conv3_2", 256), ("conv3_3", 256), "M",
        ("conv4_1", 512), ("conv4_2", 512), ("conv4_3", 512), "M",
        ("conv5_1", 512), ("conv5_2", 512), ("conv5_3", 512), "M",
    ]
    out = []
    c, h, w = 3, 224, 224
    for item in cfg:
        if item == "M":
            h, w = pool_out(h, w, 2, 2)
            out[-1].act = c * h * w  # pool attributed to the preceding conv
            continue
        name, cout = item
        cv = Conv(c, cout, h, w, 3, 1, 1, bias=True, bn=False)
        c, h, w = cout, cv.ho, cv.wo
        out.append(Entry(name, cv.params, cv.macs, c * h * w))
    # AdaptiveAvgPool2d((7, 7)) is the identity at 224x224 input.
    for name, fin, fout in [("fc6", 512 * 7 * 7, 4096), ("fc7", 4096, 4096), ("fc8", 4096, 1000)]:
        p, m = linear(fin, fout)
        out.append(Entry(name, p, m, fout))
    return out


def alexnet():
    """torchvision alexnet (the 'one weird trick' single-GPU variant: 64-192-384-256-256)."""
    out = []
    h = w = 224
    c1 = Conv(3, 64, h, w, 11, 4, 2)  # 55x55
    h, w = pool_out(c1.ho, c1.wo, 3, 2)  # 27x27
    out.append(Entry("conv1", c1.params, c1.macs, 64 * h * w))
    c2 = Conv(64, 192, h, w, 5, 1, 2)  # 27x27
    h, w = pool_out(c2.ho, c2.wo, 3, 2)  # 13x13
    out.append(Entry("conv2", c2.params, c2.macs, 192 * h * w))
    c3 = Conv(192, 384, h, w, 3, 1, 1)
    out.append(Entry("conv3", c3.params, c3.macs, 384 * h * w))
    c4 = Conv(384, 256, h, w, 3, 1, 1)
    out.append(Entry("conv4", c4.params, c4.macs, 256 * h * w))
    c5 = Conv(256, 256, h, w, 3, 1, 1)
    h, w = pool_out(c5.ho, c5.wo, 3, 2)  # 6x6; AdaptiveAvgPool2d((6,6)) is then the identity
    out.append(Entry("conv5", c5.params, c5.macs, 256 * h * w))
    for name, fin, fout in [("fc6", 256 * 6 * 6, 4096), ("fc7", 4096, 4096), ("fc8", 4096, 1000)]:
        p, m = linear(fin, fout)
        out.append(Entry(name, p, m, fout))
    return out


def _bc(cin, cout, h, w, k, stride=1, pad=0):
    """torchvision BasicConv2d: conv (no bias) + BN."""
    return Conv(cin, cout, h, w, k, stride, pad, bias=False, bn=True)


def _sum(convs):
    return sum(x.params for x in convs), sum(x.macs for x in convs)


def inception_a(cin, pool_features, h, w):
    convs = []
    convs.append(_bc(cin, 64, h, w, 1))
    convs.append(_bc(cin, 48, h, w, 1))
    convs.append(_bc(48, 64, h, w, 5, 1, 2))
    convs.append(_bc(cin, 64, h, w, 1))
    convs.append(_bc(64, 96, h, w, 3, 1, 1))
    convs.append(_bc(96, 96, h, w, 3, 1, 1))
    convs.append(_bc(cin, pool_features, h, w, 1))  # after 3x3/1 avg-pool
    return _sum(convs) + (64 + 64 + 96 + pool_features, h, w)


def inception_b(cin, h, w):
    b3 = _bc(cin, 384, h, w, 3, 2)
    d1 = _bc(cin, 64, h, w, 1)
    d2 = _bc(64, 96, h, w, 3, 1, 1)
    d3 = _bc(96, 96, h, w, 3, 2)
    ho, wo = b3.ho, b3.wo
    return _sum([b3, d1, d2, d3]) + (384 + 96 + cin, ho, wo)


def inception_c(cin, c7, h, w):
    convs = [
        _bc(cin, 192, h, w, 1),
        _bc(cin, c7, h, w, 1),
        _bc(c7, c7, h, w, (1, 7), 1, (0, 3)),
        _bc(c7, 192, h, w, (7, 1), 1, (3, 0)),
        _bc(cin, c7, h, w, 1),
        _bc(c7, c7, h, w, (7, 1), 1, (3, 0)),
        _bc(c7, c7, h, w, (1, 7), 1, (0, 3)),
        _bc(c7, c7, h, w, (7, 1), 1, (3, 0)),
        _bc(c7, 192, h, w, (1, 7), 1, (0, 3)),
        _bc(cin, 192, h, w, 1),  # after 3x3/1 avg-pool
    ]
    return _sum(convs) + (768, h, w)


def inception_d(cin, h, w):
    a1 = _bc(cin, 192, h, w, 1)
    a2 = _bc(192, 320, h, w, 3, 2)
    b1 = _bc(cin, 192, h, w, 1)
    b2 = _bc(192, 192, h, w, (1, 7), 1, (0, 3))
    b3 = _bc(192, 192, h, w, (7, 1), 1, (3, 0))
    b4 = _bc(192, 192, h, w, 3, 2)
    return _sum([a1, a2, b1, b2, b3, b4]) + (320 + 192 + cin, a2.ho, a2.wo)


def inception_e(cin, h, w):
    convs = [
        _bc(cin, 320, h, w, 1),
        _bc(cin, 384, h, w, 1),
        _bc(384, 384, h, w, (1, 3), 1, (0, 1)),
        _bc(384, 384, h, w, (3, 1), 1, (1, 0)),
        _bc(cin, 448, h, w, 1),
        _bc(448, 384, h, w, 3, 1, 1),
        _bc(384, 384, h, w, (1, 3), 1, (0, 1)),
        _bc(384, 384, h, w, (3, 1), 1, (1, 0)),
        _bc(cin, 192, h, w, 1),  # after 3x3/1 avg-pool
    ]
    return _sum(convs) + (320 + 768 + 768 + 192, h, w)


def inception_aux_params():
    """Params of torchvision's InceptionAux head (used only for the total check)."""
    c0 = _bc(768, 128, 5, 5, 1)
    c1 = _bc(128, 768, 5, 5, 5)
    p, _ = linear(768, 1000)
    return c0.params + c1.params + p


def inception_v3():
    """torchvision inception_v3 at 299x299, WITHOUT the auxiliary classifier (AuxLogits)."""
    out = []
    h = w = 299
    a = _bc(3, 32, h, w, 3, 2)  # 149
    out.append(Entry("Conv2d_1a_3x3", a.params, a.macs, 32 * a.ho * a.wo))
    b = _bc(32, 32, a.ho, a.wo, 3)  # 147
    out.append(Entry("Conv2d_2a_3x3", b.params, b.macs, 32 * b.ho * b.wo))
    c = _bc(32, 64, b.ho, b.wo, 3, 1, 1)  # 147
    h, w = pool_out(c.ho, c.wo, 3, 2)  # maxpool1 -> 73
    out.append(Entry("Conv2d_2b_3x3", c.params, c.macs, 64 * h * w))
    d = _bc(64, 80, h, w, 1)  # 73
    out.append(Entry("Conv2d_3b_1x1", d.params, d.macs, 80 * d.ho * d.wo))
    e = _bc(80, 192, d.ho, d.wo, 3)  # 71
    h, w = pool_out(e.ho, e.wo, 3, 2)  # maxpool2 -> 35
    out.append(Entry("Conv2d_4a_3x3", e.params, e.macs, 192 * h * w))
    cin = 192
    mods = [
        ("Mixed_5b", lambda ci, h, w: inception_a(ci, 32, h, w)),
        ("Mixed_5c", lambda ci, h, w: inception_a(ci, 64, h, w)),
        ("Mixed_5d", lambda ci, h, w: inception_a(ci, 64, h, w)),
        ("Mixed_6a", inception_b),
        ("Mixed_6b", lambda ci, h, w: inception_c(ci, 128, h, w)),
        ("Mixed_6c", lambda ci, h, w: inception_c(ci, 160, h, w)),
        ("Mixed_6d", lambda ci, h, w: inception_c(ci, 160, h, w)),
        ("Mixed_6e", lambda ci, h, w: inception_c(ci, 192, h, w)),
        ("Mixed_7a", inception_d),
        ("Mixed_7b", inception_e),
        ("Mixed_7c", inception_e),
    ]
    for name, f in mods:
        p, m, cin, h, w = f(cin, h, w)
        act = cin if name == "Mixed_7c" else cin * h * w  # Mixed_7c absorbs global avg-pool
        out.append(Entry(name, p, m, act))
    p, m = linear(2048, 1000)
    out.append(Entry("fc", p, m, 1000))
    return out


def resnet20():
    """CIFAR-10 ResNet-20 of He et al. 2016 (Sec. 4.2), option-A (parameter-free) shortcuts.

    Same as models/resnet.py of the gTop-k authors' code (hclhkbu/gtopkssgd): convs without
    bias, BN after every conv, DownsampleA (avg-pool + zero channel padding) shortcuts.
    """
    out = []
    h = w = 32
    c1 = Conv(3, 16, h, w, 3, 1, 1, bias=False, bn=True)
    out.append(Entry("conv1", c1.params, c1.macs, 16 * h * w))
    cin = 16
    for si, (planes, stride) in enumerate([(16, 1), (32, 2), (64, 2)]):
        for b in range(3):
            s = stride if b == 0 else 1
            a = Conv(cin, planes, h, w, 3, s, 1, bias=False, bn=True)
            bb = Conv(planes, planes, a.ho, a.wo, 3, 1, 1, bias=False, bn=True)
            h, w, cin = bb.ho, bb.wo, planes
            last = si == 2 and b == 2
            act = planes if last else planes * h * w  # last block absorbs 8x8 avg-pool
            out.append(Entry("layer%d.%d" % (si + 1, b), a.params + bb.params, a.macs + bb.macs, act))
    p, m = linear(64, 10)
    out.append(Entry("fc", p, m, 10))
    return out


def vgg16_cifar():
    """VGG-16 for CIFAR-10 as in the gTop-k authors' code (hclhkbu/gtopkssgd models/vgg.py):
    13 conv3x3 (with bias) each followed by BN, 5 max-pools, ONE Linear(512, 10)."""
    cfg = [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M"]
    names = ["conv1_1", "conv1_2", "conv2_1", "conv2_2", "conv3_1", "conv3_2", "conv3_3",
             "conv4_1", "conv4_2", "conv4_3", "conv5_1", "conv5_2", "conv5_3"]
    out = []
    c, h, w = 3, 32, 32
    i = 0
    for item in cfg:
        if item == "M":
            h, w = pool_out(h, w, 2, 2)
            out[-1].act = c * h * w
            continue
        cv = Conv(c, item, h, w, 3, 1, 1, bias=True, bn=True)
        c, h, w = item, cv.ho, cv.wo
        out.append(Entry(names[i], cv.params, cv.macs, c * h * w))
        i += 1
    p, m = linear(512, 10)
    out.append(Entry("fc", p, m, 10))
    return out


def lstm_ptb():
    """LSTM-PTB as in the gTop-k authors' code (hclhkbu/gtopkssgd models/lstm.py): a 1500-wide
    embedding of PTB's 10,000 words, two LSTM layers of 1500 (PyTorch: input and hidden biases),
    an untied 1500 x 10,000 decoder. The embedding's gradient is dense (nn.Embedding's default),
    so it is a dense entry here. A sample is a 35-token sequence (PyTorch's word_language_model
    default; the release does not say): MACs per sample = 35 x per token, which scales every
    entry alike, so the entries' shares of the compute do not depend on it."""
    seq, h, vocab = 35, 1500, 10_000
    lstm_params = 4 * h * (h + h) + 2 * 4 * h
    return [
        Entry("embedding", vocab * h, 0, seq * h),
        Entry("lstm1", lstm_params, seq * lstm_macs(h, h), seq * h),
        Entry("lstm2", lstm_params, seq * lstm_macs(h, h), seq * h),
        Entry("decoder", h * vocab + vocab, seq * h * vocab, seq * vocab),
    ]


# --------------------------------------------------------------------------------------
# NLP models with embedding tables (sparse variables): issue 11, docs/models.md §6
# --------------------------------------------------------------------------------------
# A sample is one training example as the paper's batch counts it (a 20-word LM sequence,
# a sentence pair, a token of a max-tokens batch, a SQuAD sequence); WORDS[name] says how
# many words or tokens the paper's throughput counts per sample. `params` of an entry is
# its DENSE part; its embedding table (vocab x dim) is listed separately (`emb`).
# fwd_macs count the weight matrices' multiply-accumulates only (LSTM gates 4h(i+h) per
# token, linear in x out); attention scores, softmax normalisation, LayerNorm and lookups
# are not counted (under 1% at these sentence lengths).


def lstm_macs(i, h):
    """Forward MACs per token of one LSTM direction: four gates over [input, state]."""
    return 4 * h * (i + h)


def lstm_tf(i, h):
    """Parameters of a TensorFlow LSTM cell: four gates' weights and one bias each."""
    return 4 * h * (i + h) + 4 * h


def lstm_pt(i, h):
    """Parameters of a PyTorch nn.LSTM layer: weights and two biases per gate."""
    return 4 * h * (i + h) + 8 * h


def lm():
    """Parallax's LM (Jozefowicz et al. 2016, LSTM-2048-512, One Billion Word Benchmark):
    snuspl/parallax parallax/examples/lm1b/language_model.py (vocab 793,470, emb 512,
    state 2048, projection 512, sampled softmax of 8,192) and language_model_graph.py
    (batch 128, num_steps 20). A sample is one 20-word sequence. The softmax's weights and
    bias are one table of 513 columns: sampled_softmax_loss gathers row i of both for the
    same ids, so they are touched together (813,306,750 sparse elements in all, Table 1)."""
    v, e, h, p, t, sampled = 793_470, 512, 2048, 512, 20, 8192
    cell = 4 * h * (e + p) + 4 * h + h * p  # gates over [input 512, projected state 512], bias, projection
    return [
        Entry("embedding", 0, 0, t * e, emb=(v, e), tok=(t, 0)),
        Entry("lstm", cell, t * (4 * h * (e + p) + h * p), t * p),
        # the targets' rows and the batch's sampled classes
        Entry("softmax", 0, t * p * (sampled + 1), t * (sampled + 1), emb=(v, p + 1), tok=(t, sampled)),
    ]


# GNMT-4 of tensorflow/nmt (wmt16_gnmt_4_layer.json, the config Parallax's example runs):
# its block sizes, scaled to Parallax Table 1's dense total of 94.1M (the unscaled count is
# 136,030,209; docs/models.md §6 says why and what the scaling changes).
NMT_VOCAB = 36_548
NMT_DENSE = 94_100_000
NMT_WORDS_PER_SIDE = 8_700 * 0.7 / 128 / 2  # tensorflow/nmt README: 8.7K wps, 0.7 s a step of 128 pairs


def nmt():
    """Parallax's NMT: tensorflow/nmt GNMT with 4 encoder layers (the first bidirectional)
    and 4 decoder layers of 1024 units, normed Bahdanau attention fed to every decoder
    layer (gnmt_v2), a 36,548-row BPE vocabulary per side and a 1024 x vocab projection.
    A sample is one sentence pair."""
    d, v, w = 1024, NMT_VOCAB, NMT_WORDS_PER_SIDE
    raw = [
        ("encoder_embedding", 0, 0, (v, d)),
        ("encoder_l1_bi", 2 * lstm_tf(d, d), 2 * lstm_macs(d, d), None),
        ("encoder_l2", lstm_tf(2 * d, d), lstm_macs(2 * d, d), None),
        ("encoder_l3_l4", 2 * lstm_tf(d, d), 2 * lstm_macs(d, d), None),
        ("decoder_embedding", 0, 0, (v, d)),
        # memory layer (per source word), query layer (per target word), v, bias b, gain g
        ("attention", 2 * d * d + 2 * d + 1, 2 * d * d, None),
        ("decoder_l1_l4", 4 * lstm_tf(2 * d, d), 4 * lstm_macs(2 * d, d), None),
        ("projection", d * v, d * v, None),
    ]
    total = sum(r[1] for r in raw)
    out = []
    kept = 0
    for i, (name, params, macs, emb) in enumerate(raw):
        scaled = round(params * NMT_DENSE / total)
        if i == len(raw) - 1:
            scaled = NMT_DENSE - kept  # the rounding's remainder on the last block
        kept += scaled
        out.append(Entry(name, scaled, round(macs * w), round(w * d) if name != "projection" else round(w * v), emb=emb,
                         tok=None if emb is None else (tokens_per_sample("nmt", v, 128), 0)))
    return out


# Criteo Kaggle's 26 categorical features: rows of each table, C1..C26 in column order
# (facebookresearch/dlrm tools/visualize.py, the Kaggle script's data; docs/research/dlrm.md §1).
DLRM_KAGGLE_ROWS = [1460, 583, 10131227, 2202608, 305, 24, 12517, 633, 3, 93145, 5683, 8351593, 3194,
                    27, 14992, 5461306, 10, 5652, 2173, 4, 7046547, 18, 15, 286181, 105, 142572]


def dlrm():
    """DCT Sec. 3.1's DLRM on Criteo Kaggle (facebookresearch/dlrm, bench/dlrm_s_criteo_kaggle.sh
    with DCT's top MLP): bottom MLP 13-512-256-64-16 over the 13 dense features, 26 embedding
    tables of dimension 16 (one categorical value a sample each), the dot interaction of the 27
    16-vectors (the 351 pairs below the diagonal, with the bottom output: 367 wide), top MLP
    367-512-256-128-1. A sample is one click record."""
    out = []
    fin = 13
    for i, fout in enumerate([512, 256, 64, 16]):
        p, m = linear(fin, fout)
        out.append(Entry("bot%d" % (i + 1), p, m, fout))
        fin = fout
    for i, rows in enumerate(DLRM_KAGGLE_ROWS):
        out.append(Entry("emb_C%d" % (i + 1), 0, 0, 16, emb=(rows, 16), tok=(1.0, 0)))
    out.append(Entry("interaction", 0, 27 * 27 * 16, 27 * 26 // 2 + 16))
    fin = 367
    for i, fout in enumerate([512, 256, 128, 1]):
        p, m = linear(fin, fout)
        out.append(Entry("top%d" % (i + 1), p, m, fout))
        fin = fout
    return out


GNMT8_VOCAB = 32_320  # NVIDIA DLE GNMT v2: shared BPE vocabulary of 32,317, padded to a multiple of 8
GNMT8_TOKENS_PER_SIDE = 47.5 / 2  # Lambda's GNMT logs: tok/s x s/iter / batch = 47.3 (2080 Ti), 47.8 (3090)


def gnmt8():
    """EmbRace's GNMT-8: NVIDIA DeepLearningExamples PyTorch/Translation/GNMT (GNMT v2,
    Wu et al. 2016): encoder of a bidirectional LSTM and three LSTMs (the last two residual),
    decoder of an LSTM with normalised Bahdanau attention and three LSTMs over [state,
    context], a 1024 x vocab classifier with bias. A sample is one sentence pair."""
    d, v, w = 1024, GNMT8_VOCAB, GNMT8_TOKENS_PER_SIDE
    blocks = [
        ("encoder_embedding", 0, 0, (v, d)),
        ("encoder_l1_bi", 2 * lstm_pt(d, d), 2 * lstm_macs(d, d), None),
        ("encoder_l2", lstm_pt(2 * d, d), lstm_macs(2 * d, d), None),
        ("encoder_l3_l4", 2 * lstm_pt(d, d), 2 * lstm_macs(d, d), None),
        ("decoder_embedding", 0, 0, (v, d)),
        ("decoder_l1_attention", lstm_pt(d, d) + 2 * d * d + 2 * d + 1, lstm_macs(d, d) + 2 * d * d, None),
        ("decoder_l2_l4", 3 * lstm_pt(2 * d, d), 3 * lstm_macs(2 * d, d), None),
        ("classifier", d * v + v, d * v, None),
    ]
    tok = (tokens_per_sample("gnmt8", v, 128), 0)
    return [Entry(n, p, round(m * w), round(w * (v if n == "classifier" else d)), emb=e, tok=e and tok) for n, p, m, e in blocks]


TRANSFORMER_VOCAB = 33_712  # NVIDIA DLE Transformer: shared BPE vocabulary of 33,708, padded to a multiple of 8


def transformer():
    """EmbRace's Transformer: Transformer-big (Vaswani et al. 2017: d 1024, FFN 4096, 6 + 6
    layers) as NVIDIA DeepLearningExamples PyTorch/Translation/Transformer trains it on
    WMT14 En-De, with separate encoder and decoder embeddings and an untied output
    projection (the three vocabulary matrices EmbRace's Table 1 counts). A sample is one
    target token with its source token (fairseq's max-tokens batch counts tokens)."""
    d, ff, v = 1024, 4096, TRANSFORMER_VOCAB
    attn = 4 * d * d + 4 * d
    ffn = 2 * d * ff + d + ff
    enc_layer = attn + ffn + 2 * 2 * d
    dec_layer = 2 * attn + ffn + 3 * 2 * d
    tok = (tokens_per_sample("transformer", v, 5120), 0)
    out = [Entry("encoder_embedding", 0, 0, d, emb=(v, d), tok=tok)]
    out += [Entry("encoder.%d" % i, enc_layer, 4 * d * d + 2 * d * ff, d) for i in range(6)]
    out.append(Entry("decoder_embedding", 0, 0, d, emb=(v, d), tok=tok))
    out += [Entry("decoder.%d" % i, dec_layer, 8 * d * d + 2 * d * ff, d) for i in range(6)]
    out.append(Entry("projection", d * v, d * v, v))
    return out


BERT_SEQ = 384  # run_squad's max_seq_length in NVIDIA DLE BERT (Lambda's harness), padded
# Real (non-padding) WordPiece tokens of a SQuAD v1.1 training feature at 384 (question,
# context window and [CLS]/[SEP], uncased vocabulary, doc_stride 128): the mean of Graphcore's
# published histogram of the 88,641 features' lengths (graphcore/tutorials
# blogs_code/packedBERT/histograms.py @e9dbe48, `squad_1_1_histogram`, bin i = length i + 1,
# the data of Krell et al., arXiv 2107.02027): 15,249,479 tokens / 88,641 = 172.04 (55.2%
# padding). Computed by us from the histogram, which the paper does not state as a mean.
SQUAD_FEATURES, SQUAD_REAL_TOKENS = 88_641, 15_249_479


def bert_base():
    """EmbRace's BERT-base: bert-base-uncased (Devlin et al. 2019; vocab 30,522, hidden 768,
    12 layers, FFN 3072) fine-tuned on SQuAD, with the pooler (as Google's and NVIDIA's code
    keep it) and the 768 x 2 span head. The word embedding is the sparse table; position and
    token-type embeddings and the embedding LayerNorm are dense. A sample is one sequence."""
    d, ff, v, s = 768, 3072, 30_522, BERT_SEQ
    layer = 4 * (d * d + d) + 2 * d * ff + d + ff + 2 * 2 * d
    # a row per token of the padded sequence (EmbRace's density agrees: 0.403 x 30,522 / 32
    # = 384.4), of which 384 - 172.04 are the [PAD] row
    pad = s - SQUAD_REAL_TOKENS / SQUAD_FEATURES
    out = [Entry("embeddings", 512 * d + 2 * d + 2 * d, 0, s * d, emb=(v, d), tok=(s, 0), pad=pad)]
    out += [Entry("layer.%d" % i, layer, s * (4 * d * d + 2 * d * ff), s * d) for i in range(12)]
    out.append(Entry("pooler_qa", d * d + d + 2 * d + 2, d * d + s * 2 * d, s * 2))
    return out


def mib(elems):
    return elems * 4 / 2**20


# Published sizes the NLP structures must reproduce: (dense, sparse) element counts of
# Parallax Table 1 to its 4 significant digits, or EmbRace Table 1's MiB of fp32 (model,
# embedding) to its 0.1 MiB, with a stated tolerance where the structure is not exact.
NLP_PUBLISHED = {
    "lm": dict(kind="elements", dense=9.4e6, sparse=813.3e6,
               src="Parallax Table 1: 9.4M dense, 813.3M sparse elements"),
    "nmt": dict(kind="elements", dense=94.1e6, sparse=74.9e6,
                src="Parallax Table 1: 94.1M dense (the scaled total), 74.9M sparse elements"),
    "gnmt8": dict(kind="mib", model=739.1, emb=252.5, tol=0.0005,
                  src="EmbRace Table 1: 739.1 MB model, 252.5 MB embeddings (MiB of fp32)"),
    "transformer": dict(kind="mib", model=1067.5, emb=263.4, tol=0.0005,
                        src="EmbRace Table 1: 1067.5 MB model, 263.4 MB embeddings (ours 1067.8: +0.03%)"),
    "bert_base": dict(kind="mib", model=417.7, emb=89.4, tol=0.0005,
                      src="EmbRace Table 1: 417.7 MB model, 89.4 MB embeddings"),
    "dlrm": dict(kind="exact", dense=508_753, sparse=33_762_577 * 16,
                 src="docs/research/dlrm.md: 508,753 dense (bottom 155,984 + DCT's top 352,769) and 33,762,577 x 16 sparse elements"),
}


def tokens_per_sample(name, vocab, batch):
    """Rows a sample looks up in each table, from the paper's density at its batch: the
    papers' densities count a row per token (Parallax's LM: its 2,560 input tokens and the
    softmax's 2,560 targets and 8,192 samples give its alpha_model; EmbRace's BERT-base:
    0.403 x 30,522 = 12,300 rows against 32 x 384 = 12,288 tokens)."""
    return NLP_META[name]["density"] * vocab / batch


def check_nlp(name, entries):
    dense = sum(e.params for e in entries)
    sparse = sum(e.emb[0] * e.emb[1] for e in entries if e.emb)
    pub = NLP_PUBLISHED[name]
    if pub["kind"] == "exact":
        got = [(dense, pub["dense"]), (sparse, pub["sparse"])]
        ok = all(g == w for g, w in got)
    elif pub["kind"] == "elements":
        # Table 1's figures are millions rounded to one decimal
        got = [(dense / 1e6, pub["dense"] / 1e6), (sparse / 1e6, pub["sparse"] / 1e6)]
        ok = all(round(g, 1) == w for g, w in got)
    else:
        got = [(mib(dense + sparse), pub["model"]), (mib(sparse), pub["emb"])]
        ok = all(round(g, 1) == w or abs(g - w) <= pub["tol"] * w for g, w in got)
    if name == "lm":
        # the LM's tokens (20 a sequence; the softmax's 8,192 samples) at Parallax's batch of
        # 128 must give its alpha_model, 8.4E-3 to two digits: the tokens are not derived
        # from it
        rows = sum((128 * e.tok[0] + e.tok[1]) * e.emb[1] for e in entries if e.emb)
        alpha = rows / sparse
        if round(alpha, 4) != NLP_META["lm"]["density"]:
            print("FAIL lm: tokens give alpha %.5f against Parallax's %s" % (alpha, NLP_META["lm"]["density"]))
            ok = False
    if not ok:
        print("FAIL %s: %s against published %s" % (name, [g for g, _ in got], [w for _, w in got]))
    return ok, dense, sparse


# Per-model facts the engine needs beyond the layers: the density of every table (fraction
# of its rows one GPU touches per iteration, at the paper's batch), the words or tokens
# the throughput counts per sample, and their unit.
NLP_META = {
    "lm": dict(density=8.4e-3, density_src="Parallax Table 1: alpha_model 8.4E-3 at 128 sequences per GPU",
               words=20.0, unit="words/s"),
    "nmt": dict(density=9.3e-2, density_src="Parallax Table 1: alpha_model 9.3E-2 at 128 sentence pairs per GPU",
                words=round(2 * NMT_WORDS_PER_SIDE, 2), unit="words/s"),
    "gnmt8": dict(density=0.103, density_src="EmbRace Sec. 4.1.2: 89.7% average sparsity at 128 sentence pairs per GPU",
                  words=2 * GNMT8_TOKENS_PER_SIDE, unit="tokens/s"),
    "transformer": dict(density=0.134, density_src="EmbRace Sec. 4.1.2: 86.6% average sparsity at 5,120 tokens per GPU",
                        words=1.0, unit="tokens/s"),
    "bert_base": dict(density=0.403, density_src="EmbRace Sec. 4.1.2: 59.7% average sparsity at 32 sequences per GPU",
                      words=SQUAD_REAL_TOKENS / SQUAD_FEATURES, unit="tokens/s"),
    # no measured density: 0 makes each table's density follow the batch (a row per sample,
    # counted distinct: min(1, batch / rows), an upper bound; Model::from_preset)
    "dlrm": dict(density=0.0, density_src="none measured: each table's min(1, batch / rows), every sample's row counted distinct (an upper bound)",
                 words=1.0, unit="samples/s"),
}


# --------------------------------------------------------------------------------------
# Published totals to check against
# --------------------------------------------------------------------------------------

# (params, macs_rounded_to, macs_published) -- params must match EXACTLY; MACs must round
# to the published figure. torchvision figures: "num_params" and "GFLOPS" (GMACs) on the
# torchvision model pages (pytorch.org/vision/stable/models.html).
PUBLISHED = {
    "resnet50": dict(params=25_557_032, gmacs=4.09, src="torchvision resnet50: 25,557,032 params, 4.09 GFLOPS(=GMACs)"),
    "vgg16": dict(params=138_357_544, gmacs=15.47, src="torchvision vgg16: 138,357,544 params, 15.47 GFLOPS(=GMACs)"),
    "alexnet": dict(params=61_100_840, gmacs=0.71, src="torchvision alexnet: 61,100,840 params, 0.71 GFLOPS(=GMACs)"),
    # inception: torchvision's 27,161,264 INCLUDES AuxLogits; we check (ours + aux) == that.
    "inception_v3": dict(params=27_161_264, gmacs=5.71, src="torchvision inception_v3: 27,161,264 params incl. AuxLogits, 5.71 GFLOPS(=GMACs)"),
    # He et al. 2016 Table 6: ResNet-20 "0.27M" params. Exact count for option-A shortcuts.
    "resnet20": dict(params=269_722, gmacs=None, src="He et al. 2016 Table 6: 0.27M params (exact option-A count 269,722)"),
    # Commonly quoted for kuangliu-style CIFAR VGG16 with BN and one Linear(512,10): 14.73M.
    "vgg16_cifar": dict(params=14_728_266, gmacs=None, src="CIFAR VGG-16 (BN, 1 FC): 14,728,266 params"),
    # gTop-k release models/lstm.py with PTB's 10,000 words (docs/research/gtopk-release.md §2)
    # (inferred: the release builds the vocabulary from the data; PTB's is 10,000 words)
    "lstm_ptb": dict(params=66_034_000, gmacs=None, src="gTop-k release LSTM-PTB (2 x LSTM 1500, emb 1500, 10k words): 66,034,000 params, inferred from its code"),
}

# --------------------------------------------------------------------------------------
# Throughputs (samples/s on ONE GPU, training)
# --------------------------------------------------------------------------------------

# Measured (or back-computed exactly from published measurements).
PARALLAX_RN50 = 7600.0 / 39.8  # Table 1 AR 7.6k img/s on 48 GPUs / Fig. 9 speedup 39.8x
PARALLAX_INC3 = 5900.0 / 43.6  # Table 1 AR 5.9k img/s on 48 GPUs / Fig. 9 speedup 43.6x

# gTop-k authors' repo hclhkbu/gtopkssgd, scripts/icdcs2019/communication.py,
# realdata_speedup(): the nworkers=1 entry of each model (data behind Fig. 10).
GTOPK_1GPU = {"resnet50": 52.873, "alexnet": 173.469, "resnet20": 920.632, "vgg16_cifar": 1317.333,
              "lstm_ptb": 392.0}
# Same function, dense S-SGD per-worker throughput at 32 workers (x32 = Table IV 'Dense').
GTOPK_DENSE32_PER_WORKER = {"vgg16_cifar": 12.600, "resnet20": 287.900, "alexnet": 1.234, "resnet50": 10.721}
GTOPK_TABLE_IV_DENSE = {"vgg16_cifar": 403, "resnet20": 9212, "alexnet": 39, "resnet50": 343}

# Lambda TensorFlow benchmark (tf_cnn_benchmarks), LambdaColdStorage/lambda-tensorflow-benchmark
# tf-train-throughput-fp32.csv + tf-train-bs-fp32.csv at commit 080a6b7fee1c651228f227f52a2bed6ff90579cf.
LAMBDA_A100_PCIE = {"alexnet": (10187, 1792), "inception_v3": (627, 224), "resnet50": (953, 224), "vgg16": (504, 224)}
# Lambda TF benchmark, same files, row "V100 32GB" (log Platinum-Tesla_V100-SXM3-32GB_HP16_TF2_2; fp32).
LAMBDA_V100_SXM3 = {"alexnet": (5132, 1536), "inception_v3": (273, 192), "resnet50": (432, 192), "vgg16": (249, 192)}
# Lambda PyTorch benchmark (lambdal/deeplearning-benchmark, pytorch-train-throughput-v2-fp32.csv), resnet50 only.
LAMBDA_PT_H100_SXM5_RN50 = (1894, 640)
LAMBDA_PT_H200_SXM_RN50 = (2259, 1280)
LAMBDA_1080TI = {"alexnet": (2636, 512), "inception_v3": (131, 64), "resnet50": (209, 64), "vgg16": (125, 56)}


# Our own measurement (docs/calibration.md, "A third H200 run"): PyTorch 2.11 + torchvision 0.26
# training steps on one H200 (fp32 weights, TF32 convolutions, synthetic data, SGD with momentum),
# scripts/gpu/torch-train-profile.py, two machines; medians of 20 steps, the runs' mean at a batch
# both timed. {model: {batch: samples/s}}.
H200_MEASURED_GLOB = "calibration/measurements/h200-torch-train-*.json"
H200_SOURCE = "measured by us: PyTorch 2.11 on one H200, FP32 (TF32 convs), scripts/gpu/torch-train-profile.py, calibration/measurements/h200-torch-train-*.json"
# Measured (batch, samples/s) at other batches, ascending, by (model, gpu): GpuThroughput::by_batch.
CURVES = {}


def h200_runs():
    """Each measurement file's models ({model: record}), in file order."""
    import glob
    import json
    import os

    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    return [json.load(open(f))["models"] for f in sorted(glob.glob(os.path.join(root, H200_MEASURED_GLOB)))]


def h200_measured():
    got = {}
    for run in h200_runs():
        for m, rec in run.items():
            for b, v in rec["batches"].items():
                if "samples_per_s" in v:
                    got.setdefault(m, {}).setdefault(int(b), []).append(v["samples_per_s"])
    return {m: {b: sum(v) / len(v) for b, v in sorted(bs.items())} for m, bs in got.items()}


def h200_shares():
    """{model: (forward fraction, [(forward share, backward share)] in forward order)} from the
    instrumented steps of calibration/measurements/h200-torch-train-*.json (the runs' mean where
    both have one), for the models whose instrumentation (a CUDA event at each entry's forward
    and at each gradient) cost under 1% of the step: the four ImageNet models (0.05 to 0.22%).
    The CIFAR models' steps, launch-bound, took 25 to 28% longer with the events, so their
    shares are not a measurement of the step dtsim models and they keep the MAC shares.
    An entry's backward time is the time its gradients were ready after the next entry's
    (PyTorch runs the backward pass from the last entry to the first): ready(l) - ready(l + 1)."""
    got = {}
    for run in h200_runs():
        for m, rec in run.items():
            i = rec.get("instrumented")
            if i is None:
                continue
            plain = rec["batches"][str(rec["instrumented_batch"])]["step_ms_median"]
            if i["step_ms"] / plain - 1 > 0.01:
                continue
            got.setdefault(m, []).append(i)
    out = {}
    for m, runs in got.items():
        names = list(runs[0]["entry_forward_ms"])
        mean = lambda key, n: sum(r[key][n] for r in runs) / len(runs)
        fwd = [mean("entry_forward_ms", n) for n in names]
        ready = [mean("entry_grad_ready_ms", n) for n in names] + [0.0]
        back = [ready[k] - ready[k + 1] for k in range(len(names))]
        assert min(back) >= 0, m
        # the forward fraction from the same events as the shares: the entries' forward times
        # against the backward pass to the first entry's gradients (the step's own forward_ms
        # starts before the first entry, with the host's zero_grad and first calls while the
        # GPU, synchronised after each step, idles: 1.6 to 1.8% of it)
        phi = sum(fwd) / (sum(fwd) + ready[0])
        out[m] = (names, round(phi, 4), [(round(f / sum(fwd), 6), round(b / sum(back), 6)) for f, b in zip(fwd, back)])
    return out


# Measured entry shares by (model, gpu): (forward fraction, [(forward, backward)]); see h200_shares.
SHARES = {}


def monotone(points):
    """The points whose step time (batch / rate) no larger batch undercuts: where a smaller
    batch took longer than a larger one (`vgg16_cifar` at 32 samples, 7.3 ms against 5.9 at
    64, where the host's kernel launches, not the GPU, set the step), the smaller batch's
    point is dropped."""
    keep = []
    for i, (b, r) in enumerate(points):
        if all(b / r <= b2 / r2 for b2, r2 in points[i + 1:]):
            keep.append((b, r))
    return keep


def r1(anchor, ref_model, ref_rn50):
    """Derivation rule R1: throughput(m, g) = throughput(resnet50, g) * t_ref(m) / t_ref(resnet50)."""
    return anchor * ref_model / ref_rn50


def throughputs():
    """Return {model: [(gpu, batch, samples_per_s, source, derived_bool, arithmetic)]}."""
    T = {m: [] for m in ["resnet50", "inception_v3", "vgg16", "alexnet", "resnet20", "vgg16_cifar", "lstm_ptb"]}
    L1 = LAMBDA_1080TI
    lam1080 = "Lambda TF bench GTX 1080 Ti"

    def add(m, gpu, batch, v, src, derived, arith=""):
        # Measured values are kept as published; back-computed ones (Parallax) to 0.01,
        # DERIVED ones to 0.1 samples/s.
        T[m].append((gpu, batch, round(v, 1) if derived else round(v, 3), src, derived, arith))

    # ---- titan-xp (Parallax testbed: TF 1.6 + Horovod, batch 64/GPU)
    add("resnet50", "titan-xp", 64, round(PARALLAX_RN50, 2),
        "Parallax (EuroSys'19) Table 1 AR 7.6k img/s on 48 GPUs / Fig. 9 speedup 39.8x", False,
        "7600 / 39.8 = %.2f" % PARALLAX_RN50)
    add("inception_v3", "titan-xp", 64, round(PARALLAX_INC3, 2),
        "Parallax (EuroSys'19) Table 1 AR 5.9k img/s on 48 GPUs / Fig. 9 speedup 43.6x", False,
        "5900 / 43.6 = %.2f" % PARALLAX_INC3)
    for m in ["vgg16", "alexnet"]:
        v = r1(PARALLAX_RN50, L1[m][0], L1["resnet50"][0])
        add(m, "titan-xp", 64, v,
            "DERIVED: titan-xp resnet50 %.2f x %s %s/resnet50 %d/%d" % (PARALLAX_RN50, lam1080, m, L1[m][0], L1["resnet50"][0]),
            True, "%.2f x %d / %d = %.1f" % (PARALLAX_RN50, L1[m][0], L1["resnet50"][0], v))
    v = r1(PARALLAX_RN50, GTOPK_1GPU["resnet20"], GTOPK_1GPU["resnet50"])
    add("resnet20", "titan-xp", 128, v,
        "DERIVED: titan-xp resnet50 %.2f x gTop-k P102-100 resnet20/resnet50 920.632/52.873" % PARALLAX_RN50,
        True, "%.2f x 920.632 / 52.873 = %.1f" % (PARALLAX_RN50, v))
    v = r1(PARALLAX_RN50, GTOPK_1GPU["vgg16_cifar"], GTOPK_1GPU["resnet50"])
    add("vgg16_cifar", "titan-xp", 128, v,
        "DERIVED: titan-xp resnet50 %.2f x gTop-k P102-100 vgg16_cifar/resnet50 1317.333/52.873" % PARALLAX_RN50,
        True, "%.2f x 1317.333 / 52.873 = %.1f" % (PARALLAX_RN50, v))

    # ---- p102-100 (gTop-k testbed: PyTorch 0.4, 1 GbE, Celeron N3350 hosts)
    gsrc = "gTop-k (Shi et al. ICDCS'19) Fig. 10 1-GPU data, hclhkbu/gtopkssgd scripts/icdcs2019/communication.py"
    add("resnet50", "p102-100", 256, GTOPK_1GPU["resnet50"], gsrc, False, "measured 52.873")
    add("alexnet", "p102-100", 64, GTOPK_1GPU["alexnet"], gsrc, False, "measured 173.469")
    add("resnet20", "p102-100", 128, GTOPK_1GPU["resnet20"], gsrc, False, "measured 920.632")
    add("vgg16_cifar", "p102-100", 128, GTOPK_1GPU["vgg16_cifar"], gsrc, False, "measured 1317.333")
    # the batch of the LSTM's timing run is not in the release: the paper's Table III batch
    add("lstm_ptb", "p102-100", 100, GTOPK_1GPU["lstm_ptb"], gsrc, False, "measured 392.0")
    for m in ["vgg16", "inception_v3"]:
        v = r1(GTOPK_1GPU["resnet50"], L1[m][0], L1["resnet50"][0])
        add(m, "p102-100", 256, v,
            "DERIVED: p102-100 resnet50 52.873 x %s %s/resnet50 %d/%d" % (lam1080, m, L1[m][0], L1["resnet50"][0]),
            True, "52.873 x %d / %d = %.1f" % (L1[m][0], L1["resnet50"][0], v))

    def cifar_by_r1(gpu, rn50):
        # the CIFAR models on a GPU: its resnet50 x the gTop-k testbed's ratios (R1)
        for m in ["resnet20", "vgg16_cifar"]:
            v = r1(rn50, GTOPK_1GPU[m], GTOPK_1GPU["resnet50"])
            add(m, gpu, 128, v,
                "DERIVED: %s resnet50 %d x gTop-k P102-100 %s/resnet50 %.3f/52.873" % (gpu, rn50, m, GTOPK_1GPU[m]),
                True, "%d x %.3f / 52.873 = %.1f" % (rn50, GTOPK_1GPU[m], v))

    # ---- a100 (Lambda TF benchmark, A100 40GB PCIe, 'fp32' label = TF32 tensor-core math)
    # ---- v100 (Lambda TF benchmark, V100-SXM3-32GB, true fp32: Volta has no TF32)
    for gpu, table, src in [
        ("a100", LAMBDA_A100_PCIE,
         "Lambda TF benchmark (tf_cnn_benchmarks) A100 40GB PCIe 1 GPU, fp32/TF32, tf-train-throughput-fp32.csv"),
        ("v100", LAMBDA_V100_SXM3,
         "Lambda TF benchmark (tf_cnn_benchmarks) V100-SXM3-32GB 1 GPU, fp32, tf-train-throughput-fp32.csv"),
    ]:
        for m in ["resnet50", "inception_v3", "vgg16", "alexnet"]:
            v, b = table[m]
            add(m, gpu, b, v, src, False, "measured %d" % v)
        cifar_by_r1(gpu, table["resnet50"][0])

    # ---- h100 (Lambda PyTorch benchmark: resnet50 only; every other figure by R1 on our H200's:
    # its rate for the model at each batch measured x 1894 / its resnet50 at the anchor's batch,
    # 640, so the H100 runs each model at 0.849 of the H200's speed at every batch)
    # ---- h200: our own measurement of all six vision models at several batches (since
    # 2026-11-28; before, Lambda's resnet50 2259 @1280 and the rest by R1 on the A100 TF ratios).
    # A row is the largest batch measured; the others are its by_batch curve.
    H = h200_measured()
    rn50, anchor = LAMBDA_PT_H100_SXM5_RN50
    ref = round(H["resnet50"][anchor], 1)
    hopper = {m: monotone([(b, round(v, 1)) for b, v in H[m].items()])
              for m in ["resnet50", "inception_v3", "vgg16", "alexnet", "resnet20", "vgg16_cifar"]}
    for m, pts in hopper.items():
        if m == "resnet50":
            add(m, "h100", anchor, rn50,
                "Lambda PyTorch benchmark (NVIDIA DLE ConvNets) H100 80GB SXM5 1 GPU, FP32 (TF32 convs), pytorch-train-throughput-v2-fp32.csv; by_batch DERIVED: x our h200's rates / its resnet50@640 %.1f" % ref,
                False, "measured %d" % rn50)
            below = [(b, v) for b, v in pts if b < anchor]
        else:
            (b, v), below = pts[-1], pts[:-1]
            d = r1(rn50, v, ref)
            add(m, "h100", b, d,
                "DERIVED: h100 resnet50 %d@%d x our h200 %s@%d/resnet50@%d %.1f/%.1f, and at other batches by_batch" % (rn50, anchor, m, b, anchor, v, ref),
                True, "%d x %.1f / %.1f = %.1f" % (rn50, v, ref, d))
        CURVES[(m, "h100")] = [(b, round(r1(rn50, v, ref), 1)) for b, v in below]
    for m, pts in hopper.items():
        (b, v), rest = pts[-1], pts[:-1]
        add(m, "h200", b, v, H200_SOURCE, False, "measured %.1f" % v)
        CURVES[(m, "h200")] = rest
    # each entry's share of the forward and the backward pass, measured on the H200 (the four
    # ImageNet models), the H100's by the same assumption as D8
    for m, (names, phi, shares) in h200_shares().items():
        SHARES[(m, "h200")] = SHARES[(m, "h100")] = (names, phi, shares)
    nlp_throughputs(add, T)
    # DLRM on DCT's CPU machines (docs/models.md §8): 6 FLOP a MAC an iteration at 51.75 GFLOP/s
    macs = sum(e.macs for e in dlrm())
    v = 51.75e9 / (6 * macs)
    T["dlrm"] = []
    add("dlrm", "xeon-18c", 128, v,
        "DERIVED: 51.75 GFLOP/s (DLRM paper Sec. 5.2 CPU rate x 18/40 cores, docs/models.md Sec. 8) / 6 FLOP a MAC x %d MACs a sample" % macs,
        True, "51.75e9 / (6 x %d) = %.1f" % (macs, v))
    return T


# ---- NLP single-GPU figures (docs/models.md §6.3)
# Parallax Fig. 9 normalises each model's 48-GPU throughput by its own 1-GPU run: LM 9.4x and
# NMT 16.5x for Parallax (HYB), whose 48-GPU figures are Table 4's 277k and 191k words/s.
PARALLAX_LM_WPS = 277_000 / 9.4
PARALLAX_NMT_WPS = 191_000 / 16.5
# Lambda PyTorch benchmark (lambdal/deeplearning-benchmark, pytorch-train-throughput-fp32.csv at
# 52ff518f): NVIDIA DLE GNMT v2 tokens/s (source + target), BERT-base SQuAD sequences/s,
# Transformer-XL base tokens/s; (throughput, batch). RTX 3090 "fp32" is TF32 math.
LAMBDA_PT_GNMT = {"rtx3090": (43_323, 288), "rtx2080ti": (15_983, 108), "gtx1080ti": (11_948, 108)}
LAMBDA_PT_BERT = {"rtx3090": (72, 26), "rtx2080ti": (30, 10)}
LAMBDA_PT_TXL = {"rtx3090": 11_772, "rtx2080ti": 4_109, "v100": 6_518}
# NVIDIA DLE PyTorch/Translation/Transformer README: 1 x V100 16G, FP32, 2,560 tokens a batch.
NVIDIA_TRANSFORMER_V100 = (7_635, 2560)
# FP32 peak TFLOPS from NVIDIA's specification sheets (boost clock).
FP32_PEAK = {"titan-xp": 12.15, "gtx1080ti": 11.34, "rtx2080": 10.07, "rtx2080ti": 13.45}


def nlp_throughputs(add, T):
    for m in NLP_META:
        T[m] = []
    words = {m: NLP_META[m]["words"] for m in NLP_META}
    # titan-xp: Parallax's own single-GPU runs (batch 128), through Fig. 9's normalisation
    v = PARALLAX_LM_WPS / words["lm"]
    add("lm", "titan-xp", 128, round(v, 2),
        "Parallax (EuroSys'19) Table 4 HYB 277k words/s on 48 GPUs / Fig. 9 speedup 9.4x, 20 words a sample", False,
        "277000 / 9.4 / 20 = %.2f" % v)
    v = PARALLAX_NMT_WPS / words["nmt"]
    add("nmt", "titan-xp", 128, round(v, 2),
        "Parallax (EuroSys'19) Table 4 HYB 191k words/s on 48 GPUs / Fig. 9 speedup 16.5x, %.2f words a sample" % words["nmt"],
        False, "191000 / 16.5 / %.2f = %.2f" % (words["nmt"], v))
    # rtx3090: Lambda's measurements where it has the model
    g, b = LAMBDA_PT_GNMT["rtx3090"]
    v = g / words["gnmt8"]
    add("gnmt8", "rtx3090", b, round(v, 2),
        "Lambda PyTorch benchmark NVIDIA DLE GNMT v2 RTX 3090 1 GPU, TF32, 43,323 tokens/s / 47.5 tokens a sample", False,
        "43323 / 47.5 = %.2f" % v)
    sq, b = LAMBDA_PT_BERT["rtx3090"]
    add("bert_base", "rtx3090", b, float(sq),
        "Lambda PyTorch benchmark NVIDIA DLE BERT-base SQuAD RTX 3090 1 GPU, TF32", False, "measured %d" % sq)
    # Transformer-big: NVIDIA's V100 FP32 figure x Lambda's Transformer-XL ratio of the GPUs
    t, b = NVIDIA_TRANSFORMER_V100
    for gpu, ratio_gpu, scale, note in [("rtx3090", "rtx3090", 1.0, ""),
                                        ("rtx2080", "rtx2080ti", FP32_PEAK["rtx2080"] / FP32_PEAK["rtx2080ti"],
                                         " x FP32 peak rtx2080/rtx2080ti 10.07/13.45")]:
        v = t * LAMBDA_PT_TXL[ratio_gpu] / LAMBDA_PT_TXL["v100"] * scale
        add("transformer", gpu, b, v,
            "DERIVED: NVIDIA DLE Transformer V100 FP32 7635 tokens/s x Lambda Transformer-XL %s/v100 %d/%d%s"
            % (ratio_gpu, LAMBDA_PT_TXL[ratio_gpu], LAMBDA_PT_TXL["v100"], note),
            True, "7635 x %d / %d x %.4f = %.1f" % (LAMBDA_PT_TXL[ratio_gpu], LAMBDA_PT_TXL["v100"], scale, v))
    # rtx2080 (EmbRace's 8 GB card, no public training benchmark): RTX 2080 Ti x FP32 peak ratio
    r2080 = FP32_PEAK["rtx2080"] / FP32_PEAK["rtx2080ti"]
    g, b = LAMBDA_PT_GNMT["rtx2080ti"]
    v = g * r2080 / words["gnmt8"]
    add("gnmt8", "rtx2080", b, v,
        "DERIVED: Lambda GNMT v2 RTX 2080 Ti 15,983 tokens/s x FP32 peak rtx2080/rtx2080ti 10.07/13.45 / 47.5",
        True, "15983 x %.4f / 47.5 = %.1f" % (r2080, v))
    sq, b = LAMBDA_PT_BERT["rtx2080ti"]
    v = sq * r2080
    add("bert_base", "rtx2080", b, v,
        "DERIVED: Lambda BERT-base SQuAD RTX 2080 Ti 30 sequences/s x FP32 peak rtx2080/rtx2080ti 10.07/13.45",
        True, "30 x %.4f = %.1f" % (r2080, v))
    # LM on the RTX cards: Parallax's TITAN Xp figure x Lambda's GNMT (LSTM) ratio of the GPUs,
    # the GTX 1080 Ti standing for the TITAN Xp by FP32 peak
    lm_xp = PARALLAX_LM_WPS / words["lm"]
    xp = FP32_PEAK["gtx1080ti"] / FP32_PEAK["titan-xp"]
    for gpu, ref, scale, note in [("rtx3090", "rtx3090", 1.0, ""),
                                  ("rtx2080", "rtx2080ti", r2080, " x FP32 peak rtx2080/rtx2080ti 10.07/13.45")]:
        ratio = LAMBDA_PT_GNMT[ref][0] / LAMBDA_PT_GNMT["gtx1080ti"][0]
        v = lm_xp * ratio * xp * scale
        add("lm", gpu, 128, v,
            "DERIVED: titan-xp lm %.2f x Lambda GNMT v2 %s/gtx1080ti %d/%d x FP32 peak gtx1080ti/titan-xp 11.34/12.15%s"
            % (lm_xp, ref, LAMBDA_PT_GNMT[ref][0], LAMBDA_PT_GNMT["gtx1080ti"][0], note),
            True, "%.2f x %.4f x %.4f x %.4f = %.1f" % (lm_xp, ratio, xp, scale, v))


# --------------------------------------------------------------------------------------
# Output
# --------------------------------------------------------------------------------------

MODELS = [
    ("resnet50", "224x224x3 ImageNet", resnet50, "RESNET50"),
    ("inception_v3", "299x299x3 ImageNet", inception_v3, "INCEPTION_V3"),
    ("vgg16", "224x224x3 ImageNet", vgg16, "VGG16"),
    ("alexnet", "224x224x3 ImageNet", alexnet, "ALEXNET"),
    ("resnet20", "32x32x3 CIFAR-10", resnet20, "RESNET20"),
]
EXTRA = [("vgg16_cifar", "32x32x3 CIFAR-10", vgg16_cifar, "VGG16_CIFAR"),
         ("lstm_ptb", "Penn Treebank, 35-token sequences", lstm_ptb, "LSTM_PTB")]
NLP = [
    ("lm", "One Billion Word Benchmark, 20-word sequences", lm, "LM"),
    ("nmt", "WMT16 De-En BPE, sentence pairs", nmt, "NMT"),
    ("gnmt8", "WMT16 En-De BPE, sentence pairs", gnmt8, "GNMT8"),
    ("transformer", "WMT14 En-De BPE, tokens", transformer, "TRANSFORMER"),
    ("bert_base", "SQuAD v1.1, 384-token sequences", bert_base, "BERT_BASE"),
    ("dlrm", "Criteo Kaggle, click records", dlrm, "DLRM"),
]


def check(name, entries):
    ok = True
    tp = sum(e.params for e in entries)
    tm = sum(e.macs for e in entries)
    pub = PUBLISHED[name]
    want = pub["params"]
    got = tp + (inception_aux_params() if name == "inception_v3" else 0)
    if got != want:
        print("FAIL %s params %d != published %d" % (name, got, want))
        ok = False
    if pub["gmacs"] is not None and round(tm / 1e9, 2) != pub["gmacs"]:
        print("FAIL %s GMACs %.4f does not round to published %.2f" % (name, tm / 1e9, pub["gmacs"]))
        ok = False
    return ok, tp, tm


def fmt_int(n):
    return "{:_}".format(n)


def emit_rust(tables, T):
    o = []
    o.append("//! Built-in model presets: per-layer (or per-block) parameter counts, forward FLOPs and output activation sizes, plus measured single-GPU throughputs used to turn FLOPs into time. Sources: docs/models.md.")
    o.append("//!")
    o.append("//! GENERATED by `python3 docs/model_tables.py --rust`; edit the script, not this file.")
    o.append("//! Counting conventions: `params` = weights + biases + BN gamma/beta; `fwd_macs` = conv +")
    o.append("//! fully-connected multiply-accumulates only (BN/ReLU/pool/add not counted); `activation_elems`")
    o.append("//! = elements of the tensor handed to the next entry, pooling between entries belonging to the")
    o.append("//! earlier entry. Throughput `source` strings starting with \"DERIVED\" are not measurements;")
    o.append("//! the arithmetic is in docs/models.md.")
    o.append("")
    o.append("""/// One layer or block of a preset model, in forward order.
#[derive(Debug, Clone, Copy)]
pub struct PresetLayer {
    /// Layer or block name, e.g. "conv1", "layer3.2", "fc6".
    pub name: &'static str,
    /// Trainable dense parameters (weights + biases + batch-norm scale/shift; NOT batch-norm running stats).
    pub params: u64,
    /// Forward multiply-accumulate operations for ONE sample (MACs, not FLOPs).
    pub fwd_macs: u64,
    /// Elements of the layer's output activation for ONE sample.
    pub activation_elems: u64,
    /// The entry's embedding table, a sparse variable (not counted in `params`).
    pub embedding: Option<PresetTable>,
}

/// An embedding table of a preset: `vocab` rows of `dim` values.
#[derive(Debug, Clone, Copy)]
pub struct PresetTable {
    /// Rows.
    pub vocab: u64,
    /// Values per row.
    pub dim: u64,
    /// Rows a sample looks up per iteration, a row per token (the token model's tokens per
    /// batch are `batch x tokens_per_sample + sampled`).
    pub tokens_per_sample: f64,
    /// Rows a batch looks up besides its samples' (the LM's sampled softmax classes).
    pub sampled: u64,
    /// Of a sample's `tokens_per_sample`, those on the table's padding row (a sequence padded
    /// to a fixed length; the token model's padding per batch is `batch x padding_per_sample`).
    pub padding_per_sample: f64,
}

/// A measured single-GPU training throughput of one model on one GPU.
#[derive(Debug, Clone, Copy)]
pub struct GpuThroughput {
    /// GPU key used in scenario files: "titan-xp", "p102-100", "a100", "v100", "h100", "h200".
    pub gpu: &'static str,
    /// Batch size per GPU at which it was measured.
    pub batch: u32,
    /// Training throughput in samples per second on one GPU (forward + backward + update).
    pub samples_per_s: f64,
    /// Short citation (the full one is in docs/models.md).
    pub source: &'static str,
    /// The same GPU measured by the same source at other batches: (batch, samples per
    /// second), ascending, all below `batch`; empty where only `batch` was measured.
    pub by_batch: &'static [(u32, f64)],
    /// The forward pass's measured share of forward + backward; `None`: one third.
    pub forward_fraction: Option<f64>,
    /// Each entry's measured share of the forward pass and of the backward pass, in
    /// forward order (each column sums to 1); empty: both in proportion to the entries'
    /// forward MACs.
    pub entry_shares: &'static [(f64, f64)],
}

/// A built-in model.
#[derive(Debug, Clone, Copy)]
pub struct PresetModel {
    /// Key used in scenario files: "resnet50", "inception_v3", "vgg16", "alexnet", "resnet20".
    pub name: &'static str,
    /// Input description, e.g. "224x224x3 ImageNet", "32x32x3 CIFAR-10".
    pub input: &'static str,
    /// Layers in forward order.
    pub layers: &'static [PresetLayer],
    /// Measured throughputs, one per GPU.
    pub throughputs: &'static [GpuThroughput],
    /// Fraction of each embedding table's rows one GPU touches per iteration, at the batch the
    /// source measured it (0 for a model without tables; 0 for a model with tables: each
    /// table's own, min(1, batch x tokens_per_sample / vocab), from the batch).
    pub density: f64,
    /// Where `density` comes from ("" for a model without tables).
    pub density_source: &'static str,
    /// Words or tokens the throughput counts per sample (1 where it counts samples).
    pub words_per_sample: f64,
    /// Unit of the throughput: "samples/s", or "words/s" or "tokens/s" where the papers count them.
    pub throughput_unit: &'static str,
}""")
    o.append("")
    docs = {
        "resnet50": "ResNet-50, torchvision `resnet50` (v1.5: stride on the 3x3 conv). conv1 entry = conv1+bn1+maxpool; one entry per bottleneck block (incl. its downsample); layer4.2 includes global avg-pool; fc = 2048x1000.",
        "inception_v3": "Inception-v3, torchvision `inception_v3` at 299x299, WITHOUT the auxiliary classifier (AuxLogits, 3,326,696 params, excluded). Entries: 5 stem convs (BN incl.; max-pools attributed to Conv2d_2b/Conv2d_4a), Mixed_5b..Mixed_7c (7c incl. global avg-pool), fc.",
        "vgg16": "VGG-16 (configuration D), torchvision `vgg16` without batch norm: 13 conv entries (max-pools attributed to the preceding conv) + fc6/fc7/fc8.",
        "alexnet": "AlexNet, torchvision `alexnet` (single-tower 'one weird trick' variant, 64-192-384-256-256 convs), NOT the original two-GPU network (60,965,224 params in Caffe's bvlc_alexnet).",
        "resnet20": "ResNet-20 for CIFAR-10 (He et al. 2016, Sec. 4.2), option-A parameter-free shortcuts, as in the gTop-k authors' code: conv1, 9 basic blocks, fc (64x10).",
        "vgg16_cifar": "CIFAR-10 VGG-16 as actually trained in the gTop-k paper (authors' models/vgg.py): 13 conv3x3+BN, ONE fc 512x10. Not in PRESETS; provided for reproducing gTop-k Table IV.",
        "lstm_ptb": "LSTM-PTB as in the gTop-k authors' code (models/lstm.py): embedding 10,000 x 1500 (dense gradient), 2 LSTM layers of 1500, decoder 1500 x 10,000. A sample is a 35-token sequence. Not in PRESETS; provided for the gTop-k paper's LSTM.",
        "lm": "Parallax's LM: LSTM-2048-512 of Jozefowicz et al. 2016 (snuspl/parallax lm1b example): input embedding, LSTM cell with projection, sampled softmax (weights and bias as one 513-column table). A sample is a 20-word sequence.",
        "nmt": "Parallax's NMT: tensorflow/nmt GNMT, 4 + 4 LSTM layers of 1024 units; block sizes of GNMT-4 scaled to Parallax Table 1's dense 94.1M (docs/models.md). A sample is a sentence pair.",
        "gnmt8": "EmbRace's GNMT-8: NVIDIA DLE PyTorch GNMT v2, vocabulary 32,320. A sample is a sentence pair.",
        "transformer": "EmbRace's Transformer: Transformer-big (NVIDIA DLE PyTorch Transformer), vocabulary 33,712, untied output projection. A sample is one token of a max-tokens batch.",
        "bert_base": "EmbRace's BERT-base: bert-base-uncased with pooler and SQuAD span head; the word embedding is the sparse table. A sample is a 384-token sequence.",
        "dlrm": "DCT's DLRM (Sec. 3.1) on Criteo Kaggle: bottom MLP 13-512-256-64-16, 26 tables of dimension 16 (facebookresearch/dlrm's Kaggle sizes), dot interaction (367 wide), top MLP 367-512-256-128-1. A sample is one click record.",
    }
    short = {
        "resnet50": "ResNet-50 (torchvision, ImageNet 224x224): 18 entries.",
        "inception_v3": "Inception-v3 (torchvision, ImageNet 299x299, no aux classifier): 17 entries.",
        "vgg16": "VGG-16 (torchvision, ImageNet 224x224): 13 conv + 3 FC entries.",
        "alexnet": "AlexNet (torchvision variant, ImageNet 224x224): 5 conv + 3 FC entries.",
        "resnet20": "ResNet-20 (He et al. 2016, CIFAR-10 32x32): conv1, 9 basic blocks, fc.",
        "vgg16_cifar": "VGG-16 for CIFAR-10 as trained by gTop-k (BN, one FC): 13 conv + 1 FC entries.",
        "lstm_ptb": "LSTM-PTB (gTop-k, Penn Treebank): embedding, 2 LSTM layers, decoder.",
        "lm": "LM (Parallax, One Billion Word Benchmark): embedding, LSTM, sampled softmax.",
        "nmt": "NMT (Parallax, GNMT-4 on WMT16 De-En): 8 entries, two embedding tables.",
        "gnmt8": "GNMT-8 (EmbRace, WMT16 En-De): 8 entries, two embedding tables.",
        "transformer": "Transformer-big (EmbRace, WMT14 En-De): 15 entries, two embedding tables.",
        "bert_base": "BERT-base (EmbRace, SQuAD v1.1): 14 entries, one embedding table.",
        "dlrm": "DLRM (DCT, Criteo Kaggle): 4 + 4 FC entries, 26 embedding tables, the interaction.",
    }
    for name, inp, _, const in tables:
        entries = tables_entries[name]
        tp = sum(e.params for e in entries)
        tm = sum(e.macs for e in entries)
        o.append("/// %s" % docs[name])
        o.append("/// Totals: %s params, %s forward MACs per sample." % (fmt_int(tp), fmt_int(tm)))
        o.append("const %s_LAYERS: &[PresetLayer] = &[" % const)
        for e in entries:
            emb = "None" if e.emb is None else "Some(PresetTable { vocab: %s, dim: %s, tokens_per_sample: %r, sampled: %s, padding_per_sample: %r })" % (
                fmt_int(e.emb[0]), fmt_int(e.emb[1]), float(e.tok[0]), fmt_int(e.tok[1]), float(e.pad))
            o.append("    PresetLayer { name: %s, params: %s, fwd_macs: %s, activation_elems: %s, embedding: %s }," % (
                '"%s"' % e.name, fmt_int(e.params), fmt_int(e.macs), fmt_int(e.act), emb))
        o.append("];")
        o.append("")
        hopper = SHARES.get((name, "h200"))
        if hopper:
            o.append("/// Each entry's measured share of the forward and of the backward pass of `%s`, from the" % name)
            o.append("/// H200's instrumented PyTorch steps (docs/models.md §4); the H100 takes them too (D8).")
            o.append("const %s_HOPPER_SHARES: &[(f64, f64)] = &[%s];" % (const, ", ".join("(%r, %r)" % fb for fb in hopper[2])))
            o.append("")
        o.append("/// Single-GPU training throughputs of `%s` (see docs/models.md for full citations and arithmetic)." % name)
        o.append("const %s_THROUGHPUTS: &[GpuThroughput] = &[" % const)
        for gpu, batch, v, src, derived, _ in T[name]:
            curve = ", ".join("(%d, %r)" % (cb, float(cv)) for cb, cv in CURVES.get((name, gpu), []))
            names, phi, shares = SHARES.get((name, gpu), ([], None, []))
            assert not names or names == [e.name for e in entries], (name, gpu)
            o.append("    GpuThroughput { gpu: \"%s\", batch: %d, samples_per_s: %r, source: \"%s\", by_batch: &[%s], forward_fraction: %s, entry_shares: %s }," % (
                gpu, batch, float(v), src, curve, "None" if phi is None else "Some(%r)" % phi,
                "%s_HOPPER_SHARES" % const if shares else "&[]"))
        o.append("];")
        o.append("")
    for name, inp, _, const in tables:
        o.append("/// %s" % short[name])
        meta = NLP_META.get(name, dict(density=0.0, density_src="", words=1.0, unit="samples/s"))
        o.append("const %s: PresetModel = PresetModel { name: \"%s\", input: \"%s\", layers: %s_LAYERS, throughputs: %s_THROUGHPUTS, density: %r, density_source: \"%s\", words_per_sample: %r, throughput_unit: \"%s\" };" % (
            const, name, inp, const, const, float(meta["density"]), meta["density_src"], float(meta["words"]), meta["unit"]))
        o.append("")
    o.append("/// The built-in models, looked up by `name` from scenario files.")
    o.append("pub const PRESETS: &[PresetModel] = &[RESNET50, INCEPTION_V3, VGG16, ALEXNET, RESNET20, LM, NMT, GNMT8, TRANSFORMER, BERT_BASE, DLRM];")
    o.append("")
    o.append("/// Extra models, NOT in [`PRESETS`]: the CIFAR-10 VGG-16 (BN, one FC, 14.7M params) that the")
    o.append("/// gTop-k paper actually trained (its Table IV 'VGG-16' row; the ImageNet `vgg16` preset is a")
    o.append("/// different, 9.4x larger network), and its LSTM-PTB. Use them to reproduce gTop-k results.")
    o.append("pub const EXTRA_PRESETS: &[PresetModel] = &[VGG16_CIFAR, LSTM_PTB];")
    return "\n".join(o) + "\n"


tables_entries = {}


def rustfmt(src):
    """Format with rustfmt (edition 2024, as the workspace) if it is installed."""
    import shutil
    import subprocess

    exe = shutil.which("rustfmt")
    if exe is None:
        return src
    r = subprocess.run([exe, "--edition", "2024", "--emit", "stdout"], input=src,
                       capture_output=True, text=True)
    return r.stdout if r.returncode == 0 and r.stdout.strip() else src


def main():
    all_ok = True
    rows = []
    for name, inp, f, const in MODELS + EXTRA:
        entries = f()
        tables_entries[name] = entries
        ok, tp, tm = check(name, entries)
        all_ok &= ok
        rows.append((name, inp, len(entries), tp, tm, ok))
    nlp_rows = []
    for name, inp, f, const in NLP:
        entries = f()
        tables_entries[name] = entries
        ok, dense, sparse = check_nlp(name, entries)
        all_ok &= ok
        nlp_rows.append((name, inp, len(entries), dense, sparse, sum(e.macs for e in entries), ok))
    T = throughputs()

    # Cross-check the gTop-k repo numbers against the paper's Table IV dense column.
    for m, per in GTOPK_DENSE32_PER_WORKER.items():
        if abs(per * 32 - GTOPK_TABLE_IV_DENSE[m]) > 1.0:
            print("FAIL gTop-k dense 32-GPU %s: %.1f vs Table IV %d" % (m, per * 32, GTOPK_TABLE_IV_DENSE[m]))
            all_ok = False

    # Cross-check our H200 measurement against Lambda's published ResNet-50 (PyTorch, NVIDIA DLE
    # ConvNets) at the same batch: they agree within 2%.
    ours = h200_measured()["resnet50"][LAMBDA_PT_H200_SXM_RN50[1]]
    if abs(ours / LAMBDA_PT_H200_SXM_RN50[0] - 1) > 0.02:
        print("FAIL h200 resnet50 @%d: ours %.1f vs Lambda %d" % (LAMBDA_PT_H200_SXM_RN50[1], ours, LAMBDA_PT_H200_SXM_RN50[0]))
        all_ok = False

    if "--rust" in sys.argv:
        if not all_ok:
            sys.exit(1)
        sys.stdout.write(rustfmt(emit_rust(MODELS + NLP + EXTRA, T)))
        return

    print("== Totals (checked against published) ==")
    print("%-13s %-20s %7s %14s %16s %s" % ("model", "input", "entries", "params", "fwd MACs", "check"))
    for name, inp, n, tp, tm, ok in rows:
        print("%-13s %-20s %7d %14s %16s %s" % (name, inp, n, "{:,}".format(tp), "{:,}".format(tm), "OK" if ok else "FAIL"))
        print("    published: %s" % PUBLISHED[name]["src"])
    print("    inception_v3 AuxLogits params (excluded): {:,}".format(inception_aux_params()))
    print()
    print("== NLP models (dense and sparse elements, checked against published) ==")
    print("%-12s %-45s %7s %14s %14s %16s %s" % ("model", "sample", "entries", "dense", "sparse", "fwd MACs", "check"))
    for name, inp, n, dense, sparse, tm, ok in nlp_rows:
        print("%-12s %-45s %7d %14s %14s %16s %s" % (name, inp, n, "{:,}".format(dense), "{:,}".format(sparse), "{:,}".format(tm), "OK" if ok else "FAIL"))
        print("    published: %s" % NLP_PUBLISHED[name]["src"])
    print()
    for name, inp, f, const in MODELS + NLP + EXTRA:
        print("== %s (%s) ==" % (name, inp))
        if any(e.emb for e in tables_entries[name]):
            print("| entry | dense params | embedding (rows x dim) | fwd MACs | activation elems |")
            print("|---|---:|---:|---:|---:|")
            for e in tables_entries[name]:
                emb = "{:,} x {:,}".format(*e.emb) if e.emb else ""
                print("| %s | %s | %s | %s | %s |" % (e.name, "{:,}".format(e.params), emb, "{:,}".format(e.macs), "{:,}".format(e.act)))
        else:
            print("| entry | params | fwd MACs | activation elems |")
            print("|---|---:|---:|---:|")
            for e in tables_entries[name]:
                print("| %s | %s | %s | %s |" % (e.name, "{:,}".format(e.params), "{:,}".format(e.macs), "{:,}".format(e.act)))
        print()
    print("== Throughputs (samples/s, one GPU, training) ==")
    print("| model | gpu | batch | samples/s | kind | arithmetic | source |")
    print("|---|---|---:|---:|---|---|---|")
    for m in T:
        for gpu, batch, v, src, derived, arith in T[m]:
            print("| %s | %s | %d | %s | %s | %s | %s |" % (m, gpu, batch, v, "DERIVED" if derived else "measured", arith, src))
            for cb, cv in CURVES.get((m, gpu), []):
                kind = "measured" if src.startswith("measured by us") else "DERIVED"
                print("| %s | %s | %d | %s | %s | (by_batch) | the row's |" % (m, gpu, cb, cv, kind))
    print()
    print("gTop-k cross-check: 32 x dense per-worker = " + ", ".join(
        "%s %.1f (Table IV %d)" % (m, GTOPK_DENSE32_PER_WORKER[m] * 32, GTOPK_TABLE_IV_DENSE[m]) for m in GTOPK_DENSE32_PER_WORKER))
    print("ALL CHECKS PASSED" if all_ok else "SOME CHECKS FAILED")
    sys.exit(0 if all_ok else 1)


if __name__ == "__main__":
    main()
