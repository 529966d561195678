# Plots the CSV of ks_bench: the fused KS kernel's speedup over the best of our bmm
# (permute + batched GEMM + permute) and dense cuBLAS, against h(b,c) = (b + c) / (b c)
# (papers/NOTES.md: the bmm's relative overhead grows with it), one series per layout, at
# the grid's batch; and the time of the default (Auto) choice over each case's roofline time.
#   gnuplot -e "csv='bench/results/ks-bench-NVIDIA_H200.csv'" bench/plot_ks.gp
# Columns: a,b,c,d,dtype,layout,batch,auto_choice,t_auto,t_fused,t_strided_gemm,t_bmm,
#          t_dense,t_roofline,rel_error,t_small_batch,rel_error_cublas,t_tuned,tuned_choice
# (t_tuned: Auto with tuning on, ks_bench --tuned; drawn where the CSV has it)
if (!exists("csv")) csv = 'bench/results/ks-bench.csv'
if (!exists("png")) png = csv[1:strlen(csv) - 4] . '.png'
if (!exists("batch")) batch = 25088

set datafile separator ','
set terminal pngcairo size 1400,600 font ',10' noenhanced
set output png
set grid
set key top right font ',9'
# Rows of one layout at the grid's batch: h(b,c), then the column expression's value.
rows(layout, expr) = sprintf("< awk -F, 'NR>2 && $6==\"%s\" && $7==%d {b=$2; c=$3; base=($12<$13?$12:$13); print (b+c)/(b*c)\",\"%s}' %s", layout, batch, expr, csv)
# The same for the rows that have Auto with tuning on.
tuned(layout) = sprintf("< awk -F, 'NR>2 && $6==\"%s\" && $7==%d && $18>0 {b=$2; c=$3; print (b+c)/(b*c)\",\"$18/$14}' %s", layout, batch, csv)
set multiplot layout 1, 2 title 'ks_bench: '.csv
set title sprintf('fused kernel vs min(bmm, dense), B = %d', batch)
set logscale xy
set xlabel 'h(b,c) = (b + c) / (b c)'
set ylabel 'speedup of the fused kernel'
plot rows('RowMajor', 'base/$10') using 1:2 with points pt 7 title 'batch-size-last (RowMajor)', \
     rows('ColMajor', 'base/$10') using 1:2 with points pt 6 title 'batch-size-first (ColMajor)', \
     1 with lines dashtype 2 lc rgb 'black' title 'parity'
set title 'Auto (the default choice): time over the roofline time'
set ylabel 'time / roofline'
plot rows('RowMajor', '$9/$14') using 1:2 with points pt 7 title 'Auto, RowMajor', \
     rows('ColMajor', '$9/$14') using 1:2 with points pt 6 title 'Auto, ColMajor', \
     tuned('RowMajor') using 1:2 with points pt 5 ps 0.6 title 'Auto tuned, RowMajor', \
     tuned('ColMajor') using 1:2 with points pt 4 ps 0.6 title 'Auto tuned, ColMajor', \
     1.7 with lines dashtype 2 lc rgb 'black' title 'target 1.7 (fp32, RowMajor)'
unset multiplot
