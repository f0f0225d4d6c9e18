"""The profiler and triage thresholds, in one place, with where each number comes from.

The article is `source-article-zh.txt` (the practitioner's article whose practices are the spec);
MindInsight's numbers are from its profiler analysers (mindinsight/profiler/analyser/*).
"""

from __future__ import annotations

# "通信占比超过总耗时 25% 就要重点关注" (§2.1 table), "通信耗时占比超过 25%" (§5.3).
COMM_SHARE = 0.25
# "数据预处理耗时占了总 step 耗时的三成以上" (§4.3): a data wait this large decides the verdict.
DATA_STRONG = 0.30
# A smaller data wait still counts as data-bound when nothing else dominates (our choice: a
# tenth of the step is the iteration gap worth a first look in MindInsight's step trace view).
DATA_NOTABLE = 0.10
# "流水线气泡会变得很大，性能损耗甚至能达到三成以上" when micro-batches < stages (§3.3).
BUBBLE = 0.30
# "显存接近上限" (§3.1): peak memory within 10 % of the device's (our reading of "near").
MEMORY_NEAR = 0.90
# "计算单元忙得很满" (§3.1): compute at 70 % of the step or more.
COMPUTE_BUSY = 0.70
# Device idle (neither computing nor communicating) worth a host-side look: the same quarter as
# communication (our choice; the article names the host overheads in §2.1 without a number).
IDLE = 0.25
# MindInsight MinddataAnalyser.DEVICE_QUEUE_EMPTY_WARNING_THRESHOLD: the device queue empty for
# more than 30 % of the batches means the data pipeline is too slow.
QUEUE_EMPTY = 0.30
# MindInsight MinddataPipelineProposer thresholds [0.8, 0.6] and its 0.1 producer-consumer gap.
QUEUE_HIGH = 0.80
QUEUE_LOW = 0.60
QUEUE_GAP = 0.10
# Communication kernels taking this share of all device kernel time (same quarter as above).
COMM_KERNELS = 0.25

# A profiled step this many times its rank's median (and at least OUTLIER_MIN_S longer) is a
# warm-up or first step: left out of the breakdown, listed.
OUTLIER_RATIO = 2.0
OUTLIER_MIN_S = 0.001
# Straggler rule: a rank is awaited when its wait share is within max(STRAGGLER_ABS,
# STRAGGLER_REL x the least) of the least-waiting rank, and ranks that wait at least
# STRAGGLER_GAP (of their step) more than that exist.
STRAGGLER_ABS = 0.02
STRAGGLER_REL = 0.25
STRAGGLER_GAP = 0.10
# Ranks whose Receive ops are in flight at least this share of the step wait for another
# pipeline stage.
PIPELINE_RECEIVE = 0.50

# Slow links (analysis/links.py). msprof-analyze's packet rule (advisor/rules/{en,cn}/packet.yaml:
# min_sdma_size 16, min_rdma_size 1, in its MB of 10^6 bytes): an on-chip-SDMA transfer (HCCS,
# PCIE, SIO) under 16 MB, an RDMA one under 1 MB, is a small packet: its time is latency and
# dispatch, and its bytes / time says nothing about the link's bandwidth.
LINK_MIN_BYTES = 16e6
LINK_MIN_BYTES_RDMA = 1e6
# msprof-analyze's bandwidth contention rule (bandwidth_contention.yaml: threshold 0.8 of the
# SDMA baseline): a link under 80 % of the median of its peers (the same transport and group) is slow.
SLOW_LINK_RATIO = 0.8
# Peers a median needs to tell which link is the slow one (of two, either could be).
SLOW_LINK_PEERS = 3

TOP_N = 10  # operators and communication types listed
