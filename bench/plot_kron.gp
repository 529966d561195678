# Plots the CSV of kron_bench: time over the roofline time per FastKron shape (Tables 1 and
# 3, batch-first), one bar per algorithm, float and double; and the 16-bit path.
#   gnuplot -e "csv='bench/results/kron-bench-NVIDIA_H100_80GB_HBM3.csv'" bench/plot_kron.gp
# Columns: table,shape,M,dtype,layout,t_auto,t_fused,t_sliced,t_gemm,t_shuffle,tflops_auto,
#          tflops_shuffle,copy_GBps,gemm_tflops,t_roofline,auto_over_roofline,
#          speedup_vs_shuffle,err_auto,err_shuffle
if (!exists("csv")) csv = 'bench/results/kron-bench.csv'
if (!exists("png")) png = csv[1:strlen(csv) - 4] . '.png'

set datafile separator ','
set terminal pngcairo size 1500,650 font ',10' noenhanced
set output png
set grid ytics
set logscale y
set yrange [0.8:*]
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set key top left font ',9'
set xtics rotate by -30
set ylabel 'time / roofline (lower is better; 1 = roofline)'
rows(dtype) = sprintf("< awk -F, 'NR>2 && $1!=\"table4\" && $4==\"%s\" && $5==\"ColMajor\" {print $2\" M=\"$3\",\"$6/$15\",\"$7/$15\",\"$8/$15\",\"$9/$15\",\"$10/$15}' %s", dtype, csv)
set multiplot layout 1, 3 title 'kron_bench: '.csv
set title 'float32'
plot rows('float32') using 2:xtic(1) title 'Auto (ours)', '' using 3 title 'Fused', \
     '' using 4 title 'Sliced', '' using 5 title 'Gemm', '' using 6 title 'Shuffle', \
     1.6 with lines dashtype 2 lc rgb 'black' title 'target 1.6'
set title 'float64'
plot rows('float64') using 2:xtic(1) title 'Auto (ours)', '' using 3 title 'Fused', \
     '' using 4 title 'Sliced', '' using 5 title 'Gemm', '' using 6 title 'Shuffle', \
     1.6 with lines dashtype 2 lc rgb 'black' title 'target 1.6'
set title 'float16 / bfloat16 (tensor cores) vs float Auto'
set ylabel 'time / float Auto time (lower is better)'
unset logscale y
set yrange [0:*]
ratio(dtype) = sprintf("< awk -F, 'NR>2 && $1!=\"table4\" && $5==\"ColMajor\" {key=$2\" M=\"$3; if ($4==\"float32\") f[key]=$6; if ($4==\"%s\") h[key]=$6; order[NR]=key} END {for (i=1;i<=NR;i++) if (order[i] in h && !(order[i] in done)) {print order[i]\",\"h[order[i]]/f[order[i]]; done[order[i]]=1}}' %s", dtype, csv)
plot ratio('float16') using 2:xtic(1) title 'half', ratio('bfloat16') using 2 title 'bfloat16', \
     0.5 with lines dashtype 2 lc rgb 'black' title 'target 0.5 (2x faster)'
unset multiplot
