# Plots the bf16 CSV of blr_bench (--csv16): left, the Llama-7B 4096 x 4096 layer's time
# against the batch for each structure, dense bf16 cuBLAS and the memory bound; right, the
# speedup over dense of every Table 3 layer at B = 1024.
#   gnuplot -e "csv='bench/results/blr16-bench-session10-NVIDIA_H100_80GB_HBM3.csv'" bench/plot_blr.gp
# Columns: model,layer,in,out,structure,r,b,batch,t_plan,t_dense,t_bound,dense_over_plan,
#          plan_over_bound
if (!exists("csv")) csv = 'bench/results/blr16-bench.csv'
if (!exists("png")) png = csv[1:strlen(csv) - 4] . '.png'

set datafile separator ','
set terminal pngcairo size 1400,600 font ',10' noenhanced
set output png
set grid
set key top left font ',9'
# Rows of one structure on the Llama-7B qkvo layer: batch, time.
layer(structure, col) = sprintf("< awk -F, 'NR>2 && $1==\"Llama-7B\" && $2==\"qkvo\" && $5==\"%s\" {print $8\",\"$%d}' %s", structure, col, csv)
# Rows of one structure at B = 1024, numbered by layer in file order: index, dense / time.
at1024(structure) = sprintf("< awk -F, 'NR>2 && $8==1024 && !seen[$1 $2]++ {n++} NR>2 && $8==1024 && $5==\"%s\" {print n\",\"$12}' %s", structure, csv)
set multiplot layout 1, 2 title 'blr_bench (bf16): '.csv
set title 'Llama-7B 4096 x 4096 (r = 1024, b = 16): time'
set logscale xy
set xlabel 'batch (tokens)'
set ylabel 'seconds'
plot layer('monarch_plan', 9) using 1:2 with linespoints title 'Monarch, GEMM plan', \
     layer('monarch_unfused', 9) using 1:2 with linespoints title 'Monarch, unfused bmm + permute', \
     layer('blast_plan', 9) using 1:2 with linespoints title 'BLAST, GEMM plan', \
     layer('blast_unfused', 9) using 1:2 with linespoints title 'BLAST, unfused bmm + permute', \
     layer('lowrank_plan', 9) using 1:2 with linespoints title 'low rank', \
     layer('blast_plan', 10) using 1:2 with lines dashtype 2 lc rgb 'black' title 'dense bf16 cuBLAS', \
     layer('blast_plan', 11) using 1:2 with lines dashtype 3 lc rgb 'gray' title 'memory bound (BLAST)'
unset logscale x
set logscale y
set title 'Table 3 layers at B = 1024: dense time / our time'
set xlabel 'layer, in CSV order (Llama-7B 1-3, Llama-3.2-1B 4-7, GPT2-S 8-10, ViT-B 11-13, DiT-XL/2 14-15)'
set ylabel 'speedup over dense'
plot at1024('monarch_plan') using 1:2 with points pt 7 title 'Monarch, GEMM plan', \
     at1024('monarch_unfused') using 1:2 with points pt 6 title 'Monarch, unfused', \
     at1024('blast_plan') using 1:2 with points pt 5 title 'BLAST, GEMM plan', \
     at1024('blast_unfused') using 1:2 with points pt 4 title 'BLAST, unfused', \
     1.3 with lines dashtype 2 lc rgb 'black' title 'target 1.3 (Llama-7B)'
unset multiplot
