"""Export a trained reader (train_reader.py's weights) to the int8 ONNX file the product ships.

    python training/export_reader.py --base MODEL_DIR --weights reader.safetensors --out tools/reader/reader.onnx

MODEL_DIR is the base model train_reader.py started from (its frozen word-piece embeddings are taken from
there). The graph takes input_ids, attention_mask and token_type_ids (batch × tokens, int64) and returns one
logit per pair; ONNX Runtime's dynamic quantization makes its matrices int8.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import onnx
import torch
from onnxruntime.quantization import QuantType, quantize_dynamic
from onnxruntime.quantization.matmul_nbits_quantizer import DefaultWeightOnlyQuantConfig, MatMulNBitsQuantizer
from safetensors import safe_open
from safetensors.torch import load_file

sys.path.insert(0, str(Path(__file__).resolve().parent))
from train_reader import FROZEN, expand, load_base  # noqa: E402

INPUTS = ["input_ids", "attention_mask", "token_type_ids"]


def main() -> None:
    """Rebuild the reader in fp32, export it to ONNX and quantize it."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", type=Path, required=True)
    parser.add_argument("--weights", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    with safe_open(str(args.weights), "pt") as f:
        layers = int(f.metadata()["layers"])
    model = load_base(args.base, layers)
    state = expand(load_file(str(args.weights)))
    state[FROZEN] = model.state_dict()[FROZEN]
    model.load_state_dict(state, strict=True)
    model.eval()
    sample = torch.randint(1000, 2000, (2, 16))
    with tempfile.TemporaryDirectory() as tmp:
        plain = Path(tmp) / "reader.onnx"
        torch.onnx.export(model, (sample, torch.ones_like(sample), torch.zeros_like(sample)), str(plain),
                          input_names=INPUTS, output_names=["logits"], opset_version=17, dynamo=False,
                          dynamic_axes={**{name: {0: "batch", 1: "tokens"} for name in INPUTS},
                                        "logits": {0: "batch"}})
        # The word-piece table is two thirds of the weights: 4-bit blocks of 32 (ONNX Runtime's
        # GatherBlockQuantized) halve the file; the matrices are int8 per channel.
        table = Path(tmp) / "reader-table.onnx"
        quantizer = MatMulNBitsQuantizer(onnx.load(str(plain)), algo_config=DefaultWeightOnlyQuantConfig(
            block_size=32, is_symmetric=True, op_types_to_quantize=("Gather",), quant_axes=(("Gather", 1),)))
        quantizer.process()
        quantizer.model.save_model_to_file(str(table), False)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        quantize_dynamic(str(table), str(args.out), weight_type=QuantType.QInt8, per_channel=True,
                         op_types_to_quantize=["MatMul", "Gemm"],
                         extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
    print(f"{args.out}: {args.out.stat().st_size / 1e6:.1f} MB, {layers} layers")


if __name__ == "__main__":
    main()
