# Plots the CSV of transform_bench: time over an actual cudaMemcpy of the same data versus n
# (B = 4096 signals), one line per transform and dtype; the DFT also over cuFFT C2C.
#   gnuplot -e "csv='bench/results/transform-bench-NVIDIA_H100_80GB_HBM3.csv'" bench/plot_transforms.gp
# Columns: kind,n,dtype,batch,seconds,t_copy,over_copy,t_memcpy,over_memcpy,t_cufft_c2c,
#          t_cufft_r2c,over_cufft_c2c
if (!exists("csv")) csv = 'bench/results/transform-bench.csv'
if (!exists("png")) png = csv[1:strlen(csv) - 4] . '.png'

set datafile separator ','
set terminal pngcairo size 1400,600 font ',10' noenhanced
set output png
set grid
set logscale x 2
set logscale y
set key top left font ',9'
set xlabel 'n (B = 4096 signals)'
select(kind, dtype, col) = sprintf("< awk -F, 'NR>2 && $1==\"%s\" && $3==\"%s\" {print $2\",\"$%d}' %s", kind, dtype, col, csv)
set multiplot layout 1, 2 title 'transform_bench: '.csv
set title 'Hadamard: time / cudaMemcpy of the same data'
set ylabel 'time / memcpy'
plot select('hadamard', 'float16', 9) using 1:2 with linespoints title 'half, contiguous signals (tensor cores)', \
     select('hadamard', 'bfloat16', 9) using 1:2 with linespoints title 'bfloat16, contiguous (tensor cores)', \
     select('hadamard_cuda_cores', 'float16', 9) using 1:2 with linespoints title 'half, contiguous, CUDA-core kernel', \
     select('hadamard', 'float32', 9) using 1:2 with linespoints title 'float, contiguous', \
     select('hadamard_rowmajor', 'float16', 9) using 1:2 with linespoints title 'half, batch-contiguous', \
     select('hadamard_generic_chain', 'float32', 9) using 1:2 with linespoints title 'float, generic KS chain path', \
     1.1 with lines dashtype 2 lc rgb 'black' title 'target 1.1 (n <= 8192)'
set title 'DFT complex<float>: time / cuFFT C2C'
set ylabel 'time / cuFFT'
set yrange [0.5:4]
plot select('dft', 'complex64', 12) using 1:2 with linespoints title 'Stockham FFT kernel', \
     1.5 with lines dashtype 2 lc rgb 'black' title 'target 1.5 (n <= 4096)', \
     2.0 with lines dashtype 3 lc rgb 'black' title 'target 2 (n <= 32768)'
unset multiplot
