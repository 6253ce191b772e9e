"""Runs every benchmark in one process and prints tilec beside Triton and torch.

    python benchmarks/run_all.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402

import bench_language  # noqa: E402
import bench_attention  # noqa: E402
import bench_launch  # noqa: E402
import bench_matmul  # noqa: E402
import bench_softmax  # noqa: E402
import bench_vector_add  # noqa: E402
from common import print_table  # noqa: E402


def main() -> None:
    print(f"device: {torch.cuda.get_device_name()}  torch {torch.__version__}")
    try:
        import triton
        print(f"triton {triton.__version__}")
    except ImportError:
        print("triton: not installed")
    print_table("vector add f32 (TB/s, higher is better)", bench_vector_add.run())
    print_table("softmax f32 (TB/s, higher is better)", bench_softmax.run())
    print_table("language kernels (one source, imports swapped; higher is better)", bench_language.run())
    matmul_rows, notes = bench_matmul.run()
    print_table("matmul fp16 on tensor cores (TFLOP/s, higher is better)", matmul_rows)
    print_table("matmul fp16 against Triton on mma.sync (TFLOP/s)", matmul_rows, reference="triton mma.sync")
    for note in notes:
        print(note)
    print_table("matmul cold compile (ms, lower is better)", bench_matmul.compile_rows())
    attention_rows = bench_attention.run()
    print_table("flash attention forward fp16 (TFLOP/s, higher is better)", attention_rows)
    print_table("flash attention forward fp16 against Triton on mma.sync (TFLOP/s)", attention_rows,
                reference="triton mma.sync")
    launch, first_call = bench_launch.run()
    print_table("host time per launch (us, lower is better)", launch)
    print_table("first call in a new process (ms, lower is better)", first_call)


if __name__ == "__main__":
    main()
