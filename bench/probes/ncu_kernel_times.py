#!/usr/bin/env python3
"""Each kernel's duration from an ncu CSV (`ncu --metrics gpu__time_duration.sum --csv ...`),
one line per launch in launch order: microseconds, then the kernel's name.

    python3 bench/probes/ncu_kernel_times.py stages.csv > stages.txt
"""
import csv
import sys

rows = [r for r in csv.reader(l for l in open(sys.argv[1]) if l.startswith('"'))]
header = rows[0]
name, value = header.index("Kernel Name"), header.index("Metric Value")
for r in rows[1:]:
    print(f"{float(r[value].replace(',', '')) / 1000:9.1f} us  {r[name][:90]}")
