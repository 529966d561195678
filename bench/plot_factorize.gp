# Plots the CSV of factorize_bench:
#   gnuplot -e "csv='bench/results/factorize-cpu-ci-cpu.csv'; png='bench/results/factorize-cpu-ci-cpu.png'" bench/plot_factorize.gp
# Top row: seconds and relative error versus N, one line per structure/config/device
# ("scaling" rows). Below: relative error versus parameter count on each structured matrix,
# one line per structure ("budget" rows).
# Columns: section,structure,config,matrix,N,device,dtype,params,seconds,rel_error
if (!exists("csv")) csv = 'bench/results/factorize.csv'
if (!exists("png")) png = csv[1:strlen(csv) - 4] . '.png'

set datafile separator ','
set terminal pngcairo size 1500,1500 font ',10' noenhanced
set output png
set logscale xy
set grid
set key outside right top font ',8'
set multiplot layout 3,2 title 'factorize_bench: '.csv

# One series per distinct key; the data of a series is selected by awk.
# A series is "structure|config|device" (configs are rules of n there, the same at every N).
scaling_keys = system("awk -F, 'NR>1 && $1==\"scaling\" {print $2\"|\"$3\"|\"$6}' ".csv." | sort -u | tr '\\n' ' '")
scaling(key, col) = sprintf("< awk -F, -v k='%s' 'BEGIN{split(k,p,\"[|]\")} NR>1 && $1==\"scaling\" && $2==p[1] && $3==p[2] && $6==p[3] && $%d!=\"nan\" {print $5\",\"$%d}' %s", key, col, col, csv)

set xlabel 'N'
set ylabel 'seconds'
set title 'time vs N'
plot for [k in scaling_keys] scaling(k, 9) using 1:2 with linespoints title k

set ylabel 'relative error'
set title 'error vs N (butterfly + 1e-3 noise target)'
plot for [k in scaling_keys] scaling(k, 10) using 1:2 with linespoints title k

# Monarch is one series per block count (its rank varies along the series).
structures = 'butterfly ks_chain monarch_b4 monarch_b16 lowrank blast'
budget(matrix, series) = sprintf("< awk -F, 'NR>1 && $1==\"budget\" && $4==\"%s\" {s=$2; if ($2==\"monarch\") {split($3,q,\"_\"); s=s\"_\"q[1]} if (s==\"%s\") print $8\",\"$10}' %s | sort -g", matrix, series, csv)
set xlabel 'parameters'
set ylabel 'relative error'
set format y '%.0e'
do for [m in 'rbf2d laplacian2d dct gaussian'] {
  set title 'error vs parameters: '.m
  plot for [st in structures] budget(m, st) using 1:2 with linespoints title st
}
unset multiplot
