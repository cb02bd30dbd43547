# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The PNGs of a bench/run, from the data files the benchmarks wrote.
# bench/run calls:  gnuplot -e "data='DIR'; out='PREFIX'; machine='TEXT'" plots.gp
# Each plot is skipped when its data file is missing (a family not run).

set terminal pngcairo size 1000,600 font "sans,10" noenhanced
set grid
set key top right
set rmargin 4 # room for the last x tic label

have(f) = system("test -s '" . data . "/" . f . "' && echo 1 || echo 0") eq "1"
dat(f) = data . "/" . f

# ---- round trip: p50 / p99 / p99.9 per configuration, log y ----------------------------------
if (have("roundtrip.dat")) {
	set terminal pngcairo size 1200,650 font "sans,10" noenhanced
	set output out . "-roundtrip.png"
	set title "Round trip of one call from the realtime CPU (lower is better)\n" . machine
	set style data histograms
	set style histogram clustered gap 1
	set style fill solid 0.8 border -1
	set boxwidth 0.9
	set logscale y
	set ylabel "ns per call (log)"
	set xtics rotate by -40 left
	set bmargin 11
	plot dat("roundtrip.dat") using 2:xtic(1) title "p50", \
	     "" using 3 title "p99", \
	     "" using 4 title "p99.9"
	unset logscale y
	unset style data
	set xtics norotate
	set bmargin
	set terminal pngcairo size 1000,600 font "sans,10" noenhanced
}
set style data lines

# ---- alloc: malloc+free in a marked thread beside a neighbour hammering malloc and mmap -----
if (have("alloc.dat")) {
	set output out . "-alloc.png"
	set title "malloc+free in a marked thread, another thread hammering malloc/free and mmap/munmap (lower is better)\n" . machine
	set style data histograms
	set style histogram clustered gap 1
	set style fill solid 0.8 border -1
	set boxwidth 0.9
	set logscale y
	set ylabel "ns per malloc+free (log)"
	plot dat("alloc.dat") using 2:xtic(1) title "p50", \
	     "" using 3 title "p99", \
	     "" using 4 title "max"
	unset logscale y
	set style data lines
}

# ---- jitter: OSADL-style latency histograms (1 us bins, log y) ----------------------------------
# Empty bins (written next to every run of full ones) go below the axis: the line drops.
set logscale y
set yrange [0.9:*]
cnt(y) = y > 0 ? y : 0.1
set ylabel "samples (log)"
set xlabel "wake-up latency, us (1 us bins)"
set style fill empty
jcolor(c) = c eq "direct" ? "#d62728" : c eq "offload" ? "#1f77b4" : "#2ca02c"
do for [c in "direct offload ideal"] {
	if (have("jitter-" . c . ".dat")) {
		set output out . "-jitter-" . c . ".png"
		set title "Jitter of a SCHED_FIFO loop on the realtime CPU: " . c . "\n" . machine
		plot dat("jitter-" . c . ".dat") using 1:(cnt($2)) with steps lw 1.5 lc rgb jcolor(c) title c
	}
}

# The overlay needs both regimes on one axis: microseconds (bulk) and milliseconds (outliers).
set logscale x
set xrange [1:*]
set xlabel "wake-up latency, us (1 us bins, log scale)"
if (have("jitter-direct.dat") || have("jitter-offload.dat") || have("jitter-ideal.dat")) {
	set output out . "-jitter-overlay.png"
	set title "Jitter of a SCHED_FIFO loop on the realtime CPU while a thread on it does heavy I/O\n" . machine
	plot for [c in "direct offload ideal"] (have("jitter-" . c . ".dat") ? dat("jitter-" . c . ".dat") : NaN) \
	     using 1:(cnt($2)) with steps lw 1.5 lc rgb jcolor(c) title c
}

if (have("cyclictest-plain.dat")) {
	set output out . "-cyclictest.png"
	set title "cyclictest (rt-tests) alone and under the library (threads marked)\n" . machine
	plot dat("cyclictest-plain.dat") using 1:(cnt($2)) with steps lw 1.5 lc rgb "#2ca02c" title "plain", \
	     (have("cyclictest-library.dat") ? dat("cyclictest-library.dat") : NaN) using 1:(cnt($2)) \
	     with steps lw 1.5 lc rgb "#1f77b4" title "library"
}
unset logscale x
unset xrange
unset yrange

# ---- scale -------------------------------------------------------------------------------------
if (have("scale-throughput.dat")) {
	set output out . "-scale-throughput.png"
	set title "Offloaded write()s per second: N marked threads, W workers\n" . machine
	unset logscale y
	set logscale x 2
	set xlabel "marked threads (N)"
	set ylabel "calls / s"
	set yrange [0:*]
	plot for [w=2:4] dat("scale-throughput.dat") using 1:w with linespoints lw 2 \
	     title sprintf("W=%d", w == 2 ? 1 : w == 3 ? 2 : 4)
	unset logscale x
	unset yrange
}

