"""Templates of the slow links (analysis/links.py: per-link bandwidth against its peers), in
English and Chinese: the rule, why no link can be judged, the finding, the verdict's lines, the
first move and the report's table. 链路 / 带宽 / 小包 as msprof-analyze's Chinese docs write them."""

from __future__ import annotations

TEMPLATES: dict[str, tuple[str, str]] = {
    "rule.slow-links": ("a link is slow when its bandwidth (bytes / transfer time of its transfers of at least {sdma:numi} MB "
                        "(1 MB = 10⁶ bytes) over HCCS / PCIE / SIO, {rdma:numi} MB over RDMA: smaller ones are latency-bound small packets, "
                        "msprof-analyze's packet rule) is below {ratio:pct0} of the median of its peers — the links of the "
                        "same transport and group, at least {peers:int} of them",
                        "链路带宽（按 HCCS / PCIE / SIO 上不小于 {sdma:numi} MB（1 MB = 10⁶ 字节）、RDMA 上不小于 {rdma:numi} MB 的传输计算：更小的是"
                        "时延主导的小包，沿用 msprof-analyze 的小包规则）低于同类链路（相同链路类型与通信域，至少 {peers:int} 条）"
                        "带宽中位数的 {ratio:pct0} 时判为慢链路"),
    "links.latency-bound": ("No link's bandwidth can be judged: all {n:int} transfer records are latency-bound small packets "
                            "— the largest moves {largest:bytes} over {transport}, below the {least:numi} MB a transfer needs "
                            "to measure bandwidth.",
                            "无法判断链路带宽：全部 {n:int} 条传输记录都是时延主导的小包——最大一次在 {transport} 上只传输 "
                            "{largest:bytes}，不足测量带宽所需的 {least:numi} MB。"),
    "links.no-records": ("No link's bandwidth can be judged: no communication record gives the bytes and transfer time of a "
                         "transfer between two ranks (only operator times, or on-chip copies).",
                         "无法判断链路带宽：没有任何通信记录给出 rank 之间传输的数据量与传输时间（只有算子耗时，或只有片内拷贝）。"),
    "links.too-few": ("No link's bandwidth can be judged: {n:int} links moved transfers big enough to measure, at most "
                      "{most:int} of one transport and group, and a median of peers needs {peers:int}.",
                      "无法判断链路带宽：有足够大传输的链路共 {n:int} 条，同一链路类型与通信域内最多 {most:int} 条，"
                      "而同类比较至少需要 {peers:int} 条。"),
    "finding.slow_links": ("Slow links: {n:int} of {of:int} below their peers' bandwidth; the slowest, {src:int}→{dst:int} "
                           "({transport}), moves {bw:num} GB/s against {ref:num} GB/s ({ratio:pct0}).",
                           "慢链路：{of:int} 条中有 {n:int} 条带宽低于同类链路；最慢的 {src:int}→{dst:int}（{transport}）"
                           "带宽 {bw:num} GB/s，同类中位数 {ref:num} GB/s（{ratio:pct0}）。"),
    "finding.slow_links/rank": ("Slow links: {n:int} of {of:int} ranks' transfers below their peers' bandwidth; the slowest, "
                                "rank {src:int} over {transport}, moves {bw:num} GB/s against {ref:num} GB/s ({ratio:pct0}).",
                                "慢链路：{of:int} 张卡中有 {n:int} 张的传输带宽低于同类；最慢的是 rank {src:int} 的 "
                                "{transport} 传输，带宽 {bw:num} GB/s，同类中位数 {ref:num} GB/s（{ratio:pct0}）。"),
    "verdict.title.slow_links": ("slow links", "慢链路"),
    "verdict.slow-link": ("Link {src:int}→{dst:int} ({transport}) moves {bw:num} GB/s, {ratio:pct0} of the median "
                          "{ref:num} GB/s of its {peers:int} peers ({bytes:bytes} in {transfers:int|transfer|transfers})",
                          "链路 {src:int}→{dst:int}（{transport}）带宽 {bw:num} GB/s，仅为同类 {peers:int} 条链路中位数 "
                          "{ref:num} GB/s 的 {ratio:pct0}（{transfers:int} 次传输共 {bytes:bytes}）"),
    "verdict.slow-link/rank": ("Rank {src:int}'s {transport} transfers move {bw:num} GB/s, {ratio:pct0} of the median "
                               "{ref:num} GB/s of its {peers:int} peers ({bytes:bytes} in {transfers:int|transfer|transfers})",
                               "rank {src:int} 的 {transport} 传输带宽 {bw:num} GB/s，仅为同类 {peers:int} 张卡中位数 "
                               "{ref:num} GB/s 的 {ratio:pct0}（{transfers:int} 次传输共 {bytes:bytes}）"),
    "verdict.slow-links.more": ("and {n:int|more slow link|more slow links}", "另有 {n:int} 条慢链路"),
    "action.check_link": ("Check the slow link itself: its port and link state (hccn_tool), the cabling and the switch, and "
                          "other traffic sharing it; then profile again.",
                          "检查慢链路本身：端口与链路状态（hccn_tool）、线缆与交换机、是否有其他流量共用该链路；之后重新采集 Profiler。"),
    # the report's table (report/sections/profile.py)
    "links.title": ("Link bandwidth against its peers", "链路带宽与同类对比"),
    "links.col.link": ("Link", "链路"),
    "links.col.rank": ("Rank", "rank"),
    "links.col.transport": ("Transport", "链路类型"),
    "links.col.bandwidth": ("Bandwidth", "带宽"),
    "links.col.peers": ("Peers' median", "同类中位数"),
    "links.col.ratio": ("Of the median", "占中位数"),
    "links.col.bytes": ("Bytes", "数据量"),
    "links.col.transfers": ("Transfers", "传输次数"),
    "links.slow": ("slow", "慢"),
    "links.note": ("{measured:int} transfer records big enough to measure bandwidth ({small:int} latency-bound left out), "
                   "from {source}. Rule: {rule}.",
                   "可测带宽的传输记录 {measured:int} 条（另有 {small:int} 条时延主导的小包未计），来自 {source}。规则：{rule}。"),
    "links.none-slow": ("No link is slow: every judged link moves at least {ratio:pct0} of its peers' median bandwidth.",
                        "没有慢链路：所有参与判断的链路带宽都不低于同类中位数的 {ratio:pct0}。"),
}
