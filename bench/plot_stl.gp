# Plots the CSV of stl_bench: speedup over dense cuBLAS versus the rank r, one panel per
# (n, dtype), one line per path (one layer, one layer inside a chain, the colour GEMMs alone)
# and the flop-count limit t^3 / r = 64 / r.
#   gnuplot -e "csv='bench/results/stl-bench-NVIDIA_H100_80GB_HBM3.csv'" bench/plot_stl.gp
# Columns: n,r,dtype,t_dense,t_layer,t_chain_step,t_colours,t_bound,layer_speedup,
#          chain_step_speedup,colours_speedup,layer_over_bound[,t_coding,t_coding_scalar,
#          t_coding_shared,t_coding_bound (session 21 on)]
if (!exists("csv")) csv = 'bench/results/stl-bench.csv'
if (!exists("png")) png = csv[1:strlen(csv) - 4] . '.png'

set datafile separator ','
set terminal pngcairo size 1500,900 font ',10' noenhanced
set output png
set grid
set key top right font ',9'
set xlabel 'rank r (t = 4)'
set ylabel 'speedup over dense cuBLAS (same dtype)'
set yrange [0:*]
panels = system("awk -F, 'NR>2 {print $1\"|\"$3}' ".csv." | sort -t'|' -k2,2 -k1,1n -u | tr '\\n' ' '")
n_panels = words(panels)
set multiplot layout 2, (n_panels + 1) / 2 title 'stl_bench: '.csv
select(key, col) = sprintf("< awk -F, -v k='%s' 'BEGIN{split(k,p,\"[|]\")} NR>2 && $1==p[1] && $3==p[2] {print $2\",\"$%d}' %s", key, col, csv)
# One layer with the scalar encode/decode kernels instead of the default ones (CSVs with the
# coding columns): t_dense / (t_layer - t_coding + t_coding_scalar).
scalar(key) = sprintf("< awk -F, -v k='%s' 'BEGIN{split(k,p,\"[|]\")} NR>2 && NF>=14 && $1==p[1] && $3==p[2] {print $2\",\"$4/($5-$13+$14)}' %s", key, csv)
do for [k in panels] {
  set title k
  plot select(k, 9) using 1:2 with linespoints title 'one layer (encode, colour GEMMs, decode)', \
       select(k, 10) using 1:2 with linespoints title 'layer in a chain (colour GEMMs + fused decode-encode)', \
       select(k, 11) using 1:2 with linespoints title 'colour GEMMs alone', \
       scalar(k) using 1:2 with linespoints dashtype 3 title 'one layer, scalar encode/decode kernels', \
       [16:49] 64.0 / x with lines dashtype 2 title 'flop limit 64 / r', \
       1 with lines lc rgb 'black' notitle
}
unset multiplot