if (have("scale-blocking-w1.dat")) {
	set output out . "-scale-blocking.png"
	set title "Other threads' calls while one thread's offloaded read() waits 100 ms\n" . machine
	set logscale y
	set xlabel "time since start, ms"
	set ylabel "round trip of each write(), us (log)"
	set arrow 1 from graph 0, first 100000 to graph 1, first 100000 nohead dt 3 lc rgb "gray40"
	set label 1 "100 ms: the read's wait" at graph 0.01, first 140000 tc rgb "gray40"
	plot dat("scale-blocking-w1.dat") using 1:2 with points pt 7 ps 0.5 lc rgb "#d62728" \
	     title "workers=1 (the calls queued behind the read wait as long as it does)", \
	     (have("scale-blocking-w2.dat") ? dat("scale-blocking-w2.dat") : NaN) using 1:2 \
	     with points pt 7 ps 0.5 lc rgb "#1f77b4" title "workers=2"
	unset arrow 1
	unset label 1
	unset logscale y
}

# Two panels over the same x: what the helpers burn, and what a call costs for it.
if (have("scale-helper-cpu.dat")) {
	set output out . "-scale-helper-cpu.png"
	set terminal pngcairo size 1150,800 font "sans,10" noenhanced
	set multiplot layout 2,1 title "The helper_idle_us trade-off: CPU burned vs round trip\n" . machine
	unset title
	set logscale x 10
	set xrange [0.7:15000]
	set key outside right top
	set lmargin at screen 0.07
	set rmargin at screen 0.78 # the same plot width in both panels, whatever the keys
	unset logscale y
	set yrange [0:105]
	set xlabel ""
	set ylabel "helpers' CPU, % of one CPU"
	plot dat("scale-helper-cpu.dat") using 1:2 with linespoints lw 2 title "idle (no calls)", \
	     "" using 1:3 with linespoints lw 2 title "1 call / 1 ms", \
	     "" using 1:4 with linespoints lw 2 title "1 call / 100 us"
	set logscale y
	set yrange [*:*]
	set xlabel "helper_idle_us (log; 0 plotted at 1)"
	set ylabel "round trip, us (log)"
	plot dat("scale-helper-cpu.dat") using 1:5 with linespoints lw 2 lc 2 title "p50, 1 call / 1 ms", \
	     "" using 1:6 with linespoints lw 1 dt 2 lc 2 title "p99, 1 call / 1 ms", \
	     "" using 1:7 with linespoints lw 2 lc 3 title "p50, 1 call / 100 us", \
	     "" using 1:8 with linespoints lw 1 dt 2 lc 3 title "p99, 1 call / 100 us"
	unset multiplot
	set lmargin
	set rmargin
}

# ---- periodic loops: helpers' CPU and round trip, per loop and helper configuration ------------
if (have("periodic.dat")) {
	set output out . "-periodic.png"
	set terminal pngcairo size 1150,850 font "sans,10" noenhanced
	set multiplot layout 2,1 title "Periodic loops: helper_wake=predict against always polling, idle and sleeping at once\n" . machine
	unset title
	set style data histograms
	set style histogram clustered gap 1
	set style fill solid 0.8 border -1
	set boxwidth 0.9
	set key outside right top
	set lmargin at screen 0.07
	set rmargin at screen 0.80
	unset logscale y
	set yrange [0:105]
	set ylabel "helpers' CPU, % of one CPU"
	set xlabel ""
	set xtics rotate by -20 left
	plot dat("periodic.dat") using 4:xtic(1) title "defaults (predict)", \
	     "" using 7 title "always polling", \
	     "" using 10 title "helper_wake=idle", \
	     "" using 13 title "helper_idle_us=0"
	set logscale y
	set yrange [*:*]
	set ylabel "round trip, us (log)"
	plot dat("periodic.dat") using 2:xtic(1) title "p50 defaults" lc 1, \
	     "" using 3 title "p99 defaults" lc 1 fs pattern 4, \
	     "" using 5 title "p50 polling" lc 2, \
	     "" using 6 title "p99 polling" lc 2 fs pattern 4, \
	     "" using 8 title "p50 idle" lc 4, \
	     "" using 9 title "p99 idle" lc 4 fs pattern 4, \
	     "" using 11 title "p50 idle_us=0" lc 3, \
	     "" using 12 title "p99 idle_us=0" lc 3 fs pattern 4
	unset multiplot
	unset logscale y
	set style data lines
	set style fill empty
	set xtics norotate
	set lmargin
	set rmargin
	set terminal pngcairo size 1000,600 font "sans,10" noenhanced
}
