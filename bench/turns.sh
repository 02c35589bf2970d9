# Sourced by the bench scripts that run two programs in turns.
# rate: the samples/s figure of a sample's summary line, from stdin.
rate() { sed -n 's/.* \([0-9.]*\) samples\/s.*/\1/p' | head -1; }
# steal BEFORE AFTER: the share of CPU time the hypervisor stole between two
# "cpu" lines of /proc/stat (fields: user nice system idle iowait irq
# softirq steal), since a virtual machine's neighbours move absolute rates.
steal() {
  awk -v a="$1" -v b="$2" 'BEGIN { split(a, x); split(b, y); t = 0
    for (i = 2; i <= 9; i++) t += y[i] - x[i]
    printf "%.0f%%", (t > 0 ? 100 * (y[9] - x[9]) / t : 0) }'
}
# median: the median of the numbers on stdin (spaces or lines; "-" and empty
# ones left out), "-" when there are none.
median() { tr ' ' '\n' | grep -v '^-\?$' | sort -g | awk '{ v[NR] = $1 } END {
  print NR == 0 ? "-" : NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
