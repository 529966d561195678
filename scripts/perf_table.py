#!/usr/bin/env python3
"""The README's performance table, generated from the benchmark summaries in bench/results/.

    scripts/perf_table.py            print the table (markdown)
    scripts/perf_table.py --update   rewrite it in README.md between the perf-table markers
    scripts/perf_table.py --check    exit 1 if README.md is out of date (a CTest test)

Each summary is a JSON object written by a benchmark program; every key it has that is
described below becomes a row ("a/b" is key b of the object at key a). Unknown keys are
ignored, missing ones simply absent.
"""
import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
README = ROOT / "README.md"
BEGIN, END = "<!-- perf-table:begin -->", "<!-- perf-table:end -->"

# summary file -> [(key, description, format)]
ROWS = {
    # The KS grids on one H100 (fp32: session 12; fp16, bf16: session 14): fp32 (Auto's
    # model), fp16 and bf16 (Auto's model, and Auto with tuning on: algorithm and tensor-core
    # tile measured, then cached).
    "ks-summary.json": [
        ("fp32_bsl_win_rate", "KS (Auto), fp32 batch-size-last: cases faster than min(bmm, dense)", "pct"),
        ("fp32_bsl_median_speedup", "KS (Auto), fp32 batch-size-last: median speedup vs min(bmm, dense)", "x"),
        ("fp32_bsl_median_time_over_roofline", "KS (Auto), fp32 batch-size-last: median time / roofline", "x"),
        ("fp16_bsl_win_rate", "KS (Auto), fp16 batch-size-last: cases faster than min(bmm, dense)", "pct"),
        ("fp16_bsf_win_rate", "KS (Auto), fp16 batch-size-first: cases faster than min(bmm, dense)", "pct"),
        ("fp16_win_rate", "KS (Auto), fp16, both layouts: cases faster than min(bmm, dense)", "pct"),
        ("fp16_median_speedup", "KS (Auto), fp16, both layouts: median speedup vs min(bmm, dense)", "x"),
        ("fp16_median_time_over_roofline", "KS (Auto), fp16, both layouts: median time / roofline", "x"),
        ("fp16_tuned_bsf_win_rate", "KS (Auto, tuned), fp16 batch-size-first: cases faster than min(bmm, dense)", "pct"),
        ("fp16_tuned_win_rate", "KS (Auto, tuned), fp16, both layouts: cases faster than min(bmm, dense)", "pct"),
        ("fp16_tuned_median_time_over_roofline", "KS (Auto, tuned), fp16, both layouts: median time / roofline", "x"),
        ("fp16_max_error_over_cublas", "KS (Auto), fp16: largest error / cuBLAS's error on the same sample", "x"),
        ("fp16_bsf_stride4_win_rate", "KS (Auto), fp16 batch-size-first, second sample (every 4th pattern): cases faster than min(bmm, dense)", "pct"),
        ("bf16_bsl_win_rate", "KS (Auto), bf16 batch-size-last: cases faster than min(bmm, dense)", "pct"),
        ("bf16_bsf_win_rate", "KS (Auto), bf16 batch-size-first: cases faster than min(bmm, dense)", "pct"),
        ("bf16_win_rate", "KS (Auto), bf16, both layouts: cases faster than min(bmm, dense)", "pct"),
        ("bf16_median_speedup", "KS (Auto), bf16, both layouts: median speedup vs min(bmm, dense)", "x"),
        ("bf16_median_time_over_roofline", "KS (Auto), bf16, both layouts: median time / roofline", "x"),
        ("bf16_tuned_win_rate", "KS (Auto, tuned), bf16, both layouts: cases faster than min(bmm, dense)", "pct"),
    ],
    # fp32 batch-first after StridedGemm runs there through batch-contiguous copies (every 20th
    # pattern, session 12).
    "ks-summary-fp32-colmajor-copies-NVIDIA_H100_80GB_HBM3.json": [
        ("fp32_bsf_win_rate", "KS (Auto), fp32 batch-size-first (every 20th pattern): cases faster than min(bmm, dense)", "pct"),
        ("fp32_bsf_median_speedup", "KS (Auto), fp32 batch-size-first (every 20th pattern): median speedup vs min(bmm, dense)", "x"),
        ("fp32_bsf_median_time_over_roofline", "KS (Auto), fp32 batch-size-first (every 20th pattern): median time / roofline", "x"),
    ],
    # ks_bench --chains (its own run: possibly another device than the grid's)
    "ks-chain-summary.json": [
        ("chain_fusion_speedup_1024", "fused butterfly chain n = 1024, fp32, B = 4096 vs factor by factor", "x"),
        ("chain_fusion_speedup_4096", "fused butterfly chain n = 4096, fp32, B = 4096 vs factor by factor", "x"),
        ("chain_fusion_speedup_fp16_1024", "fused butterfly chain n = 1024, half, B = 4096 vs factor by factor", "x"),
        ("chain_fusion_speedup_fp16_4096", "fused butterfly chain n = 4096, half, B = 4096 vs factor by factor", "x"),
    ],
    "kron-summary.json": [
        ("float_median_frac_roofline", "Kron-matmul (Auto), fp32, FastKron Tables 1+3: median fraction of the roofline", "f"),
        ("double_median_frac_roofline", "Kron-matmul (Auto), fp64, FastKron Tables 1+3: median fraction of the roofline", "f"),
        ("float_median_speedup_vs_shuffle", "Kron-matmul (Auto), fp32: median speedup vs the shuffle algorithm", "x"),
        ("float_speedup_vs_shuffle/8^6", "Kron-matmul (Auto), fp32 8^6, M = 1024: speedup vs shuffle", "x"),
        ("float_speedup_vs_shuffle/16^5", "Kron-matmul (Auto), fp32 16^5, M = 1024: speedup vs shuffle", "x"),
        ("half_over_float/8^6", "Kron-matmul, half (tensor cores) vs our float path, 8^6, M = 1024", "x"),
        ("half_over_float/16^5", "Kron-matmul, half (tensor cores) vs our float path, 16^5, M = 1024", "x"),
        ("half_over_float/32^4", "Kron-matmul, half (tensor cores) vs our float path, 32^4, M = 1024", "x"),
        ("half_over_float/64^3", "Kron-matmul, half (tensor cores) vs our float path, 64^3, M = 1024", "x"),
    ],
    "stl-summary.json": [
        ("half_layer_speedup_n8192_r32", "Strassen-Tile layer, half, n = 8192, r = 32: speedup vs dense cuBLAS", "x"),
        ("half_chain_step_speedup_n8192_r32", "Strassen-Tile layer in a chain, half, n = 8192, r = 32: speedup vs dense", "x"),
        ("half_layer_speedup_n16384_r32", "Strassen-Tile layer, half, n = 16384, r = 32: speedup vs dense cuBLAS", "x"),
        ("half_chain_step_speedup_n16384_r32", "Strassen-Tile layer in a chain, half, n = 16384, r = 32: speedup vs dense", "x"),
        ("fused_kernel_over_steps/n=4096,r=32,B=1", "Strassen-Tile fused kernel (colour GEMMs + decode), half, n = 4096, r = 32, B = 1: speedup vs the three steps", "x"),
        ("fused_kernel_over_steps/n=4096,r=32,B=16", "Strassen-Tile fused kernel, half, n = 4096, r = 32, B = 16: speedup vs the three steps", "x"),
        ("fused_kernel_over_steps/n=16384,r=32,B=1", "Strassen-Tile fused kernel, half, n = 16384, r = 32, B = 1: speedup vs the three steps", "x"),
    ],
    "transform-summary.json": [
        ("hadamard_half_over_memcpy/256", "Hadamard (tensor cores), half, n = 256, B = 4096: time / cudaMemcpy of the data", "x"),
        ("hadamard_half_over_memcpy/1024", "Hadamard (tensor cores), half, n = 1024, B = 4096: time / cudaMemcpy of the data", "x"),
        ("hadamard_half_over_memcpy/8192", "Hadamard (tensor cores), half, n = 8192, B = 4096: time / cudaMemcpy of the data", "x"),
        ("hadamard_half_over_memcpy/32768", "Hadamard (tensor cores), half, n = 32768, B = 4096: time / cudaMemcpy of the data", "x"),
        ("hadamard_half_over_copy_bandwidth/8192", "Hadamard (tensor cores), half, n = 8192: time / the data's read + write at copy bandwidth", "x"),
        ("hadamard_cuda_cores_half_over_memcpy/8192", "Hadamard, CUDA-core kernel (before), half, n = 8192: time / cudaMemcpy", "x"),
        ("hadamard_float_over_memcpy/8192", "Walsh-Hadamard kernel, float, n = 8192, B = 4096: time / cudaMemcpy of the data", "x"),
        ("hadamard_12x_over_pow2_per_elem", "Hadamard 12 x 2^k (half, tensor cores): time per value / the power of two's", "x"),
        ("hadamard_28x_over_pow2_per_elem", "Hadamard 28 x 2^k (half, tensor cores): time per value / the power of two's", "x"),
        ("dft_c64_over_cufft/1024", "DFT complex<float> n = 1024, B = 4096 (Stockham kernel): time / cuFFT C2C", "x"),
        ("dft_c64_over_cufft/4096", "DFT complex<float> n = 4096, B = 4096 (Stockham kernel): time / cuFFT C2C", "x"),
        ("dft_c64_over_cufft/32768", "DFT complex<float> n = 32768, B = 4096 (Stockham kernel): time / cuFFT C2C", "x"),
    ],
    "blr-summary.json": [
        ("monarch_fused_over_unfused_median", "Monarch (bf16 GEMM plan) vs our unfused bmm + permute baseline, Table 3 layers, B = 1024 (median)", "x"),
        ("blast_fused_over_unfused_median", "BLAST (bf16 GEMM plan) vs our unfused bmm + permute baseline, Table 3 layers, B = 1024 (median)", "x"),
        ("llama7b_b1024_min_speedup_over_dense", "Monarch/BLAST bf16 on Llama-7B layers, B = 1024: worst speedup over dense cuBLAS", "x"),
        ("llama7b_b1_min_speedup_over_dense", "Monarch/BLAST bf16 on Llama-7B layers, B = 1: worst speedup over dense cuBLAS", "x"),
        ("b1_max_time_over_bound", "Monarch/BLAST bf16, B = 1: worst time / reading the weights once", "x"),
        ("b1_decode_over_cublas_plan_median", "BLR bf16, B = 1: one-launch decode kernel vs the cuBLAS plan (median speedup, Table 3 layers)", "x"),
    ],
    # Timed as CUDA-graph replays (blr_bench --graph: the GPU's time, without the host's
    # enqueue; session 17), session 50's run at B = 1024 against the baselines with vector
    # transposes.
    "blr-summary-graph.json": [
        ("monarch_fused_over_unfused_median", "Monarch (bf16 GEMM plan) vs our unfused bmm + permute baseline, Table 3 layers, B = 1024 (median), CUDA-graph replay", "x"),
        ("blast_fused_over_unfused_median", "BLAST (bf16 GEMM plan) vs our unfused bmm + permute baseline, Table 3 layers, B = 1024 (median), CUDA-graph replay", "x"),
        ("llama7b_b1024_min_speedup_over_dense", "Monarch/BLAST bf16 on Llama-7B layers, B = 1024: worst speedup over dense cuBLAS, CUDA-graph replay", "x"),
    ],
    # B = 1 per call with the L2 evicted before each call (blr_bench --cold, session 50): the
    # weights come from DRAM, as the weights-once bound assumes.
    "blr-summary-cold.json": [
        ("llama7b_b1_min_speedup_over_dense", "Monarch/BLAST bf16 on Llama-7B layers, B = 1, L2 evicted before each call: worst speedup over dense cuBLAS", "x"),
        ("b1_max_time_over_bound", "Monarch/BLAST bf16, B = 1, L2 evicted before each call: worst time / reading the weights once", "x"),
    ],
    "factorize-summary.json": [
        ("butterfly_4096_f64_cpu_s", "butterfly factorization 4096 x 4096 double, CPU", "s"),
        ("butterfly_4096_f64_gpu_s", "butterfly factorization 4096 x 4096 double, GPU", "s"),
        ("butterfly_16384_f32_gpu_s", "butterfly factorization 16384 x 16384 float, GPU", "s"),
        ("monarch_4096_b64_cpu_s", "Monarch projection 4096 x 4096 (b = 64), CPU", "s"),
        ("monarch_4096_b64_gpu_s", "Monarch projection 4096 x 4096 (b = 64), GPU", "s"),
        ("blast_4096_300steps_gpu_s", "BLAST 300 steps 4096 x 4096 (b = 16, r = 1024), GPU", "s"),
        ("dft_recovery_rel_err_f64", "DFT recovered as a butterfly (double): relative error", "e"),
    ],
}


