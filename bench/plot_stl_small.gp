# Plots the small-batch CSV of stl_bench (--batches): the fused kernel's and Auto's speedup
# over the three steps versus the batch B, one panel per (dtype, r), one line per n.
#   gnuplot -e "csv='bench/results/stl-bench-session20-final-NVIDIA_H100_80GB_HBM3-small.csv'" bench/plot_stl_small.gp
# Columns: n,r,dtype,batch,t_dense,t_steps,t_fused,t_auto,t_bound,fused_over_steps,
#          auto_over_steps,auto_speedup_over_dense,auto_over_bound
if (!exists("csv")) csv = 'bench/results/stl-bench-small.csv'
if (!exists("png")) png = csv[1:strlen(csv) - 4] . '.png'

set datafile separator ','
set terminal pngcairo size 1500,900 font ',10' noenhanced
set output png
set grid
set key top right font ',9'
set logscale x 2
set xlabel 'signals B (t = 4)'
set ylabel 'speedup over the three steps'
set yrange [0:*]
panels = system("awk -F, 'NR>2 && ($2==16 || $2==32 || $2==49) {print $3\"|\"$2}' ".csv." | sort -u | tr '\\n' ' '")
sizes = system("awk -F, 'NR>2 {print $1}' ".csv." | sort -n -u | tr '\\n' ' '")
set multiplot layout 2, (words(panels) + 1) / 2 title 'stl_bench, few signals: '.csv
select(key, n, col) = sprintf("< awk -F, -v k='%s' -v n=%s 'BEGIN{split(k,p,\"[|]\")} NR>2 && $3==p[1] && $2==p[2] && $1==n && $%d==$%d {print $4\",\"$%d}' %s", key, n, col, col, col, csv)
do for [k in panels] {
  set title k.' (solid: fused kernel, dashed: Auto)'
  plot for [i = 1:words(sizes)] select(k, word(sizes, i), 10) using 1:2 with linespoints lc i \
         title 'n = '.word(sizes, i), \
       for [i = 1:words(sizes)] select(k, word(sizes, i), 11) using 1:2 with lines lc i dashtype 2 \
         notitle, \
       1 with lines lc rgb 'black' notitle
}
unset multiplot
