# SPDX-License-Identifier: MIT
"""The yardstick's kernel-phase figures (test/bench/numa_tiering.py): who
had the guest's CPUs while the kernel ran (numa_sample's cpustat/cputask
lines: the program, the runtime's watcher `tw-room`, the kernel's memory
threads), and a cell made of --repeat runs (the median run by ratio, the
median kernel time, every run kept)."""

from test_yardstick_objects import load

SAMPLES = """\
object ranks 0x1000 4096
sample 0 0.010 start
page 0 ranks 1 0 0
vmstat start pgmigrate_success=10
cpustat start 100 0 50 400 0 0 10 0 0 0
cputask start p 300 pagerank 80 20
cputask start p 301 tw-room 0 5
cputask start p 302 pagerank 70 1
cputask start k 39 kcompactd0 0 2
cputask start k 12 kworker/u8:0-events_unbound 0 13
kernel 2.500
vmstat end pgmigrate_success=30
cpustat end 300 0 150 430 20 0 20 0 0 0
cputask end p 300 pagerank 180 30
cputask end p 301 tw-room 1 84
cputask end p 302 pagerank 170 2
cputask end k 39 kcompactd0 0 52
cputask end k 12 kworker/u8:0-events_unbound 0 14
cputask end k 13 kworker/1:2-mm_percpu_wq 0 3
sample 1 2.510 end
page 1 ranks 1 0 0
exit 0
"""


def test_kernel_cpu_splits_the_program_the_watcher_and_kernel_threads(tmp_path):
    nt = load()
    p = tmp_path / "x.samples"
    p.write_text(SAMPLES)
    sam = nt.parse_samples(p)
    assert sam["kernel_s"] == 2.5
    c = nt.kernel_cpu(sam)
    # /proc/stat: user 200 + system 100 + softirq 10 ticks busy, 30 idle, 20 iowait
    assert c["busy_s"] == 3.1 and c["idle_s"] == 0.3 and c["iowait_s"] == 0.2
    # the program's two threads: 100+10 and 100+1 ticks; the watcher 1+79
    assert round(c["program_s"], 2) == 2.11
    assert round(c["watcher_s"], 2) == 0.80
    # kworkers summed by kind, one seen only at the end counted whole
    assert c["kthreads_s"] == {"kcompactd": 0.5, "kworker": 0.04}


def test_kernel_cpu_is_none_for_a_run_sampled_without_it(tmp_path):
    nt = load()
    p = tmp_path / "old.samples"
    p.write_text("".join(line + "\n" for line in SAMPLES.splitlines()
                         if not line.startswith("cpu")))
    assert nt.kernel_cpu(nt.parse_samples(p)) is None


def test_merge_runs_takes_the_median_run_and_the_median_kernel_time():
    nt = load()
    runs = [{"run": "a", "ratio": 1.30, "oracle": 1.2, "kernel_s": 0.5},
            {"run": "a.run2", "ratio": 1.10, "oracle": 1.1, "kernel_s": 9.0},
            {"run": "a.run3", "ratio": 1.20, "oracle": 1.15, "kernel_s": 0.7},
            {"run": "a.run4", "error": "no result (rc 1)"}]
    cell = nt.merge_runs(runs)
    assert cell["run"] == "a.run3" and cell["ratio"] == 1.20
    assert cell["kernel_s"] == 0.7  # of 0.5, 0.7, 9.0: not the median run's own
    assert [r["run"] for r in cell["runs"]] == ["a", "a.run2", "a.run3", "a.run4"]
    assert cell["runs"][3]["error"] == "no result (rc 1)"
    # an even count: the lower middle; one run: itself, unchanged
    assert nt.merge_runs(runs[:2])["ratio"] == 1.10
    assert nt.merge_runs(runs[:1]) is runs[0]


def test_repetitions_have_their_own_file_names():
    nt = load()
    assert nt.run_name("bfs", "tierwise@6.12", 0) == "bfs.tierwise"
    assert nt.run_name("bfs", "tierwise@6.12", 2) == "bfs.tierwise.run3"


def test_host_other_cpus_is_the_mean_over_the_run(tmp_path):
    nt = load()
    (tmp_path / "timeline").write_text("2.30 booted\n4.29 start bfs.tierwise\n"
                                       "8.10 end bfs.tierwise\n8.20 start sssp.tierwise\n")
    (tmp_path / "host-load").write_text("".join(f"{t}.0 {o} 1.90\n" for t, o in
                                                enumerate([0, 0, 0, 0, 0.2, 1.0, 0.6, 0.2, 0, 3.0])))
    assert round(nt.host_other_cpus(tmp_path, "bfs.tierwise"), 2) == 0.45  # t 5..8
    assert nt.host_other_cpus(tmp_path, "sssp.tierwise") is None  # not ended
    assert nt.host_other_cpus(tmp_path / "nothing", "bfs.tierwise") is None