def fmt(value, kind):
    if value is None:
        return "not measured"
    if kind == "pct":
        return f"{100 * value:.1f} %"
    if kind == "x":
        return f"{value:.2f}x"
    if kind == "s":
        return f"{value:.3g} s"
    if kind == "f":
        return f"{value:.3f}"
    return f"{value:.1e}"


def table():
    lines = ["| result | value | device | source |", "| --- | --- | --- | --- |"]
    for name, rows in ROWS.items():
        path = RESULTS / name
        if not path.exists():
            continue
        summary = json.loads(path.read_text())
        for key, description, kind in rows:
            value = summary
            for part in key.split("/"):
                value = value.get(part) if isinstance(value, dict) else None
            if value is not None:
                lines.append(f"| {description} | {fmt(value, kind)} | "
                             f"{summary.get('device', '?')} | `bench/results/{name}` |")
    return "\n".join(lines) + "\n"


def main():
    text = table()
    if len(sys.argv) == 1:
        sys.stdout.write(text)
        return 0
    readme = README.read_text()
    head, sep, rest = readme.partition(BEGIN)
    _, sep2, tail = rest.partition(END)
    if not sep or not sep2:
        print(f"README.md lacks the {BEGIN} ... {END} markers", file=sys.stderr)
        return 1
    updated = head + BEGIN + "\n" + text + END + tail
    if sys.argv[1] == "--check":
        if updated != readme:
            print("README.md's performance table is out of date: run scripts/perf_table.py --update",
                  file=sys.stderr)
            return 1
        return 0
    README.write_text(updated)
    return 0


if __name__ == "__main__":
    sys.exit(main())
