# Plots the CSV of stl_fit_bench (the paper's Fig. 5, as relative errors):
#   gnuplot -e "csv='bench/results/stl-fit-cpu-ci-cpu.csv'" bench/plot_stl_fit.gp
# Columns: r,initial_rel_error,quick_rel_error,fitted_rel_error,fitted_alpha,
#          prune24_rel_error,prune24_alpha,iterations,restarts,seconds
# Relative error = mean_w E_x ||x w - approx||^2 / mean_w E_x ||x w||^2 (left axis); the
# paper's alpha = the same numerator / 16 is about 4x that (right axis, from the data's
# own ratio of the 2:4 columns).
if (!exists("csv")) csv = 'bench/results/stl-fit-cpu-ci-cpu.csv'
if (!exists("png")) png = csv[1:strlen(csv) - 4] . '.png'

set datafile separator ','
set terminal pngcairo size 900,600 font ',11' noenhanced
set output png
set title 'Strassen-Tile t = 4: single-tile error vs tensor rank r (stl_fit_bench)'
set xlabel 'tensor rank r'
set ylabel 'relative error E||xw - approx||^2 / E||xw||^2'
set logscale y
set format y '%g'
set grid
set key top right
set xrange [15:50]
set xtics 16,4,48
stats csv every ::1 using 7 nooutput name 'alpha24'
stats csv every ::1 using 6 nooutput name 'rel24'
ratio = alpha24_mean / rel24_mean
# The same range on both axes, scaled by alpha / relative error (gnuplot cannot link
# logarithmic axes). r = 49 (exact, error 0) has no place on a log axis.
ymin = 5e-4
ymax = 10
set yrange [ymin:ymax]
set y2label 'paper alpha = E||xw - approx||^2 / 16'
set logscale y2
set y2range [ymin * ratio:ymax * ratio]
set y2tics
set format y2 '%g'
plot csv every ::1 using 1:2 with linespoints lw 2 pt 7 title 'random rank-49 subset (start)', \
     csv every ::1 using 1:3 with linespoints lw 2 pt 5 title 'fitted, 3000 steps, 1 start', \
     csv every ::1 using 1:4 with linespoints lw 2 pt 9 title 'fitted, best of restarts', \
     csv every ::1 using 1:6 with lines lw 2 dt 2 lc rgb 'red' title '2:4 magnitude + LS refit', \
     1 with lines lw 1.5 lc rgb 'black' dt 4 title 'zero approximation (error 1)'
