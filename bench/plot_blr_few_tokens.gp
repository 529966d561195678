# Plots blr_bench's bf16 CSV (--csv16) at a few tokens: for each Llama-7B layer, Monarch's and
# BLAST's time against the number of tokens by path (cuBLAS plan, decode kernel, skinny
# stages, cuBLAS on padded signals, Auto) beside dense bf16 cuBLAS.
#   gnuplot -e "csv='bench/results/blr16-bench-session29-final-graph-NVIDIA_H200.csv'" bench/plot_blr_few_tokens.gp
if (!exists("csv")) csv = 'bench/results/blr16-bench.csv'
if (!exists("png")) png = csv[1:strlen(csv) - 4] . '.png'

set datafile separator ','
set terminal pngcairo size 1500,900 font ',10' noenhanced
set output png
set grid
set key top left font ',8'
set logscale x 2
set xlabel 'tokens (B)'
set ylabel 'time (us)'
# Rows of one layer and structure with at most 16 tokens: batch, time (us) of column col.
rows(layer, structure, col) = sprintf("< awk -F, 'NR>2 && $1==\"Llama-7B\" && $2==\"%s\" && $5==\"%s\" && $8<=16 {print $8\",\"1e6*$%d}' %s", layer, structure, col, csv)
set multiplot layout 2, 3 title 'blr_bench (bf16), Llama-7B, few tokens: '.csv
do for [kind in "monarch blast"] {
  do for [layer in "qkvo gate_up down"] {
    set title kind.' '.layer
    plot rows(layer, kind.'_plan_cublas', 9) using 1:2 with linespoints title 'cuBLAS plan', \
         rows(layer, kind.'_plan_decode', 9) using 1:2 with linespoints title 'decode kernel', \
         rows(layer, kind.'_plan_skinny', 9) using 1:2 with linespoints title 'skinny stages (PDL)', \
         rows(layer, kind.'_plan_cublas_padded', 9) using 1:2 with linespoints title 'cuBLAS on 8 padded signals', \
         rows(layer, kind.'_plan', 9) using 1:2 with points pt 6 ps 1.5 title 'Auto', \
         rows(layer, kind.'_plan', 10) using 1:2 with lines dashtype 2 lc rgb 'black' title 'dense bf16 cuBLAS', \
         rows(layer, kind.'_plan', 11) using 1:2 with lines dashtype 3 lc rgb 'gray' title 'weights-once bound'
  }
}
unset multiplot
